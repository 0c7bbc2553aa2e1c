package dev.strata.cache.support.writeback;

import dev.strata.cache.support.buffer.Buffers;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Writes one batch of dirty blocks to the backing device: sorted by backing offset, adjacent full
 * blocks merged into one write of up to {@code maxRunBlocks}, partial blocks (sector valid bits)
 * written as one write per run of valid sectors. The caller has read the blocks' data into one
 * buffer, entry {@code i} at {@code i * blockSize}.
 *
 * <p>Sorting packs (backing block, entry index) into one {@code long} so that a primitive sort
 * does it without an object per block: the index takes just as many low bits as the batch size
 * needs, and a block number that does not fit the remaining bits is refused (an explicit check,
 * not a cap elsewhere that happens to keep it correct). Arrays are kept between batches and grown
 * when needed: no allocation per batch once warm. One instance per writeback task (not
 * thread-safe).
 */
public final class WritebackBatcher {
    /** Where the batch goes: the backing device. */
    @FunctionalInterface
    public interface Backing {
        void write(long offset, ByteBuffer src) throws IOException;
    }

    private static final int SECTOR = 512;
    private final int blockSize;
    private final int sectors;
    private final int full;
    private final int maxRun;
    private final boolean sorted;
    private final ByteBuffer stage;
    private long[] order = new long[0];

    /**
     * @param blockSize    the cache block size (512 to 8192, a power of two)
     * @param maxRunBlocks most blocks merged into one write
     * @param sorted       sort and merge (false: write in batch order, one write per sector run;
     *                     the benchmark's baseline)
     */
    public WritebackBatcher(int blockSize, int maxRunBlocks, boolean sorted) {
        if (blockSize < SECTOR || blockSize > 8192 || Integer.bitCount(blockSize) != 1) {
            throw new IllegalArgumentException("block size " + blockSize + " is not a power of two from 512 to 8192");
        }
        if (maxRunBlocks < 1 || (long) maxRunBlocks * blockSize > 64 << 20) {
            throw new IllegalArgumentException("maxRunBlocks " + maxRunBlocks + " is not 1 to " + (64 << 20) / blockSize);
        }
        this.blockSize = blockSize;
        this.sectors = blockSize / SECTOR;
        this.full = (1 << sectors) - 1;
        this.maxRun = maxRunBlocks;
        this.sorted = sorted;
        this.stage = sorted ? Buffers.aligned(maxRunBlocks * blockSize) : null;
    }

    /** The valid bits of a block all of whose sectors are valid. */
    public int fullMask() {
        return full;
    }

    /** Bits of the sort key the entry index takes for a batch of {@code count} entries. */
    static int indexBits(int count) {
        return count <= 1 ? 1 : 32 - Integer.numberOfLeadingZeros(count - 1);
    }

    /** The largest backing block number a batch of {@code count} entries can sort. */
    public static long maxBlock(int count) {
        return Long.MAX_VALUE >>> indexBits(count);
    }

    /**
     * Writes entries {@code [0, count)}; an entry with {@code valid == 0} is skipped (no longer
     * dirty). Returns how many writes were issued.
     *
     * @throws IllegalArgumentException a block number outside {@code [0, maxBlock(count)]}
     * @throws IOException              the backing device failed (some writes may have been issued)
     */
    public int write(int count, long[] blocks, int[] valid, ByteBuffer data, Backing backing) throws IOException {
        if (order.length < count) {
            order = new long[Math.max(count, 64)];
        }
        int shift = indexBits(count);
        long max = maxBlock(count);
        for (int k = 0; k < count; k++) {
            if (blocks[k] < 0 || blocks[k] > max) {
                throw new IllegalArgumentException("backing block " + blocks[k] + " cannot be sorted in a batch of "
                        + count + " (at most " + max + ")");
            }
            order[k] = sorted ? (blocks[k] << shift) | k : k;
        }
        if (sorted) {
            Arrays.sort(order, 0, count);
        }
        long mask = (1L << shift) - 1;
        int writes = 0;
        int k = 0;
        while (k < count) {
            int idx = (int) (order[k] & mask);
            if (valid[idx] == 0) {
                k++;
                continue;
            }
            if (valid[idx] != full || !sorted) {
                writes += writeSectors(blocks[idx], valid[idx], data, idx, backing);
                k++;
                continue;
            }
            int run = 1;
            while (k + run < count && run < maxRun) {
                int nx = (int) (order[k + run] & mask);
                if (blocks[nx] != blocks[idx] + run || valid[nx] != full) {
                    break;
                }
                run++;
            }
            long at = blocks[idx] * blockSize;
            if (run == 1) {
                backing.write(at, data.duplicate().limit((idx + 1) * blockSize).position(idx * blockSize));
            } else {
                for (int r = 0; r < run; r++) {
                    int nx = (int) (order[k + r] & mask);
                    stage.put(r * blockSize, data, nx * blockSize, blockSize);
                }
                backing.write(at, stage.duplicate().position(0).limit(run * blockSize));
            }
            writes++;
            k += run;
        }
        return writes;
    }

    /** One write per run of consecutive valid sectors of entry {@code idx}. */
    private int writeSectors(long block, int bits, ByteBuffer data, int idx, Backing backing) throws IOException {
        int writes = 0;
        int base = idx * blockSize;
        int s = 0;
        while (s < sectors) {
            if ((bits & (1 << s)) == 0) {
                s++;
                continue;
            }
            int e = s;
            while (e + 1 < sectors && (bits & (1 << (e + 1))) != 0) {
                e++;
            }
            backing.write(block * blockSize + (long) s * SECTOR,
                    data.duplicate().limit(base + (e + 1) * SECTOR).position(base + s * SECTOR));
            writes++;
            s = e + 1;
        }
        return writes;
    }
}
