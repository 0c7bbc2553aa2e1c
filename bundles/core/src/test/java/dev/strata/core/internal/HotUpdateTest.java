package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.ref.WeakReference;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceState;
import dev.strata.core.internal.TestTargets.FileFactory;
import dev.strata.core.internal.linear.LinearTargetFactory;

/**
 * A leaf factory is unregistered and registered again (a bundle update) while threads write and
 * read back checksummed blocks, directly on the leaf device and through a linear device stacked
 * on it: no request fails, no block is wrong, and nothing of the old factory stays reachable.
 */
class HotUpdateTest {
    static final int BLOCK = 4096;
    static final int BLOCKS_PER_THREAD = 256;
    static final int ROUNDS = 5;

    @TempDir
    Path dir;

    @Test
    void factoryBouncesUnderConcurrentIo() throws Exception {
        MemStore store = new MemStore();
        DeviceManagerImpl m = new DeviceManagerImpl(store, Settings.of(120, 60));
        ExecutorService pool = Executors.newCachedThreadPool();
        try {
            FileFactory first = new FileFactory();
            FactoryEntry entry = TestTargets.entry(first, "tfile");
            m.addFactory(entry);
            m.addFactory(TestTargets.entry(new LinearTargetFactory(), "linear"));
            long half = 2L * BLOCKS_PER_THREAD * BLOCK;
            m.create("disk", "tfile", Map.of("path", dir.resolve("disk.img").toString(), "size", Long.toString(2 * half)));
            m.create("part", "linear", Map.of("device", "disk", "offset", Long.toString(half)));
            WeakReference<Object> oldFactory = new WeakReference<>(first);
            WeakReference<Object> oldTarget = new WeakReference<>(m.devicesForTest().get("disk").target);
            first = null;

            DeviceHandle disk = m.open("disk", "test:disk");
            DeviceHandle part = m.open("part", "test:part");
            AtomicBoolean run = new AtomicBoolean(true);
            AtomicLong errors = new AtomicLong();
            AtomicLong mismatches = new AtomicLong();
            AtomicLong[] ops = new AtomicLong[4];
            long[][] expected = new long[4][BLOCKS_PER_THREAD];
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int id = t;
                ops[t] = new AtomicLong();
                DeviceHandle h = t < 2 ? disk : part;
                long base = (t % 2) * (long) BLOCKS_PER_THREAD * BLOCK;
                workers.add(pool.submit(() -> {
                    ByteBuffer w = ByteBuffer.allocate(BLOCK);
                    ByteBuffer r = ByteBuffer.allocate(BLOCK);
                    long seq = 0;
                    while (run.get()) {
                        int blk = ThreadLocalRandom.current().nextInt(BLOCKS_PER_THREAD);
                        long off = base + (long) blk * BLOCK;
                        try {
                            long stamp = ((long) id << 48) | ++seq;
                            fill(w, stamp);
                            h.write(off, w, (seq % 16 == 0) ? BlockDevice.FUA : 0);
                            expected[id][blk] = stamp;
                            r.clear();
                            h.read(off, r);
                            if (stampOf(r) != stamp) {
                                mismatches.incrementAndGet();
                            }
                            int other = ThreadLocalRandom.current().nextInt(BLOCKS_PER_THREAD);
                            r.clear();
                            h.read(base + (long) other * BLOCK, r);
                            long got = stampOf(r);
                            if (got != expected[id][other]) {
                                mismatches.incrementAndGet();
                            }
                            if (seq % 64 == 0) {
                                h.flush();
                            }
                            ops[id].incrementAndGet();
                        } catch (Exception e) {
                            errors.incrementAndGet();
                            e.printStackTrace();
                        }
                    }
                    return null;
                }));
            }

            FileFactory current = null;
            for (int round = 0; round < ROUNDS; round++) {
                long[] before = snapshot(ops);
                GateTest.await(() -> progressed(before, ops, 20), "every thread to make progress");
                m.removeFactory(entry);
                // the unregistration returned: the target of the old factory is closed, I/O waits
                assertEquals(DeviceState.WAITING_FOR_TARGET, m.info("disk").orElseThrow().state());
                assertEquals(DeviceState.ACTIVE, m.info("part").orElseThrow().state());
                GateTest.await(() -> m.devicesForTest().get("disk").gate.waiting() >= 2,
                        "requests to wait at the closed gate");
                if (current != null) {
                    assertEquals(current.opened.get(), current.closed.get(), "every target of the old factory closed");
                }
                current = new FileFactory();
                entry = TestTargets.entry(current, "tfile");
                m.addFactory(entry);
                assertTrue(m.awaitQuiet(60, TimeUnit.SECONDS));
                assertEquals(DeviceState.ACTIVE, m.info("disk").orElseThrow().state());
            }
            long[] before = snapshot(ops);
            GateTest.await(() -> progressed(before, ops, 20), "every thread to make progress after the last update");
            run.set(false);
            for (Future<?> f : workers) {
                f.get(60, TimeUnit.SECONDS);
            }
            assertEquals(0, errors.get(), "I/O errors");
            assertEquals(0, mismatches.get(), "mismatched blocks");
            // everything written is there after the updates
            ByteBuffer r = ByteBuffer.allocate(BLOCK);
            for (int t = 0; t < 4; t++) {
                DeviceHandle h = t < 2 ? disk : part;
                long base = (t % 2) * (long) BLOCKS_PER_THREAD * BLOCK;
                for (int b = 0; b < BLOCKS_PER_THREAD; b++) {
                    r.clear();
                    h.read(base + (long) b * BLOCK, r);
                    assertEquals(expected[t][b], stampOf(r), "thread " + t + " block " + b);
                }
            }
            System.out.println("hot update: " + ROUNDS + " factory updates survived, ops per thread "
                    + java.util.Arrays.toString(snapshot(ops)));
            disk.close();
            part.close();

            // nothing of the first factory or its target is reachable any more
            entry = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while ((oldFactory.get() != null || oldTarget.get() != null) && System.nanoTime() < deadline) {
                System.gc();
            }
            assertNull(oldFactory.get(), "the old factory is still referenced");
            assertNull(oldTarget.get(), "the old target is still referenced");
        } finally {
            m.stop();
            pool.shutdownNow();
            assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS));
        }
    }

    /**
     * Both layers of a stack have the same type (linear over linear over a file) and that type's
     * factory bounces: the upper device must be closed before the lower one (its in-flight I/O
     * drains through the lower one), then both are rebuilt lower first.
     */
    @Test
    void aStackOfOneTypeBouncesTopDown() throws Exception {
        DeviceManagerImpl m = new DeviceManagerImpl(new MemStore(), Settings.of(120, 60));
        ExecutorService pool = Executors.newCachedThreadPool();
        try {
            m.addFactory(TestTargets.entry(new FileFactory(), "tfile"));
            FactoryEntry linear = TestTargets.entry(new LinearTargetFactory(), "linear");
            m.addFactory(linear);
            long region = (long) BLOCKS_PER_THREAD * BLOCK;
            m.create("disk", "tfile", Map.of("path", dir.resolve("disk.img").toString(), "size", Long.toString(4 * region)));
            m.create("mid", "linear", Map.of("device", "disk", "offset", Long.toString(region)));
            m.create("top", "linear", Map.of("device", "mid", "offset", Long.toString(region)));
            DeviceHandle mid = m.open("mid", "test:mid");
            DeviceHandle top = m.open("top", "test:top");
            AtomicBoolean run = new AtomicBoolean(true);
            AtomicLong errors = new AtomicLong();
            AtomicLong mismatches = new AtomicLong();
            AtomicLong[] ops = {new AtomicLong(), new AtomicLong()};
            List<Future<?>> workers = new ArrayList<>();
            DeviceHandle[] hs = {mid, top};
            for (int t = 0; t < 2; t++) {
                int id = t;
                DeviceHandle h = hs[t];
                // mid's first region and top's first region are different areas of the disk
                workers.add(pool.submit(() -> {
                    ByteBuffer w = ByteBuffer.allocate(BLOCK);
                    ByteBuffer r = ByteBuffer.allocate(BLOCK);
                    long seq = 0;
                    while (run.get()) {
                        long off = (long) ThreadLocalRandom.current().nextInt(BLOCKS_PER_THREAD) * BLOCK;
                        try {
                            long stamp = ((long) (id + 1) << 48) | ++seq;
                            fill(w, stamp);
                            h.write(off, w, 0);
                            r.clear();
                            h.read(off, r);
                            if (stampOf(r) != stamp) {
                                mismatches.incrementAndGet();
                            }
                            ops[id].incrementAndGet();
                        } catch (Exception e) {
                            errors.incrementAndGet();
                            e.printStackTrace();
                        }
                    }
                    return null;
                }));
            }
            for (int round = 0; round < 3; round++) {
                long[] before = snapshot(ops);
                GateTest.await(() -> progressed(before, ops, 20), "both threads to make progress");
                m.removeFactory(linear);
                assertEquals(DeviceState.WAITING_FOR_TARGET, m.info("top").orElseThrow().state());
                assertEquals(DeviceState.WAITING_FOR_TARGET, m.info("mid").orElseThrow().state());
                linear = TestTargets.entry(new LinearTargetFactory(), "linear");
                m.addFactory(linear);
                assertTrue(m.awaitQuiet(60, TimeUnit.SECONDS));
                assertEquals(DeviceState.ACTIVE, m.info("top").orElseThrow().state());
            }
            long[] before = snapshot(ops);
            GateTest.await(() -> progressed(before, ops, 20), "both threads to make progress at the end");
            run.set(false);
            for (Future<?> f : workers) {
                f.get(60, TimeUnit.SECONDS);
            }
            assertEquals(0, errors.get(), "I/O errors");
            assertEquals(0, mismatches.get(), "mismatched blocks");
            mid.close();
            top.close();
        } finally {
            m.stop();
            pool.shutdownNow();
            assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS));
        }
    }

    /** Suspend/resume and reloads (both orders) of a linear device while threads write and verify through it. */
    @Test
    void reloadsAndSuspendsUnderIo() throws Exception {
        DeviceManagerImpl m = new DeviceManagerImpl(new MemStore(), Settings.of(120, 60));
        ExecutorService pool = Executors.newCachedThreadPool();
        try {
            m.addFactory(TestTargets.entry(new FileFactory(), "tfile"));
            m.addFactory(TestTargets.entry(new LinearTargetFactory(), "linear"));
            long region = (long) BLOCKS_PER_THREAD * BLOCK;
            String size = Long.toString(2 * region);
            m.create("disk", "tfile", Map.of("path", dir.resolve("disk.img").toString(), "size", size));
            m.create("alias", "linear", Map.of("device", "disk"));
            m.create("vol", "linear", Map.of("device", "disk"));
            DeviceHandle vol = m.open("vol", "test:vol");
            AtomicBoolean run = new AtomicBoolean(true);
            AtomicLong errors = new AtomicLong();
            AtomicLong mismatches = new AtomicLong();
            AtomicLong[] ops = {new AtomicLong(), new AtomicLong()};
            long[][] expected = new long[2][BLOCKS_PER_THREAD];
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                int id = t;
                long base = t * region;
                workers.add(pool.submit(() -> {
                    ByteBuffer w = ByteBuffer.allocate(BLOCK);
                    ByteBuffer r = ByteBuffer.allocate(BLOCK);
                    long seq = 0;
                    while (run.get()) {
                        int blk = ThreadLocalRandom.current().nextInt(BLOCKS_PER_THREAD);
                        try {
                            long stamp = ((long) (id + 1) << 48) | ++seq;
                            fill(w, stamp);
                            vol.write(base + (long) blk * BLOCK, w, 0);
                            expected[id][blk] = stamp;
                            int other = ThreadLocalRandom.current().nextInt(BLOCKS_PER_THREAD);
                            r.clear();
                            vol.read(base + (long) other * BLOCK, r);
                            if (stampOf(r) != expected[id][other]) {
                                mismatches.incrementAndGet();
                            }
                            ops[id].incrementAndGet();
                        } catch (Exception e) {
                            errors.incrementAndGet();
                            e.printStackTrace();
                        }
                    }
                    return null;
                }));
            }
            for (int round = 0; round < 12; round++) {
                long[] before = snapshot(ops);
                GateTest.await(() -> progressed(before, ops, 10), "both threads to make progress");
                switch (round % 3) {
                    case 0 -> {
                        m.suspend("vol");
                        m.resume("vol");
                    }
                    // same lower device: old closed, then new built
                    case 1 -> m.reload("vol", "linear", Map.of("device", "disk", "offset", "0", "length", size));
                    // another lower device onto the same bytes: new built first
                    default -> m.reload("vol", "linear",
                            Map.of("device", m.info("vol").orElseThrow().lower().contains("disk") ? "alias" : "disk"));
                }
            }
            long[] before = snapshot(ops);
            GateTest.await(() -> progressed(before, ops, 10), "both threads to make progress at the end");
            run.set(false);
            for (Future<?> f : workers) {
                f.get(60, TimeUnit.SECONDS);
            }
            assertEquals(0, errors.get(), "I/O errors");
            assertEquals(0, mismatches.get(), "mismatched blocks");
            vol.close();
        } finally {
            m.stop();
            pool.shutdownNow();
            assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS));
        }
    }

    static long[] snapshot(AtomicLong[] ops) {
        long[] s = new long[ops.length];
        for (int i = 0; i < ops.length; i++) {
            s[i] = ops[i].get();
        }
        return s;
    }

    static boolean progressed(long[] before, AtomicLong[] ops, int by) {
        for (int i = 0; i < ops.length; i++) {
            if (ops[i].get() < before[i] + by) {
                return false;
            }
        }
        return true;
    }

    /** A block: the stamp, then bytes derived from it, then a CRC32C of the rest. */
    static void fill(ByteBuffer b, long stamp) {
        b.clear();
        b.putLong(stamp);
        long x = stamp * 0x9E3779B97F4A7C15L;
        while (b.position() < BLOCK - 8) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            b.putLong(x);
        }
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, BLOCK - 8);
        b.putLong(crc.getValue());
        b.flip();
    }

    /** The stamp of a block, 0 for a never-written (zero) block, -1 for a corrupt one. */
    static long stampOf(ByteBuffer b) {
        byte[] a = b.array();
        boolean zero = true;
        for (byte x : a) {
            if (x != 0) {
                zero = false;
                break;
            }
        }
        if (zero) {
            return 0;
        }
        CRC32C crc = new CRC32C();
        crc.update(a, 0, BLOCK - 8);
        if (ByteBuffer.wrap(a, BLOCK - 8, 8).getLong() != crc.getValue()) {
            return -1;
        }
        return ByteBuffer.wrap(a).getLong();
    }
}
