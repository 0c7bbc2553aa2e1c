package dev.strata.testsupport.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.strata.api.BlockDevice;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The {@link BlockDevice} contract (DESIGN.md §2) as a reusable JUnit 5 suite. Every target runs it:
 *
 * <pre>{@code
 * class FileTargetContractTest extends BlockDeviceContract {
 *     @TempDir Path dir;
 *     @Override protected BlockDevice newDevice(long size) throws Exception {
 *         return FileTarget.open(dir.resolve("disk.img"), size, true);
 *     }
 * }
 * }</pre>
 *
 * Each test gets a fresh device from {@link #newDevice(long)} (of {@link #deviceSize()} bytes,
 * never written before: it must read as zeroes) and closes it afterwards with
 * {@link #closeDevice(BlockDevice)} (override it to also release lower devices or files). The
 * suite covers read-your-writes at many offsets and sizes, zeroes for unwritten areas, the last
 * block, rejection of out-of-range and misaligned requests with nothing changed, flush and FUA,
 * writeZeroes (with NO_HOLE, FUA and FAST_ZERO), discard, extents, concurrent writers to disjoint
 * ranges (including different sectors of the same 4 KiB block) and to overlapping ranges (no torn
 * sectors), and ByteBuffer handling (positions, heap/direct, array offsets, read-only sources,
 * unaligned direct addresses). A run takes a few seconds per target.
 *
 * <p>The helpers ({@link #pattern}, {@link #readBytes}, {@link #writeBytes}) are protected so a
 * subclass can add target-specific tests in the same style.
 *
 * <p>The suite is kept in parts by subject: {@link ContractFixture} (device, model, helpers),
 * {@link ReadWriteContract}, {@link FlushZeroesDiscardContract} and, here, concurrent writers.
 */
public abstract class BlockDeviceContract extends FlushZeroesDiscardContract {
    // ------------------------------------------------------------------ concurrency

    @Test
    void concurrentWritersToDisjointRegionsAllLand() throws Exception {
        int threads = writerThreads();
        long size = device.size();
        long region = alignDown(size / threads) & ~4095L;
        runConcurrently(threads, t -> {
            SplittableRandom rnd = new SplittableRandom(1000 + t);
            long base = region * t;
            long written = 0;
            int i = 0;
            while (written < region * 2) {
                int len = (int) Math.min(region, (1 + rnd.nextInt(rnd.nextBoolean() ? 8 : 512)) * (long) SECTOR);
                long off = base + alignDown(rnd.nextLong(region - len + 1));
                int op = rnd.nextInt(10);
                if (op == 0) {
                    device.writeZeroes(off, len, rnd.nextBoolean() ? BlockDevice.NO_HOLE : 0);
                    synchronized (model) {
                        Arrays.fill(model, (int) off, (int) off + len, (byte) 0);
                    }
                } else {
                    byte[] data = pattern(t * 100_000L + i, len);
                    device.write(off, ByteBuffer.wrap(data), op == 1 ? BlockDevice.FUA : 0);
                    synchronized (model) {
                        System.arraycopy(data, 0, model, (int) off, len);
                    }
                    if (op == 2) {
                        device.flush();
                    }
                }
                written += len;
                i++;
            }
            return null;
        });
        verifyAgainstModel();
    }

    /**
     * Writers own interleaved sectors: writer t writes the 512-byte sectors s with
     * {@code s % threads == t}, so every 4 KiB block is written by several threads at once. A
     * device that read-modify-writes larger blocks must not lose its neighbours' sectors.
     */
    @Test
    void concurrentWritersToDifferentSectorsOfTheSameBlockAllLand() throws Exception {
        int threads = writerThreads();
        int sectors = MIB / SECTOR;
        long base = 4096L * 5;
        runConcurrently(threads, t -> {
            ByteBuffer buf = (t & 1) == 0 ? ByteBuffer.allocate(SECTOR) : ByteBuffer.allocateDirect(SECTOR);
            for (int s = t; s < sectors; s += threads) {
                long off = base + (long) s * SECTOR;
                byte[] data = pattern(off * 7, SECTOR);
                buf.clear();
                buf.put(data).flip();
                device.write(off, buf, 0);
                synchronized (model) {
                    System.arraycopy(data, 0, model, (int) off, SECTOR);
                }
            }
            return null;
        });
        // the same with 1 KiB writes at odd sector offsets: writer t owns sectors pairs 2k+1, 2k+2
        runConcurrently(threads, t -> {
            for (int k = t; k < sectors / 2 - 1; k += threads) {
                long off = base + (long) (2 * k + 1) * SECTOR;
                byte[] data = pattern(off * 13, 2 * SECTOR);
                device.write(off, ByteBuffer.wrap(data), (k & 7) == 0 ? BlockDevice.FUA : 0);
                synchronized (model) {
                    System.arraycopy(data, 0, model, (int) off, 2 * SECTOR);
                }
            }
            return null;
        });
        verifyAgainstModel();
    }

    /**
     * Writers overwrite one shared region with requests of random sizes and offsets (and some
     * writeZeroes). Afterwards every sector must hold, whole, the data one of the writes put
     * there, or zeroes: no torn sectors, no data from elsewhere.
     */
    @Test
    void concurrentWritersToOverlappingRangesLeaveWholeSectors() throws Exception {
        int threads = writerThreads();
        long base = MIB + 3 * SECTOR;
        int regionSectors = 1024; // 512 KiB
        int writesPerThread = 24;
        runConcurrently(threads, t -> {
            SplittableRandom rnd = new SplittableRandom(2000 + t);
            for (int k = 0; k < writesPerThread; k++) {
                int n = 1 + rnd.nextInt(rnd.nextBoolean() ? 16 : 400);
                int first = rnd.nextInt(regionSectors - n + 1);
                if (rnd.nextInt(6) == 0) { // zeroes are a valid outcome for any sector too
                    device.writeZeroes(base + (long) first * SECTOR, (long) n * SECTOR, 0);
                    continue;
                }
                byte[] data = new byte[n * SECTOR];
                for (int s = 0; s < n; s++) {
                    taggedSector(data, s * SECTOR, t, k, first + s);
                }
                ByteBuffer src = (k & 1) == 0 ? ByteBuffer.wrap(data) : ByteBuffer.allocateDirect(data.length).put(data).flip();
                device.write(base + (long) first * SECTOR, src, 0);
                assertEquals(0, src.remaining());
            }
            return null;
        });
        byte[] got = readBytes(base, regionSectors * SECTOR);
        byte[] expect = new byte[SECTOR];
        for (int s = 0; s < regionSectors; s++) {
            int from = s * SECTOR;
            if (isZero(got, from, SECTOR)) {
                continue;
            }
            ByteBuffer b = ByteBuffer.wrap(got, from, SECTOR);
            int writer = b.getInt();
            int write = b.getInt();
            int sector = b.getInt();
            assertEquals(s, sector, "sector " + s + " holds data written for sector " + sector);
            assertTrue(writer >= 0 && writer < threads && write >= 0 && write < writesPerThread,
                    "sector " + s + " holds data no writer wrote");
            taggedSector(expect, 0, writer, write, s);
            assertTrue(Arrays.equals(expect, 0, SECTOR, got, from, from + SECTOR), "sector " + s + " is torn");
        }
        // the region outside was not touched
        assertAllZero(readBytes(base - 4096, 4096), base - 4096);
        assertAllZero(readBytes(base + regionSectors * SECTOR, 4096), base + regionSectors * SECTOR);
    }

    /**
     * All writers write the same 128 sectors (64 KiB) (at an odd sector offset) at the same moment, round
     * after round; after each round every sector must be whole: one writer's data for this round.
     */
    @Test
    void simultaneousWritersOfTheSameSectorsLeaveWholeSectors() throws Exception {
        int threads = writerThreads();
        int sectors = 128;
        int rounds = 150;
        long base = 2L * MIB + 5 * SECTOR;
        CyclicBarrier barrier = new CyclicBarrier(threads);
        runConcurrently(threads, t -> {
            byte[] data = new byte[sectors * SECTOR];
            ByteBuffer direct = ByteBuffer.allocateDirect(data.length);
            byte[] expect = new byte[SECTOR];
            for (int r = 0; r < rounds; r++) {
                for (int s = 0; s < sectors; s++) {
                    taggedSector(data, s * SECTOR, t, r, s);
                }
                ByteBuffer src = (t & 1) == 0 ? ByteBuffer.wrap(data) : direct.clear().put(data).flip();
                barrier.await(30, TimeUnit.SECONDS);
                device.write(base, src, 0);
                barrier.await(30, TimeUnit.SECONDS);
                if (t == 0) {
                    byte[] got = readBytes(base, sectors * SECTOR);
                    for (int s = 0; s < sectors; s++) {
                        ByteBuffer b = ByteBuffer.wrap(got, s * SECTOR, SECTOR);
                        int writer = b.getInt();
                        int write = b.getInt();
                        int sector = b.getInt();
                        if (writer < 0 || writer >= threads || write != r || sector != s) {
                            fail("round " + r + ": sector " + s + " holds data no writer of this round wrote there");
                        }
                        taggedSector(expect, 0, writer, r, s);
                        if (!Arrays.equals(expect, 0, SECTOR, got, s * SECTOR, (s + 1) * SECTOR)) {
                            fail("round " + r + ": sector " + s + " is torn");
                        }
                    }
                }
            }
            return null;
        });
    }

    private static void taggedSector(byte[] into, int at, int writer, int write, int sector) {
        ByteBuffer b = ByteBuffer.wrap(into, at, SECTOR);
        b.putInt(writer).putInt(write).putInt(sector);
        long x = mix(((long) writer << 40) ^ ((long) write << 20) ^ sector);
        while (b.remaining() >= 8) {
            x = mix(x);
            b.putLong(x);
        }
    }

}
