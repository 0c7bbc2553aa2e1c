package dev.strata.cache.readcache.internal.io;

import static dev.strata.cache.readcache.internal.io.ReadCacheTest.BS;
import static dev.strata.cache.readcache.internal.io.ReadCacheTest.pattern;
import static dev.strata.cache.readcache.internal.io.ReadCacheTest.read;
import static dev.strata.cache.readcache.internal.io.ReadCacheTest.stat;
import static dev.strata.cache.readcache.internal.io.ReadCacheTest.write;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.target.ForwardingBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@code write_promote} racing: a second write of the block, and a read's promotion. The cached
 * copy must always be what the origin holds (else a read changes value when the copy is evicted).
 * Each deterministic case fails when its clause of {@link Stamps#writeCurrent} is removed (checked
 * by hand: without the in-flight count the first case installs the second write's copy over the
 * origin's first; without the stamp the second case installs the older write's copy).
 */
class WritePromoteRaceTest {
    private static final long DEADLINE_S = 30;

    /** An origin whose writes of a marked version wait on a latch, before or after reaching the device. */
    static final class GatedOrigin extends ForwardingBlockDevice {
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        volatile int gatedVersionByte = -1;
        volatile boolean applyFirst;

        GatedOrigin(BlockDevice lower) {
            super(lower);
        }

        @Override
        public void write(long offset, ByteBuffer src, int flags) throws IOException {
            boolean gated = src.get(src.position()) == (byte) gatedVersionByte;
            if (gated && applyFirst) {
                super.write(offset, src, flags);
            }
            if (gated) {
                entered.countDown();
                await(release);
            }
            if (!(gated && applyFirst)) {
                super.write(offset, src, flags);
            }
        }
    }

