package dev.strata.cache.support.commit;

import dev.strata.api.DeviceIOException;
import dev.strata.api.DeviceTimeoutException;
import dev.strata.cache.support.time.Clock;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * Group commit: concurrent flushes share one device flush. A caller whose work is already durable
 * ({@code covered}) returns at once; otherwise it queues for the leader's seat. The first in
 * becomes the leader and flushes for everyone queued behind it: a follower that gets the seat next
 * finds its work covered by that flush (it re-checks {@code covered} first) and returns without
 * flushing again. {@code covered} must become true for every caller whose work was complete when
 * a leader's flush started (the caller's ids are at most what the leader read before flushing).
 *
 * <p>Lock order: the seat is taken before the owner's state lock and never while holding it.
 */
public final class GroupCommit {
    /** What the leader does for the group. */
    @FunctionalInterface
    public interface Leader {
        void flush() throws IOException;
    }

    private final String device;
    private final Clock clock;
    private final ReentrantLock seat = new ReentrantLock();
    private long leaders;
    private long shared;

    /** @param clock the clock deadlines are on */
    public GroupCommit(String device, Clock clock) {
        this.device = device;
        this.clock = clock;
    }

    /**
     * Makes sure the caller's work is durable.
     *
     * @param deadlineNanos when to give up waiting for the seat (on the clock)
     * @throws DeviceTimeoutException the seat was not free before the deadline
     * @throws DeviceIOException      interrupted
     * @throws IOException            the leader's flush failed (this caller led it)
     */
    public void commit(BooleanSupplier covered, Leader leader, long deadlineNanos) throws IOException {
        if (covered.getAsBoolean()) {
            return;
        }
        try {
            if (!seat.tryLock(Math.max(1, deadlineNanos - clock.nanoTime()), TimeUnit.NANOSECONDS)) {
                throw new DeviceTimeoutException(device, -1, "timed out waiting for a flush");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DeviceIOException(device, -1, "interrupted while waiting for a flush");
        }
        try {
            if (covered.getAsBoolean()) {
                shared++;
                return; // the previous leader's flush covered us
            }
            leaders++;
            leader.flush();
        } finally {
            seat.unlock();
        }
    }

    /** Flushes done by a leader (for tests and status). */
    public long leaderFlushes() {
        seat.lock();
        try {
            return leaders;
        } finally {
            seat.unlock();
        }
    }

    /** Callers that found a leader's flush had covered them. */
    public long sharedFlushes() {
        seat.lock();
        try {
            return shared;
        } finally {
            seat.unlock();
        }
    }
}
