package dev.strata.cache.writeboost.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.cache.writeboost.internal.io.FlusherCoalescingTest.HeldCache;
import dev.strata.cache.writeboost.internal.testing.MemDevice;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Flusher threads (three by default; two where the order of the writes on the device is
 * checked): while one log write is held by the device, the next sealed records are written
 * meanwhile (more writes in flight), but nothing counts as written, and no
 * FLUSH returns, until the held write has completed: completion stays in log order. Everything
 * recovers exactly afterwards.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FlusherPipelineTest {
    static final int MIB = 1 << 20;
    static final int BS = 4096;

    @Test
    void aSecondWriteGoesOutWhileTheFirstIsHeldButCompletesAfterIt() throws Exception {
        HeldCache cache = new HeldCache();
        MemDevice backing = new MemDevice("backing", 64L * MIB);
        WriteboostCache.Options o = WriteboostCache.Options.defaults().manual().withFlushers(2);
        WriteboostCache wb = WriteboostCache.open("wb", backing, cache, false, FlusherCoalescingTest.T, o, null);
        ExecutorService ex = Executors.newSingleThreadExecutor();
        MemDevice image;
        int n;
        try {
            long before = wb.lastWrittenId();
            int i = writeBlocks(wb, 0, 5);
            Future<?> first = ex.submit(() -> {
                wb.flush(); // seals the 5-block record: the first log write, held
                return null;
            });
            assertTrue(cache.firstLogWrite.await(60, TimeUnit.SECONDS), "the first record is being written");
            // the rest of segment 0 and segment 1: sealed while the first write is held
            n = writeBlocks(wb, i, 5 + 249 + 255);
            assertTrue(cache.secondWritten.await(60, TimeUnit.SECONDS), "a second log write goes out while the first is held");
            assertEquals(before, wb.lastWrittenId(), "nothing counts as written before the held write has completed");
            assertFalse(first.isDone(), "the FLUSH covering the held record has not returned");
            cache.release.countDown();
            first.get(60, TimeUnit.SECONDS);
            wb.flush();
            List<long[]> w = cache.writes();
            assertEquals(6L * BS, w.get(0)[1], "the FLUSH-sealed record: header and 5 blocks");
            long total = contiguousTotal(w);
            assertEquals(2L * 256 * BS, total, "segments 0 and 1 written exactly once");
            image = cache.d.crash(new Random(1)); // everything was flushed: it must all survive
            wb.close();
        } finally {
            cache.release.countDown();
            ex.shutdownNow();
        }
        assertRecovers(backing, image, n);
    }

    /**
     * A flusher whose write finished before the held one does not wait for it: it goes on to the
     * next batch (before, it waited in the completion for the write before its own, and the
     * device had one write in flight for that long; a fifth of an in-process run). Still nothing
     * counts as written until the held write has completed, and then all of it does, in order.
     */
    @Test
    void aFlusherWhoseWriteFinishedFirstWritesTheNextBatchWhileTheHeldOneIsInFlight() throws Exception {
        // two flushers: the two writes that go out while the first is held are then both the
        // second flusher's, in order (with three, two flushers could write them side by side)
        holdTheFirstWriteOfThreeSegments(WriteboostCache.Options.defaults().manual().withFlushers(2), false, 2);
    }

    /**
     * The default three flushers: while the first write is held, the other two write the next
     * batches side by side (they may reach the device in either order), and still nothing counts
     * as written, and the FLUSH does not return, until the held write has completed; then every
     * segment is on the device exactly once and recovers.
     */
    @Test
    void threeFlushersWriteSideBySideButCompleteInLogOrder() throws Exception {
        WriteboostCache.Options o = WriteboostCache.Options.defaults().manual();
        assertEquals(3, o.flushers(), "three flusher threads by default");
        holdTheFirstWriteOfThreeSegments(o, true, 3);
    }

    /**
     * Holds the first log write (a FLUSH-sealed record of 5 blocks), fills segments 0 to 2 meanwhile,
     * checks that two more writes went out but nothing counts as written and the FLUSH waits, then
     * releases it and checks that the log writes, in arrival order or ({@code anyOrder}) sorted by
     * offset, cover the three segments once, and that everything recovers.
     */
    private static void holdTheFirstWriteOfThreeSegments(WriteboostCache.Options o, boolean anyOrder, int seed)
            throws Exception {
        HeldCache cache = new HeldCache();
        MemDevice backing = new MemDevice("backing", 64L * MIB);
        WriteboostCache wb = WriteboostCache.open("wb", backing, cache, false, FlusherCoalescingTest.T, o, null);
        ExecutorService ex = Executors.newSingleThreadExecutor();
        MemDevice image;
        int n;
        try {
            long before = wb.lastWrittenId();
            int i = writeBlocks(wb, 0, 5);
            Future<?> first = ex.submit(() -> {
                wb.flush(); // the first log write, held
                return null;
            });
            assertTrue(cache.firstLogWrite.await(60, TimeUnit.SECONDS), "the first record is being written");
            // the rest of segment 0, then segments 1 and 2: with this cache's 4 buffers one write
            // covers at most one segment, so these are at least two more writes
            n = writeBlocks(wb, i, 5 + 249 + 255 + 255);
            assertTrue(cache.twoMoreWritten.await(60, TimeUnit.SECONDS),
                    "two more log writes reach the device while the first is held");
            assertEquals(before, wb.lastWrittenId(), "nothing counts as written before the held write has completed");
            assertFalse(first.isDone(), "the FLUSH covering the held record has not returned");
            cache.release.countDown();
            first.get(60, TimeUnit.SECONDS);
            wb.flush();
            List<long[]> w = cache.writes();
            if (anyOrder) {
                w.sort((x, y) -> Long.compare(x[0], y[0]));
            }
            assertEquals(3L * 256 * BS, contiguousTotal(w), "segments 0, 1 and 2 written exactly once");
            image = cache.d.crash(new Random(seed)); // everything was flushed: it must all survive
            wb.close();
        } finally {
            cache.release.countDown();
            ex.shutdownNow();
        }
        assertRecovers(backing, image, n);
    }

    /** Writes blocks {@code from} to {@code to} (exclusive) of the coalescing test's pattern; returns {@code to}. */
    private static int writeBlocks(WriteboostCache wb, int from, int to) throws Exception {
        for (int i = from; i < to; i++) {
            wb.write(FlusherCoalescingTest.blockOf(i) * BS, ByteBuffer.wrap(FlusherCoalescingTest.content(i)), 0);
        }
        return to;
    }

    /** Checks that each log write continues the previous one on the device; returns the bytes written in all. */
    private static long contiguousTotal(List<long[]> w) {
        long total = 0;
        for (int k = 0; k < w.size(); k++) {
            if (k > 0) {
                assertEquals(w.get(k - 1)[0] + w.get(k - 1)[1], w.get(k)[0], "log write " + k + " continues the previous one");
            }
            total += w.get(k)[1];
        }
        return total;
    }

    /** Reopens the cache from {@code image} and checks that blocks 0 to n - 1 read back exactly. */
    private static void assertRecovers(MemDevice backing, MemDevice image, int n) throws Exception {
        WriteboostCache re = WriteboostCache.open("wb", backing, image, false, FlusherCoalescingTest.T,
                WriteboostCache.Options.defaults().manual(), null);
        try {
            for (int k = 0; k < n; k++) {
                ByteBuffer b = ByteBuffer.allocate(BS);
                re.read(FlusherCoalescingTest.blockOf(k) * BS, b);
                assertArrayEquals(FlusherCoalescingTest.content(k), b.array(), "block " + k + " after recovery");
            }
        } finally {
            re.close();
        }
    }
}