    static void await(CountDownLatch l) throws IOException {
        try {
            if (!l.await(DEADLINE_S, TimeUnit.SECONDS)) {
                throw new IOException("latch not released within " + DEADLINE_S + " s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    /** Waits for {@code condition} (re-checked every 5 ms), at most {@link #DEADLINE_S}. */
    static void until(String what, java.util.function.BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(DEADLINE_S);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not within " + DEADLINE_S + " s: " + what);
            }
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
    }

    private static CompletableFuture<Void> async(IoTask t) {
        return CompletableFuture.runAsync(() -> {
            try {
                t.run();
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
    }

    interface IoTask {
        void run() throws IOException;
    }

    /**
     * W1 is in flight on the origin (reaches the device last) while W2 of the same block completes:
     * W2 must not install its copy (the origin ends up with W1's data), nor may W1 (W2 overlapped).
     */
    @Test
    void aWriteCompletingWhileAnotherIsInFlightKeepsNoCopy() throws Exception {
        CrashableDevice raw = new CrashableDevice("o", 1 << 20, BS);
        GatedOrigin origin = new GatedOrigin(raw);
        ReadCache rc = Opener.open("rc", origin, new CrashableDevice("c", 8192 + 64 * BS, BS), WritePromoteTest.promoting());
        long b = 5;
        origin.gatedVersionByte = pattern(b, 1)[0];
        CompletableFuture<Void> w1 = async(() -> write(rc, b, 1));
        await(origin.entered);
        write(rc, b, 2);
        origin.release.countDown();
        w1.get(DEADLINE_S, TimeUnit.SECONDS);
        assertArrayEquals(pattern(b, 1), read(raw, b), "the origin applied W1 last");
        assertArrayEquals(read(raw, b), read(rc, b));
        assertEquals(0, stat(rc, "write_promotions"));
        write(rc, b, 3); // alone: kept
        assertEquals(1, stat(rc, "write_promotions"));
        assertArrayEquals(pattern(b, 3), read(rc, b));
        rc.close();
    }

    /** W1 reached the device but is acknowledged late; W2 completes meanwhile (the origin holds W2): W1 keeps no copy. */
    @Test
    void aLateAcknowledgedWriteDoesNotInstallOverANewerOne() throws Exception {
        CrashableDevice raw = new CrashableDevice("o", 1 << 20, BS);
        GatedOrigin origin = new GatedOrigin(raw);
        origin.applyFirst = true;
        ReadCache rc = Opener.open("rc", origin, new CrashableDevice("c", 8192 + 64 * BS, BS), WritePromoteTest.promoting());
        long b = 9;
        origin.gatedVersionByte = pattern(b, 1)[0];
        CompletableFuture<Void> w1 = async(() -> write(rc, b, 1));
        await(origin.entered);
        write(rc, b, 2);
        origin.release.countDown();
        w1.get(DEADLINE_S, TimeUnit.SECONDS);
        assertArrayEquals(pattern(b, 2), read(raw, b));
        assertArrayEquals(pattern(b, 2), read(rc, b));
        rc.close();
    }

    /** A read's promotion planned before a write and installed after it never installs the older data. */
    @Test
    void aReadPromotionRacingAWrittenCopy() throws Exception {
        CrashableDevice raw = new CrashableDevice("o", 1 << 20, BS);
        CountDownLatch readEntered = new CountDownLatch(1);
        CountDownLatch readRelease = new CountDownLatch(1);
        AtomicInteger gateReads = new AtomicInteger(1);
        BlockDevice origin = new ForwardingBlockDevice(raw) {
            @Override
            public void read(long offset, ByteBuffer dst) throws IOException {
                super.read(offset, dst);
                if (gateReads.getAndSet(0) == 1) {
                    readEntered.countDown();
                    await(readRelease); // holds the old data while the write goes by
                }
            }
        };
        write(raw, 3, 1);
        ReadCache rc = Opener.open("rc", origin, new CrashableDevice("c", 8192 + 64 * BS, BS), WritePromoteTest.promoting());
        CompletableFuture<Void> r = async(() -> assertArrayEquals(pattern(3, 1), read(rc, 3)));
        await(readEntered);
        write(rc, 3, 2); // the read's promotion is pending: the write keeps no copy
        readRelease.countDown();
        r.get(DEADLINE_S, TimeUnit.SECONDS);
        assertEquals(0, stat(rc, "promotions"));
        assertEquals(1, stat(rc, "promotions_abandoned"));
        assertEquals(0, stat(rc, "write_promotions"));
        assertArrayEquals(pattern(3, 2), read(rc, 3));
        write(rc, 3, 3);
        assertArrayEquals(pattern(3, 3), read(rc, 3));
        assertEquals(1, stat(rc, "write_promotions"));
        rc.close();
    }

    /** A cache device whose first flush (after being armed) waits after flushing, and the second before. */
    static final class GatedFlushes extends ForwardingBlockDevice {
        final CountDownLatch firstEntered = new CountDownLatch(1);
        final CountDownLatch firstRelease = new CountDownLatch(1);
        final CountDownLatch secondEntered = new CountDownLatch(1);
        final CountDownLatch secondRelease = new CountDownLatch(1);
        final AtomicInteger calls = new AtomicInteger(-1);

        GatedFlushes(BlockDevice lower) {
            super(lower);
        }

        void arm() {
            calls.set(0);
        }

        @Override
        public void flush() throws IOException {
            int n = calls.get() < 0 ? -1 : calls.incrementAndGet();
            if (n == 2) {
                secondEntered.countDown();
                await(secondRelease);
            }
            super.flush();
            if (n == 1) {
                firstEntered.countDown();
                await(firstRelease);
            }
        }
    }

    /**
     * Two flushes and a newer write of the same block into the same slot: flush F1 found the
     * block's written copy recordable and is flushing the cache device; meanwhile a newer write
     * replaces the copy in the same slot (its data written after F1's cache flush), and flush F2
     * completes its origin flush. F1 must not record the newer copy on F2's durable point: a crash
     * then (the newer data not yet durable on the cache device) would serve the older copy.
     * Fails without the recording lock of ReadCache (checked by hand).
     */
    @Test
    void aFlushNeverRecordsACopyWrittenAfterItsCacheFlushBegan() throws Exception {
        CrashableDevice origin = new CrashableDevice("o", 1 << 20, BS);
        AtomicInteger originFlushes = new AtomicInteger();
        BlockDevice countingOrigin = new ForwardingBlockDevice(origin) {
            @Override
            public void flush() throws IOException {
                super.flush();
                originFlushes.incrementAndGet();
            }
        };
        CrashableDevice cacheDev = new CrashableDevice("c", 8192 + 16 * BS, BS);
        GatedFlushes cache = new GatedFlushes(cacheDev);
        ReadCache rc = Opener.open("rc", countingOrigin, cache, WritePromoteTest.promoting());
        int slots = (int) stat(rc, "capacity_blocks");
        for (int b = 0; b < slots; b++) {
            write(rc, b, 1); // every slot holds a block
        }
        rc.flush();
        write(rc, 0, 2); // the only free slot is block 0's own: its copy goes back there
        cache.arm();
        CompletableFuture<Void> f1 = async(rc::flush);
        await(cache.firstEntered); // F1 has taken block 0's copy (version 2) to record, after its cache flush
        write(rc, 0, 3); // the newer copy, in the same slot, written after F1's cache flush
        int flushesBefore = originFlushes.get();
        CompletableFuture<Void> f2 = new CompletableFuture<>();
        Thread t2 = new Thread(() -> {
            try {
                rc.flush();
                f2.complete(null);
            } catch (Throwable e) {
                f2.completeExceptionally(e);
            }
        });
        t2.start();
        // F2 has flushed the origin and waits (for F1's recording, or for F1's cache flush)
        until("F2 waiting after its origin flush", () -> originFlushes.get() > flushesBefore
                && (t2.getState() == Thread.State.WAITING || t2.getState() == Thread.State.TIMED_WAITING));
        cache.firstRelease.countDown();
        f1.get(DEADLINE_S, TimeUnit.SECONDS);
        await(cache.secondEntered); // F2 past its origin flush, before its cache flush
        byte[] originImage = origin.durableImage();
        byte[] cacheImage = cacheDev.durableImage();
        cache.secondRelease.countDown();
        f2.get(DEADLINE_S, TimeUnit.SECONDS);
        assertArrayEquals(pattern(0, 3), read(CrashableDevice.ofImage("o2", originImage, BS), 0));
        ReadCache after = Opener.open("rc", CrashableDevice.ofImage("o2", originImage, BS),
                CrashableDevice.ofImage("c2", cacheImage, BS), WritePromoteTest.promoting());
        assertArrayEquals(pattern(0, 3), read(after, 0), "block 0 after a crash during F2");
        after.close();
        rc.close();
    }

    /**
     * Rounds of two writers writing the same blocks at once and two readers reading them; after
     * each round the read cache reads exactly what the origin holds, block by block.
     */
    @Test
    void concurrentWritersAndReadersNeverLeaveACopyOtherThanTheOrigins() throws Exception {
        CrashableDevice raw = new CrashableDevice("o", 1 << 20, BS);
        ReadCache rc = Opener.open("rc", raw, new CrashableDevice("c", 8192 + 16 * BS, BS), WritePromoteTest.promoting());
        int blocks = 8;
        int rounds = 150;
        int threads = 4;
        ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
        CyclicBarrier start = new CyclicBarrier(threads + 1);
        CyclicBarrier end = new CyclicBarrier(threads + 1);
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            ts.add(new Thread(() -> {
                try {
                    for (int round = 0; round < rounds; round++) {
                        start.await(DEADLINE_S, TimeUnit.SECONDS);
                        for (int b = 0; b < blocks; b++) {
                            if (id < 2) {
                                write(rc, b, round * 2 + id + 1);
                            } else {
                                read(rc, b);
                            }
                        }
                        if (id == 0 && round % 10 == 0) {
                            rc.flush();
                        }
                        end.await(DEADLINE_S, TimeUnit.SECONDS);
                    }
                } catch (Exception e) {
                    errors.add("thread " + id + ": " + e);
                    start.reset();
                    end.reset();
                }
            }));
        }
        ts.forEach(Thread::start);
        for (int round = 0; round < rounds && errors.isEmpty(); round++) {
            start.await(DEADLINE_S, TimeUnit.SECONDS);
            end.await(DEADLINE_S, TimeUnit.SECONDS);
            for (int b = 0; b < blocks; b++) {
                if (!java.util.Arrays.equals(read(raw, b), read(rc, b))) {
                    errors.add("round " + round + ": block " + b + " reads other data than the origin holds");
                }
            }
        }
        for (Thread t : ts) {
            t.join(TimeUnit.SECONDS.toMillis(DEADLINE_S));
        }
        assertTrue(errors.isEmpty(), errors.toString());
        assertTrue(stat(rc, "write_promotions") > 0);
        assertTrue(stat(rc, "read_hits") > 0);
        rc.close();
    }
}
