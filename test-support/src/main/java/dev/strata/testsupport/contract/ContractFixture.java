package dev.strata.testsupport.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import dev.strata.api.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;

/**
 * The fixture under every part of {@link BlockDeviceContract}: a fresh device per test, the
 * reference model of what it must contain, and the helpers the parts (and target-specific
 * subclasses) share. The contract is split into parts by subject only to keep each file to one
 * job; a target test extends {@link BlockDeviceContract}, never a part.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class ContractFixture {
    protected static final int SECTOR = BlockDevice.SECTOR;
    protected static final int KIB = 1024;
    protected static final int MIB = 1024 * 1024;

    /** The device under test, fresh for each test. */
    protected BlockDevice device;

    /** What the device must contain (the reference model), for tests that track it. */
    protected byte[] model;

    /**
     * Makes a new device of exactly {@code size} bytes whose contents read as zeroes.
     * Called once before each test.
     */
    protected abstract BlockDevice newDevice(long size) throws Exception;

    /** The size of the device under test; at least 8 MiB, a multiple of 4096. Default 8 MiB. */
    protected long deviceSize() {
        return 8L * MIB;
    }

    /** Closes the device after each test (override to release lower devices, files, servers). */
    protected void closeDevice(BlockDevice device) throws Exception {
        device.close();
    }

    /** Threads used by the concurrency tests. */
    protected int writerThreads() {
        return 8;
    }

    @BeforeEach
    final void openDeviceUnderTest() throws Exception {
        long size = deviceSize();
        if (size < 8L * MIB || size % 4096 != 0 || size > Integer.MAX_VALUE / 4) {
            throw new IllegalStateException("deviceSize() must be a multiple of 4096 in [8 MiB, 512 MiB]");
        }
        device = newDevice(size);
        model = new byte[(int) size];
    }

    @AfterEach
    final void closeDeviceUnderTest() throws Exception {
        if (device != null) {
            closeDevice(device);
            device = null;
        }
    }


    /** A task run by each of several threads started together. */
    @FunctionalInterface
    protected interface Worker {
        Void run(int thread) throws Exception;
    }

    /** Runs {@code worker} on {@code threads} threads started together; fails on any error or after 60 s. */
    protected static void runConcurrently(int threads, Worker worker) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Void>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                final int id = t;
                Callable<Void> task = () -> {
                    start.await();
                    return worker.run(id);
                };
                futures.add(pool.submit(task));
            }
            start.countDown();
            for (Future<Void> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
            if (!pool.awaitTermination(30, TimeUnit.SECONDS)) {
                fail("writer threads did not stop");
            }
        }
    }

    // ------------------------------------------------------------------ helpers

    /** Deterministic pseudo-random bytes; different seeds give different data. */
    protected static byte[] pattern(long seed, int length) {
        byte[] b = new byte[length];
        long x = mix(seed * 0x9E3779B97F4A7C15L + 12345);
        int i = 0;
        for (; i + 8 <= length; i += 8) {
            x = mix(x);
            for (int j = 0; j < 8; j++) {
                b[i + j] = (byte) (x >>> (8 * j));
            }
        }
        for (; i < length; i++) {
            b[i] = (byte) (mix(x + i));
        }
        return b;
    }

    protected static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31) ^ 0x5851F42D4C957F2DL;
    }

    /** Reads {@code length} bytes at {@code offset} into a new array (through a heap buffer). */
    protected byte[] readBytes(long offset, int length) throws IOException {
        ByteBuffer dst = ByteBuffer.allocate(length);
        device.read(offset, dst);
        assertEquals(length, dst.position(), "read must fill the buffer");
        return dst.array();
    }

    /** Writes {@code data} at {@code offset} and records it in the reference model. */
    protected void writeBytes(long offset, byte[] data, int flags) throws IOException {
        ByteBuffer src = ByteBuffer.wrap(data);
        device.write(offset, src, flags);
        assertEquals(0, src.remaining(), "write must consume the buffer");
        synchronized (model) {
            System.arraycopy(data, 0, model, (int) offset, data.length);
        }
    }

    protected void zeroModel(long offset, long length) {
        synchronized (model) {
            Arrays.fill(model, (int) offset, (int) (offset + length), (byte) 0);
        }
    }

    /** Reads the whole device in 1 MiB pieces (alternating heap and direct) and compares it with the model. */
    protected void verifyAgainstModel() throws IOException {
        long size = device.size();
        ByteBuffer heap = ByteBuffer.allocate(MIB);
        ByteBuffer direct = ByteBuffer.allocateDirect(MIB);
        byte[] got = new byte[MIB];
        for (long off = 0; off < size; off += MIB) {
            int len = (int) Math.min(MIB, size - off);
            ByteBuffer b = ((off / MIB) & 1) == 0 ? heap : direct;
            b.clear().limit(len);
            device.read(off, b);
            b.flip().get(got, 0, len);
            if (!Arrays.equals(got, 0, len, model, (int) off, (int) off + len)) {
                for (int i = 0; i < len; i++) {
                    if (got[i] != model[(int) off + i]) {
                        long at = off + i;
                        fail("device differs from what was written at byte " + at + " (sector " + at / SECTOR
                                + "): expected " + model[(int) at] + " got " + got[i]);
                    }
                }
            }
        }
    }

    protected static void assertAllZero(byte[] b, long offset) {
        for (int i = 0; i < b.length; i++) {
            if (b[i] != 0) {
                fail("expected zeroes, found " + b[i] + " at byte " + (offset + i));
            }
        }
    }

    protected static boolean isZero(byte[] b, int from, int length) {
        for (int i = from; i < from + length; i++) {
            if (b[i] != 0) {
                return false;
            }
        }
        return true;
    }

    protected static long alignDown(long v) {
        return v & ~(long) (SECTOR - 1);
    }
}
