package dev.strata.cache.support.time;

/**
 * "Every N seconds" on an injected clock, for a daemon task's {@code runOnce()}: {@link #due}
 * says whether the interval has passed since the last time it was due, and starts the next one.
 * Not thread-safe (one task owns it).
 */
public final class Periodic {
    private final Clock clock;
    private long last;

    public Periodic(Clock clock) {
        this.clock = clock;
        this.last = clock.nanoTime();
    }

    /** Whether {@code intervalNanos} (> 0) have passed since the last due time; if so, now is the new one. */
    public boolean due(long intervalNanos) {
        long now = clock.nanoTime();
        if (intervalNanos > 0 && now - last >= intervalNanos) {
            last = now;
            return true;
        }
        return false;
    }

    /** Starts the interval again now (the work was done for another reason). */
    public void restart() {
        last = clock.nanoTime();
    }

    /** When the interval last started. */
    public long last() {
        return last;
    }
}
