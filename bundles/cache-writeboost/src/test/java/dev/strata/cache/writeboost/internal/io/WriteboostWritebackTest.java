package dev.strata.cache.writeboost.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.CacheTarget;
import dev.strata.cache.support.time.ManualClock;
import dev.strata.cache.writeboost.internal.format.Layout;
import java.io.IOException;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Writeback and bypass: a full log waits for writeback and loses nothing, the rate and order of
 * writeback (sorted, merged), large and sequential writes bypassing after the cached copies are
 * invalidated, and writeback never putting older data over a bypassed write.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class WriteboostWritebackTest extends WriteboostFixture {
    @Test
    void aFullLogWaitsForWritebackAndLosesNothing() throws IOException {
        wb = open(noBypass(), WriteboostCache.Options.defaults());
        byte[] model = new byte[(int) backing.size()];
        Random r = new Random(4);
        // 3x the cache capacity of random 4 KiB..16 KiB writes
        long written = 0;
        while (written < 3L * 16 * MIB) {
            int len = (1 + r.nextInt(4)) * 4096;
            long off = (long) r.nextInt((int) (backing.size() - len) / 4096) * 4096;
            byte[] d = random(r, len);
            write(wb, off, d);
            System.arraycopy(d, 0, model, (int) off, len);
            written += len;
        }
        verifyAll(model);
        wb.writebackAll();
        assertEquals(0, wb.dirtyBlocks());
        assertArrayEquals(model, read(backing, 0, model.length));
        wb.close();
        wb = open(noBypass(), WriteboostCache.Options.defaults());
        verifyAll(model);
    }

    @Test
    void writersWaitingForALogBufferDoNotForceWritebackAtThresholdZero() throws Exception {
        // a slow cache device makes writers wait for a free log buffer; that is the cache
        // device's pace, not a full log, so writeback_threshold=0 must still write nothing back
        cacheDev.delayMicros = 5_000;
        wb = open(noBypass().with(Tunables.WRITEBACK_THRESHOLD, "0"), WriteboostCache.Options.defaults().withBuffers(2));
        int threads = 4; // several writers, so some are still waiting when a buffer comes free
        int blocks = 6 * Layout.MAX_DATA; // six segments: far from the urgent headroom of a 16-segment log
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            Future<?>[] done = new Future<?>[threads];
            for (int t = 0; t < threads; t++) {
                int first = t;
                done[t] = pool.submit(() -> {
                    Random r = new Random(first);
                    for (int i = first; i < blocks; i += threads) {
                        write(wb, (long) i * 4096, random(r, 4096));
                    }
                    return null;
                });
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        wb.flush();
        Map<String, String> s = wb.status();
        assertEquals("0", s.get("written_back_blocks"), "nothing written back: " + s);
        assertEquals(blocks, wb.dirtyBlocks());
        assertEquals(0, backing.bytesWritten.get());
    }

    @Test
    void writebackRateFallsToZeroWhenWritebackStandsStill() throws IOException {
        ManualClock clock = new ManualClock();
        wb = open(noBypass(), WriteboostCache.Options.defaults().manual().withClock(clock));
        Random r = new Random(8);
        for (int i = 0; i < 2 * Layout.MAX_DATA; i++) {
            write(wb, i * 4096L, random(r, 4096));
        }
        wb.flush();
        clock.advance(1, TimeUnit.SECONDS);
        wb.writebackAll();
        long written = Long.parseLong(wb.status().get("written_back_blocks"));
        assertTrue(written > 0);
        // the window is the 4 s before this second plus the part of this one gone by (none yet)
        assertEquals(written / 4, Long.parseLong(wb.status().get(CacheTarget.Keys.WRITEBACK_RATE)),
                "what went back in the window, per second");
        clock.advance(10, TimeUnit.SECONDS);
        assertEquals("0", wb.status().get(CacheTarget.Keys.WRITEBACK_RATE),
                "no writeback for a whole window: the pace is 0, not the last batch's");
    }

    @Test
    void writebackIsSortedAndMerged() throws IOException {
        wb = open(noBypass(), WriteboostCache.Options.defaults().manual());
        Random r = new Random(5);
        // 200 blocks of a 256-block range, written in random order: writeback needs few large writes
        int[] perm = new int[256];
        for (int i = 0; i < 256; i++) {
            perm[i] = i;
        }
        for (int i = 255; i > 0; i--) {
            int j = r.nextInt(i + 1);
            int t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        byte[] model = new byte[256 * 4096];
        for (int i = 0; i < 200; i++) {
            byte[] d = random(r, 4096);
            write(wb, perm[i] * 4096L, d);
            System.arraycopy(d, 0, model, perm[i] * 4096, 4096);
        }
        wb.flush();
        long writesBefore = backing.writes.get();
        long flushesBefore = backing.flushes.get();
        wb.writebackAll();
        long writes = backing.writes.get() - writesBefore;
        assertTrue(writes < 60, "sorted writeback used " + writes + " writes for 200 blocks");
        assertArrayEquals(model, read(backing, 0, model.length));
        assertTrue(backing.flushes.get() > flushesBefore, "backing flushed before segments count as written back");
    }

    @Test
    void largeWritesBypassTheCacheAfterInvalidatingIt() throws IOException {
        wb = open(Tunables.DEFAULTS.with(Tunables.BYPASS_THRESHOLD, "256k"), WriteboostCache.Options.defaults().manual());
        Random r = new Random(6);
        byte[] small = random(r, 8192);
        write(wb, 4096, small); // cached, dirty
        wb.flush();
        long cacheBytes = cacheDev.bytesWritten.get();
        byte[] big = random(r, 1 << 20);
        write(wb, 0, big); // bypass over the cached blocks
        assertArrayEquals(big, read(wb, 0, 1 << 20));
        assertArrayEquals(big, read(backing, 0, 1 << 20));
        assertEquals(cacheBytes, cacheDev.bytesWritten.get(), "the big write did not go through the cache");
        assertEquals(0, wb.dirtyBlocks());
        wb.writebackAll();
        assertArrayEquals(big, read(backing, 0, 1 << 20), "no stale writeback over the bypassed data");
        // and after a restart the invalidation is replayed too
        wb.close();
        wb = open(Tunables.DEFAULTS, WriteboostCache.Options.defaults().manual());
        assertArrayEquals(big, read(wb, 0, 1 << 20));
        Map<String, String> s = wb.status();
        assertEquals("0", s.get("dirty_blocks"));
    }

    @Test
    void unalignedBypassKeepsItsEdgesInTheCache() throws IOException {
        wb = open(Tunables.DEFAULTS.with(Tunables.BYPASS_THRESHOLD, "64k"), WriteboostCache.Options.defaults().manual());
        Random r = new Random(7);
        byte[] model = new byte[1 << 20];
        byte[] d = random(r, 4096 * 4);
        write(wb, 0, d);
        System.arraycopy(d, 0, model, 0, d.length);
        byte[] big = random(r, 200 * 1024 + 1536);
        write(wb, 1536, big);
        System.arraycopy(big, 0, model, 1536, big.length);
        assertArrayEquals(model, read(wb, 0, model.length));
        wb.writebackAll();
        assertArrayEquals(model, read(backing, 0, model.length));
    }

    @Test
    void sequentialStreamsBypassAfterTheCutoff() throws IOException {
        wb = open(Tunables.DEFAULTS.with(Tunables.SEQUENTIAL_CUTOFF, "256k"), WriteboostCache.Options.defaults().manual());
        Random r = new Random(8);
        byte[] model = new byte[4 << 20];
        for (int off = 0; off < model.length; off += 65536) {
            byte[] d = random(r, 65536);
            write(wb, off, d);
            System.arraycopy(d, 0, model, off, d.length);
        }
        long bypassed = Long.parseLong(wb.status().get("bypassed"));
        assertTrue(bypassed >= 55, "bypassed " + bypassed);
        assertArrayEquals(model, read(wb, 0, model.length));
    }

    /** A writeback that is writing block B when a bypass write of B arrives must finish first. */
    @Test
    void writebackNeverWritesOlderDataOverABypassedWrite() throws Exception {
        wb = open(Tunables.DEFAULTS.with(Tunables.BYPASS_THRESHOLD, "64k"), WriteboostCache.Options.defaults().manual());
        Random r = new Random(9);
        byte[] old = random(r, 4096);
        write(wb, 0, old);
        wb.flush();
        CountDownLatch writebackWriting = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        backing.failWrite = o -> {
            if (o == 0 && (Thread.currentThread().getName().equals("wbtest")
                    || Thread.currentThread().getName().equals("strata-writeback-io"))) { // the batcher's runs
                writebackWriting.countDown();
                try {
                    release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return false;
        };
        ExecutorService ex = Executors.newFixedThreadPool(2, run -> new Thread(run, "wbtest"));
        ExecutorService other = Executors.newSingleThreadExecutor();
        try {
            Future<?> wbDone = ex.submit(() -> {
                wb.writebackAll();
                return null;
            });
            assertTrue(writebackWriting.await(30, TimeUnit.SECONDS));
            byte[] big = random(r, 128 * 1024);
            Future<?> bypass = other.submit(() -> {
                write(wb, 0, big);
                return null;
            });
            // the bypass must wait for the writeback write of block 0 in flight
            assertThrows(java.util.concurrent.TimeoutException.class, () -> bypass.get(300, TimeUnit.MILLISECONDS));
            release.countDown();
            wbDone.get(30, TimeUnit.SECONDS);
            bypass.get(30, TimeUnit.SECONDS);
            assertArrayEquals(big, read(backing, 0, big.length));
            assertArrayEquals(big, read(wb, 0, big.length));
        } finally {
            release.countDown();
            ex.shutdownNow();
            other.shutdownNow();
        }
    }
}
