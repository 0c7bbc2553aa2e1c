package dev.strata.cache.support.time;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** A clock that moves only when told to (tests): pacing, deadlines and latencies become exact. */
public final class ManualClock implements Clock {
    private final AtomicLong now;

    public ManualClock() {
        this(1_000_000_000L);
    }

    public ManualClock(long startNanos) {
        this.now = new AtomicLong(startNanos);
    }

    @Override
    public long nanoTime() {
        return now.get();
    }

    /** Moves the clock forward; returns the new time. */
    public long advance(long amount, TimeUnit unit) {
        return now.addAndGet(unit.toNanos(amount));
    }

    public void set(long nanos) {
        now.set(nanos);
    }
}
