package dev.strata.cache.writeboost.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.cache.writeboost.internal.io.FlusherCoalescingTest.HeldCache;
import dev.strata.cache.writeboost.internal.testing.MemDevice;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * With sealed records queued, a flusher whose write completes takes the next batch in the same
 * hold of the log lock as the completion: one acquisition of the lock every writer takes per
 * request, per batch, instead of two (each acquisition after a completion queued the flusher
 * behind the writers it had just woken, while the device had one write fewer in flight). The
 * log still completes in order and recovers exactly.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FlusherChainTest {
    static final int MIB = 1 << 20;
    static final int BS = 4096;

    @Test
    void aBacklogIsWrittenWithOneAcquisitionOfTheLogLockPerBatch() throws Exception {
        HeldCache cache = new HeldCache();
        MemDevice backing = new MemDevice("backing", 64L * MIB);
        // one flusher thread: every batch of the backlog is taken and completed by it
        WriteboostCache.Options o = WriteboostCache.Options.defaults().manual().withFlushers(1);
        WriteboostCache wb = WriteboostCache.open("wb", backing, cache, false, FlusherCoalescingTest.T, o, null);
        ExecutorService ex = Executors.newSingleThreadExecutor();
        MemDevice image;
        int n;
        try {
            int i = writeBlocks(wb, 0, 5);
            Future<?> first = ex.submit(() -> {
                wb.flush(); // the first log write, held
                return null;
            });
            assertTrue(cache.firstLogWrite.await(60, TimeUnit.SECONDS), "the first record is being written");
            // the rest of segment 0 and segments 1 and 2, sealed while the flusher is in the held
            // write (this cache's 4 buffers hold them): a backlog of at least two more batches
            n = writeBlocks(wb, i, 5 + 249 + 255 + 255);
            assertFalse(first.isDone(), "the FLUSH covering the held record has not returned");
            long[] before = wb.parts.flusher.lockHoldsAndBatches();
            cache.release.countDown();
            first.get(60, TimeUnit.SECONDS);
            wb.flush();
            long[] after = wb.parts.flusher.lockHoldsAndBatches();
            long batches = after[1] - before[1];
            long holds = after[0] - before[0];
            assertTrue(batches >= 3, "the held batch and at least two more completed, got " + batches);
            // per batch one acquisition (its completion and the next take), and at most one more:
            // the take that finds the queue empty; taking each batch apart made it 2 per batch
            assertTrue(holds <= batches + 1, holds + " acquisitions of the log lock for " + batches + " batches");
            assertEquals(3L * 256 * BS, written(cache), "segments 0, 1 and 2 written exactly once");
            image = cache.d.crash(new Random(3)); // everything was flushed: it must all survive
            wb.close();
        } finally {
            cache.release.countDown();
            ex.shutdownNow();
        }
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

    private static int writeBlocks(WriteboostCache wb, int from, int to) throws Exception {
        for (int i = from; i < to; i++) {
            wb.write(FlusherCoalescingTest.blockOf(i) * BS, ByteBuffer.wrap(FlusherCoalescingTest.content(i)), 0);
        }
        return to;
    }

    /** Bytes of all log writes, each continuing the one before on the device. */
    private static long written(HeldCache cache) {
        long total = 0;
        long end = -1;
        for (long[] w : cache.writes()) {
            if (end >= 0) {
                assertEquals(end, w[0], "each log write continues the previous one");
            }
            end = w[0] + w[1];
            total += w[1];
        }
        return total;
    }
}
