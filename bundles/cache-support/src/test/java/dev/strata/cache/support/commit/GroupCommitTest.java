package dev.strata.cache.support.commit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.DeviceTimeoutException;
import dev.strata.cache.support.time.Deadline;
import dev.strata.cache.support.time.ManualClock;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class GroupCommitTest {
    final ManualClock clock = new ManualClock();
    final AtomicLong written = new AtomicLong();
    final AtomicLong flushed = new AtomicLong();
    final AtomicInteger flushes = new AtomicInteger();

    static void await(CountDownLatch l) throws java.io.IOException {
        try {
            if (!l.await(30, TimeUnit.SECONDS)) {
                throw new java.io.IOException("not released");
            }
        } catch (InterruptedException e) {
            throw new java.io.IOException(e);
        }
    }

    long far() {
        return Deadline.at(clock, 1, TimeUnit.HOURS);
    }

    @Test
    void coveredWorkDoesNotFlush() throws Exception {
        GroupCommit g = new GroupCommit("dev", clock);
        g.commit(() -> true, () -> flushes.incrementAndGet(), far());
        assertEquals(0, flushes.get());
        assertEquals(0, g.leaderFlushes());
    }

    /** A follower that queued behind a leader's flush finds its work covered and does not flush again. */
    @Test
    void followersShareTheLeadersFlush() throws Exception {
        GroupCommit g = new GroupCommit("dev", clock);
        CountDownLatch inFlush = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            written.set(1);
            Future<?> leader = pool.submit(() -> {
                g.commit(() -> flushed.get() >= 1, () -> {
                    long w = written.get(); // what this flush makes durable: read before it starts
                    inFlush.countDown();
                    await(release);
                    flushes.incrementAndGet();
                    flushed.set(w);
                }, far());
                return null;
            });
            assertTrue(inFlush.await(30, TimeUnit.SECONDS));
            // the follower's write completed before the leader read `written`
            Future<?> follower = pool.submit(() -> {
                g.commit(() -> flushed.get() >= 1, () -> flushes.incrementAndGet(), far());
                return null;
            });
            release.countDown();
            leader.get(30, TimeUnit.SECONDS);
            follower.get(30, TimeUnit.SECONDS);
            assertEquals(1, flushes.get());
            assertEquals(1, g.leaderFlushes());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aBusySeatPastTheDeadlineTimesOut() throws Exception {
        GroupCommit g = new GroupCommit("dev", clock);
        CountDownLatch inFlush = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<?> leader = pool.submit(() -> {
                g.commit(() -> false, () -> {
                    inFlush.countDown();
                    await(release);
                }, far());
                return null;
            });
            assertTrue(inFlush.await(30, TimeUnit.SECONDS));
            long d = Deadline.at(clock, 1, TimeUnit.SECONDS);
            clock.advance(2, TimeUnit.SECONDS);
            DeviceTimeoutException e = assertThrows(DeviceTimeoutException.class,
                    () -> g.commit(() -> false, () -> flushes.incrementAndGet(), d));
            assertTrue(e.getMessage().contains("timed out waiting for a flush"), e.getMessage());
            release.countDown();
            leader.get(30, TimeUnit.SECONDS);
            assertEquals(0, flushes.get());
        } finally {
            pool.shutdownNow();
        }
    }
}
