package dev.strata.cache.writecache.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.cache.writecache.internal.recovery.Recovery;
import dev.strata.testsupport.crash.CrashableDevice;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Overwrites in place (no state monitor: the gate's read lock, {@link CacheState}) racing what
 * they must never overlap: commit snapshots (a committed slot is never overwritten), writeback
 * batches (a slot under writeback is never overwritten; its block is freed only if still
 * unchanged) and the removals of write-zeroes. block_size=512, so most writes are multi-block
 * requests over slots of several earlier writes; writers own adjacent regions, so their slots
 * interleave, and register in different parts of the in-flight registry. Every read is checked
 * against the writer's model, and at the end the whole device through the cache, after a
 * restart, and in the backing device alone after writeback.
 */
@Timeout(120)
class InPlaceRaceTest {
    static final int BS = 512;
    static final int THREADS = 8;
    static final int REGION_BLOCKS = 48;

    @Test
    void inPlaceOverwritesRacingCommitsWritebackAndRemovals() throws Exception {
        CrashableDevice backing = new CrashableDevice("backing", (long) THREADS * REGION_BLOCKS * BS, 512);
        CrashableDevice cache = new CrashableDevice("cache", WritecacheSubject.cacheBytes(THREADS * REGION_BLOCKS * 3 / 4, BS), 512);
        Tunables t = Tunables.DEFAULTS.with(Tunables.HIGH_WATERMARK, "50").with(Tunables.LOW_WATERMARK, "20")
                .with(Tunables.WRITEBACK_BATCH, "32").with(Tunables.AUTOCOMMIT_BLOCKS, "64");
        byte[][] models = new byte[THREADS][REGION_BLOCKS * BS];
        WritecacheTarget wc = Recovery.open("wc", backing, cache, null, BS, true, t, Options.defaults());
        ExecutorService pool = Executors.newFixedThreadPool(THREADS + 1);
        List<Future<?>> fs = new ArrayList<>();
        for (int th = 0; th < THREADS; th++) {
            int me = th;
            fs.add(pool.submit(() -> {
                Random r = new Random(me * 31L + 7);
                byte[] model = models[me];
                long base = (long) me * REGION_BLOCKS * BS;
                for (int i = 0; i < 3000; i++) {
                    // a small hot set: most writes overwrite blocks cached since the last commit
                    int first = r.nextInt(4) == 0 ? r.nextInt(REGION_BLOCKS) : r.nextInt(12);
                    int n = 1 + r.nextInt(Math.min(12, REGION_BLOCKS - first));
                    int off = first * BS;
                    int len = n * BS;
                    int kind = r.nextInt(40);
                    if (kind < 28) {
                        byte[] d = new byte[len];
                        r.nextBytes(d);
                        wc.write(base + off, ByteBuffer.wrap(d), 0);
                        System.arraycopy(d, 0, model, off, len);
                    } else if (kind < 37) {
                        ByteBuffer got = ByteBuffer.allocate(len);
                        wc.read(base + off, got);
                        byte[] expect = java.util.Arrays.copyOfRange(model, off, off + len);
                        assertArrayEquals(expect, got.array(), "thread " + me + " op " + i + " read " + off + "+" + len);
                    } else if (kind < 38) {
                        wc.writeZeroes(base + off, len, 0);
                        java.util.Arrays.fill(model, off, off + len, (byte) 0);
                    } else {
                        wc.flush();
                    }
                }
                return null;
            }));
        }
        // commits and writeback batches chosen while the writers overwrite
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        Future<?> committer = pool.submit(() -> {
            while (!stop.get()) {
                wc.flush();
            }
            return null;
        });
        for (Future<?> f : fs) {
            f.get(100, TimeUnit.SECONDS);
        }
        stop.set(true);
        committer.get(30, TimeUnit.SECONDS);
        pool.shutdown();
        verify(wc, models);
        assertTrue(Long.parseLong(wc.status().get("written_back_blocks")) > 0, "writeback ran: " + wc.status());
        assertTrue(Long.parseLong(wc.status().get("write_hits_uncommitted")) > 1000, "in-place overwrites: " + wc.status());
        assertTrue(Long.parseLong(wc.status().get("write_hits_committed")) > 100, "overwrites of committed blocks: " + wc.status());
        wc.close();
        WritecacheTarget again = Recovery.open("wc", backing, cache, null, BS, false, t, Options.defaults().manual());
        verify(again, models);
        again.writebackAll((d, w) -> { });
        assertEquals(0, again.dirtyBlocks());
        again.close();
        for (int th = 0; th < THREADS; th++) {
            ByteBuffer got = ByteBuffer.allocate(REGION_BLOCKS * BS);
            backing.read((long) th * REGION_BLOCKS * BS, got);
            assertArrayEquals(models[th], got.array(), "backing region " + th);
        }
    }

    /**
     * A commit that starts while an in-place write has found its slot but not yet registered its
     * data write must wait for it (the gate): otherwise the commit neither waits for nor flushes
     * that data, the write then lands in a slot the commit made committed, and a later FLUSH —
     * with nothing new to commit — leaves it volatile, so a crash loses an acknowledged,
     * flushed write. The probe holds the writer at that point until the commit is either blocked
     * or done.
     */
    @Test
    void aCommitDuringAnInPlaceWriteWaitsForItsData() throws Exception {
        CrashableDevice backing = new CrashableDevice("backing", 64 * BS, 512);
        CrashableDevice cache = new CrashableDevice("cache", WritecacheSubject.cacheBytes(32, BS), 512);
        WritecacheTarget wc = Recovery.open("wc", backing, cache, null, BS, true, Tunables.DEFAULTS, Options.defaults().manual());
        byte[] a = new byte[4 * BS];
        java.util.Arrays.fill(a, (byte) 'a');
        byte[] b = new byte[4 * BS];
        java.util.Arrays.fill(b, (byte) 'b');
        wc.write(0, ByteBuffer.wrap(a), 0);
        Thread[] flusher = new Thread[1];
        Throwable[] failed = new Throwable[1];
        wc.inPlaceProbe(() -> {
            wc.inPlaceProbe(null);
            Thread f = new Thread(() -> {
                try {
                    wc.flush();
                } catch (Throwable x) {
                    failed[0] = x;
                }
            }, "flusher");
            flusher[0] = f;
            f.start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            // blocked on the gate (WAITING) or finished: either way the commit has had its chance
            while (f.isAlive() && f.getState() != Thread.State.WAITING && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
        });
        wc.write(0, ByteBuffer.wrap(b), 0);
        flusher[0].join(30_000);
        assertTrue(failed[0] == null, "flush failed: " + failed[0]);
        wc.flush();
        assertEquals(4, Long.parseLong(wc.status().get("write_hits_uncommitted")), "the second write overwrote in place");
        CrashableDevice cacheAfter = CrashableDevice.ofImage("cache", cache.durableImage(), 512);
        CrashableDevice backingAfter = CrashableDevice.ofImage("backing", backing.durableImage(), 512);
        wc.close();
        WritecacheTarget again = Recovery.open("wc", backingAfter, cacheAfter, null, BS, false, Tunables.DEFAULTS,
                Options.defaults().manual());
        ByteBuffer got = ByteBuffer.allocate(4 * BS);
        again.read(0, got);
        assertArrayEquals(b, got.array(), "the flushed write survives the crash");
        again.close();
    }

    /**
     * A commit between an in-place write's optimistic look (no lock held) and its registration:
     * the slots it found are committed now, so the write must not go to them (it finds that its
     * stamp is no longer valid, looks again under the read lock, and allocates new slots under
     * the monitor). Were the look not validated, the committed copy would be overwritten in
     * place (counted as uncommitted hits) and the next commit would name nothing new for it.
     */
    @Test
    void aCommitDuringAnOptimisticLookSendsTheWriteToNewSlots() throws Exception {
        CrashableDevice backing = new CrashableDevice("backing", 64 * BS, 512);
        CrashableDevice cache = new CrashableDevice("cache", WritecacheSubject.cacheBytes(32, BS), 512);
        WritecacheTarget wc = Recovery.open("wc", backing, cache, null, BS, true, Tunables.DEFAULTS, Options.defaults().manual());
        byte[] a = new byte[4 * BS];
        java.util.Arrays.fill(a, (byte) 'a');
        byte[] b = new byte[4 * BS];
        java.util.Arrays.fill(b, (byte) 'b');
        wc.write(0, ByteBuffer.wrap(a), 0);
        Throwable[] failed = new Throwable[1];
        wc.optimisticProbe(() -> {
            wc.optimisticProbe(null);
            try {
                wc.flush(); // this thread holds nothing of the gate here: the commit runs at once
            } catch (Throwable x) {
                failed[0] = x;
            }
        });
        wc.write(0, ByteBuffer.wrap(b), 0);
        assertTrue(failed[0] == null, "flush failed: " + failed[0]);
        assertEquals(0, Long.parseLong(wc.status().get("write_hits_uncommitted")), "no committed slot overwritten in place");
        assertEquals(4, Long.parseLong(wc.status().get("write_hits_committed")), "the write took new slots");
        ByteBuffer got = ByteBuffer.allocate(4 * BS);
        wc.read(0, got);
        assertArrayEquals(b, got.array(), "the second write is read back");
        CrashableDevice cacheUnflushed = CrashableDevice.ofImage("cache", cache.durableImage(), 512);
        CrashableDevice backingUnflushed = CrashableDevice.ofImage("backing", backing.durableImage(), 512);
        wc.flush();
        CrashableDevice cacheAfter = CrashableDevice.ofImage("cache", cache.durableImage(), 512);
        CrashableDevice backingAfter = CrashableDevice.ofImage("backing", backing.durableImage(), 512);
        wc.close();
        // a crash before the second flush finds the first write's committed copy whole
        WritecacheTarget before = Recovery.open("wc", backingUnflushed, cacheUnflushed, null, BS, false, Tunables.DEFAULTS,
                Options.defaults().manual());
        got = ByteBuffer.allocate(4 * BS);
        before.read(0, got);
        assertArrayEquals(a, got.array(), "the committed first write survives a crash before the next flush");
        before.close();
        WritecacheTarget again = Recovery.open("wc", backingAfter, cacheAfter, null, BS, false, Tunables.DEFAULTS,
                Options.defaults().manual());
        got = ByteBuffer.allocate(4 * BS);
        again.read(0, got);
        assertArrayEquals(b, got.array(), "the flushed second write survives the crash");
        again.close();
    }

    /**
     * A partial write's read-modify-write of a block cached in place, with an in-place write of
     * the whole block landing between its read and its write: the merge must not overwrite the
     * newer whole block with the older one (the gate is held over the merge). The cache device
     * holds the partial write's read, after it has read, until the whole-block write has
     * returned; without the gate the block ends as the old data plus the partial bytes.
     */
    @Test
    void aPartialMergeInPlaceDoesNotLoseAnInPlaceWriteOfItsBlock() throws Exception {
        int bs = 4096;
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicBoolean armed = new java.util.concurrent.atomic.AtomicBoolean();
        CrashableDevice backing = new CrashableDevice("backing", 16 * bs, 512);
        CrashableDevice lower = new CrashableDevice("cache", WritecacheSubject.cacheBytes(8, bs), 512);
        BlockDevice cache = new dev.strata.testsupport.target.ForwardingBlockDevice(lower) {
            @Override
            public void read(long offset, ByteBuffer dst) throws java.io.IOException {
                boolean hold = dst.remaining() == bs && armed.compareAndSet(true, false);
                super.read(offset, dst);
                if (hold) {
                    try {
                        release.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
        };
        WritecacheTarget wc = Recovery.open("wc", backing, cache, null, bs, true, Tunables.DEFAULTS, Options.defaults().manual());
        byte[] a = new byte[bs];
        java.util.Arrays.fill(a, (byte) 'a');
        byte[] b = new byte[bs];
        java.util.Arrays.fill(b, (byte) 'b');
        byte[] p = new byte[512];
        java.util.Arrays.fill(p, (byte) 'p');
        wc.write(0, ByteBuffer.wrap(a), 0);
        Thread[] partial = new Thread[1];
        Throwable[] failed = new Throwable[1];
        armed.set(true);
        wc.inPlaceProbe(() -> {
            wc.inPlaceProbe(null);
            Thread t = new Thread(() -> {
                try {
                    wc.write(1024, ByteBuffer.wrap(p), 0);
                } catch (Throwable x) {
                    failed[0] = x;
                }
            }, "partial");
            partial[0] = t;
            t.start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            // parked on the gate, or holding its read of the block: either way inside the merge
            while (t.isAlive() && t.getState() != Thread.State.WAITING && t.getState() != Thread.State.TIMED_WAITING
                    && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
        });
        wc.write(0, ByteBuffer.wrap(b), 0);
        release.countDown();
        partial[0].join(30_000);
        assertTrue(failed[0] == null, "partial write failed: " + failed[0]);
        byte[] expect = b.clone();
        System.arraycopy(p, 0, expect, 1024, p.length);
        ByteBuffer got = ByteBuffer.allocate(bs);
        wc.read(0, got);
        assertArrayEquals(expect, got.array(), "the whole-block write, then the partial bytes");
        wc.close();
    }

    private static void verify(BlockDevice d, byte[][] models) throws Exception {
        for (int th = 0; th < THREADS; th++) {
            ByteBuffer got = ByteBuffer.allocate(REGION_BLOCKS * BS);
            d.read((long) th * REGION_BLOCKS * BS, got);
            assertArrayEquals(models[th], got.array(), "region " + th);
        }
    }
}
