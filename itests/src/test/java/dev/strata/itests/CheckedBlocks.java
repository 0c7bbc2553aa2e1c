package dev.strata.itests;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;

import dev.strata.api.DeviceHandle;

/**
 * One I/O thread's disjoint region of a device, used by the hot-update and restart tests: writes 4 KiB
 * blocks whose content derives from (region, block, generation) and carries a CRC32C, reads random
 * blocks back and compares them with the last generation written. Remembers the last generation of
 * every block, so the whole region can be verified afterwards — through a device or directly in a
 * file that should hold the data (e.g. a cache's backing file after writeback).
 */
final class CheckedBlocks implements Runnable {
    static final int BLOCK = 4096;

    private final int id;
    private final int blocks;
    private final long base;
    private volatile DeviceHandle device;
    private final AtomicBoolean stop;
    private final AtomicLong ops;
    private final AtomicLong mismatches;
    private final ConcurrentLinkedQueue<Throwable> errors;
    private final CountDownLatch finished;
    /** Generation last written per block; 0 = never written (reads zeroes). */
    private final int[] generation;
    private final ByteBuffer out = ByteBuffer.allocateDirect(BLOCK);
    private final ByteBuffer in = ByteBuffer.allocateDirect(BLOCK);
    private final ByteBuffer expected = ByteBuffer.allocate(BLOCK);

    /** Region {@code id} = blocks [id * blocks, (id + 1) * blocks) of the device. */
    CheckedBlocks(int id, int blocks, DeviceHandle device, AtomicBoolean stop, AtomicLong ops, AtomicLong mismatches,
            ConcurrentLinkedQueue<Throwable> errors, CountDownLatch finished) {
        this.id = id;
        this.blocks = blocks;
        this.base = (long) id * blocks * BLOCK;
        this.device = device;
        this.stop = stop;
        this.ops = ops;
        this.mismatches = mismatches;
        this.errors = errors;
        this.finished = finished;
        this.generation = new int[blocks];
    }

    /** Switches to another handle (e.g. in a new framework after a restart); only while not running. */
    void use(DeviceHandle handle) {
        this.device = handle;
    }

    @Override
    public void run() {
        SplittableRandom random = new SplittableRandom(id * 7919L + 17);
        try {
            while (!stop.get()) {
                step(random);
            }
        } catch (Throwable t) {
            errors.add(t);
        } finally {
            finished.countDown();
        }
    }

    /** One random write, an occasional flush, one random read-back check. */
    void step(SplittableRandom random) throws Exception {
        writeNext(random.nextInt(blocks));
        if (random.nextInt(16) == 0) {
            device.flush();
        }
        check(random.nextInt(blocks));
        ops.incrementAndGet();
    }

    /** Writes the next generation of {@code block}. */
    void writeNext(int block) throws Exception {
        int gen = generation[block] + 1;
        fill(out, block, gen);
        device.write(offset(block), out, 0);
        generation[block] = gen;
        ops.incrementAndGet();
    }

    int written() {
        int n = 0;
        for (int g : generation) {
            if (g != 0) {
                n++;
            }
        }
        return n;
    }

    /** Reads every block of the region through the device; returns the number of mismatches. */
    long verifyAll() throws Exception {
        long bad = 0;
        for (int b = 0; b < blocks; b++) {
            if (!check(b)) {
                bad++;
            }
        }
        return bad;
    }

    /**
     * Reads every written block of the region from {@code file} at {@code fileOffset + device offset}
     * (a leaf file device's image); returns the number of mismatches.
     */
    long verifyFile(Path file) throws Exception {
        long bad = 0;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            for (int b = 0; b < blocks; b++) {
                if (generation[b] == 0) {
                    continue;
                }
                in.clear();
                while (in.hasRemaining()) {
                    if (ch.read(in, offset(b) + in.position()) < 0) {
                        break;
                    }
                }
                in.flip();
                fill(expected, b, generation[b]);
                if (!in.equals(expected)) {
                    bad++;
                }
            }
        }
        return bad;
    }

    private boolean check(int block) throws Exception {
        in.clear();
        device.read(offset(block), in);
        in.flip();
        expected.clear();
        if (generation[block] == 0) {
            expected.put(new byte[BLOCK]);
            expected.flip();
        } else {
            fill(expected, block, generation[block]);
        }
        boolean ok = in.equals(expected) && (generation[block] == 0 || crcOk(in));
        if (!ok) {
            mismatches.incrementAndGet();
        }
        return ok;
    }

    private long offset(int block) {
        return base + (long) block * BLOCK;
    }

    /** [id][block][generation][pseudo-random payload …][crc32c of everything before]. */
    private void fill(ByteBuffer b, int block, int gen) {
        b.clear();
        b.putInt(id).putInt(block).putInt(gen);
        long x = ((long) id << 40) ^ ((long) block << 20) ^ gen;
        while (b.remaining() > 4) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            b.putInt((int) (x >>> 32));
        }
        CRC32C crc = new CRC32C();
        ByteBuffer head = b.duplicate();
        head.flip();
        crc.update(head);
        b.putInt((int) crc.getValue());
        b.flip();
    }

    private static boolean crcOk(ByteBuffer b) {
        ByteBuffer head = b.duplicate();
        head.position(0).limit(BLOCK - 4);
        CRC32C crc = new CRC32C();
        crc.update(head);
        return b.getInt(BLOCK - 4) == (int) crc.getValue();
    }
}
