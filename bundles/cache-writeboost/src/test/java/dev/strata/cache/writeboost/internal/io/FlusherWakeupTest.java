package dev.strata.cache.writeboost.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.cache.writeboost.internal.io.FlusherCoalescingTest.HeldCache;
import dev.strata.cache.writeboost.internal.testing.MemDevice;
import java.nio.ByteBuffer;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Sealing a record wakes a flusher through the flushers' own condition and nothing else: the
 * daemons' condition (writeback, record updater, data sync, waiting writers and FLUSHes) is
 * signalled only when something they wait for changes, e.g. a log write completing. With one
 * condition for both, every seal and every marker woke all five daemons. While the first log
 * write is held, no write completes: sealing a whole segment must not signal the daemons'
 * condition at all, and the second flusher must still be woken to write it.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FlusherWakeupTest {
    static final int MIB = 1 << 20;
    static final int BS = 4096;

    @Test
    void aSealWakesAFlusherButNotTheOtherDaemons() throws Exception {
        HeldCache cache = new HeldCache();
        MemDevice backing = new MemDevice("backing", 64L * MIB);
        WriteboostCache wb = WriteboostCache.open("wb", backing, cache, false, FlusherCoalescingTest.T,
                WriteboostCache.Options.defaults().manual(), null);
        ExecutorService ex = Executors.newSingleThreadExecutor();
        int n;
        try {
            int i = 0;
            for (; i < 5; i++) {
                wb.write(FlusherCoalescingTest.blockOf(i) * BS, ByteBuffer.wrap(FlusherCoalescingTest.content(i)), 0);
            }
            Future<?> first = ex.submit(() -> {
                wb.flush(); // seals the 5-block record: the first log write, held
                return null;
            });
            assertTrue(cache.firstLogWrite.await(60, TimeUnit.SECONDS), "the first record is being written");
            long events = wb.events();
            long queued = wb.queuedEvents();
            // the rest of segment 0: sealed (and its marker queued) when it is full, while nothing completes
            for (; i < 5 + 249 + 1; i++) {
                wb.write(FlusherCoalescingTest.blockOf(i) * BS, ByteBuffer.wrap(FlusherCoalescingTest.content(i)), 0);
            }
            n = i;
            assertTrue(cache.secondWritten.await(60, TimeUnit.SECONDS), "the second flusher was woken for the sealed record");
            assertEquals(events, wb.events(), "sealing records signalled the daemons' condition");
            assertTrue(wb.queuedEvents() >= queued + 2, "the seal and the segment's marker signal the flushers");
            cache.release.countDown();
            first.get(60, TimeUnit.SECONDS);
            wb.flush(); // completes: everything written and durable
            assertTrue(wb.events() > events, "completed log writes signal the daemons' condition");
            for (int k = 0; k < n; k++) {
                ByteBuffer b = ByteBuffer.allocate(BS);
                wb.read(FlusherCoalescingTest.blockOf(k) * BS, b);
                assertArrayEquals(FlusherCoalescingTest.content(k), b.array(), "block " + k);
            }
        } finally {
            cache.release.countDown();
            ex.shutdownNow();
            wb.close();
        }
    }
}
