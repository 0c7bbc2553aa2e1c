package dev.strata.cache.support.stats;

import dev.strata.cache.support.time.Clock;

/**
 * A count per second over the last few seconds (the writeback pace in {@code status()}): counts
 * go into one-second buckets, and the rate is what the buckets still inside the window hold,
 * so it falls to 0 once nothing has been counted for a window. A rate taken only between two
 * events would keep the last pace for ever when the events stop.
 */
public final class RecentRate {
    /** Bucket width. */
    static final long BUCKET_NANOS = 1_000_000_000L;
    private final Clock clock;
    private final long[] counts;
    private final long[] epochs;

    /** @param windowSeconds  how many seconds the rate covers (&ge; 1) */
    public RecentRate(Clock clock, int windowSeconds) {
        if (windowSeconds < 1) {
            throw new IllegalArgumentException("window must be at least 1 s: " + windowSeconds);
        }
        this.clock = clock;
        this.counts = new long[windowSeconds];
        this.epochs = new long[windowSeconds];
        java.util.Arrays.fill(epochs, Long.MIN_VALUE);
    }

    /** Counts {@code n} events now. */
    public void add(long n) {
        add(n, clock.nanoTime());
    }

    /** {@link #add(long)} at a clock time the caller already read. */
    public synchronized void add(long n, long nowNanos) {
        long epoch = Math.floorDiv(nowNanos, BUCKET_NANOS);
        int i = (int) Math.floorMod(epoch, (long) counts.length);
        if (epochs[i] != epoch) {
            epochs[i] = epoch;
            counts[i] = 0;
        }
        counts[i] += n;
    }

    /** Events per second over the window ending now (0 when none were counted in it). */
    public synchronized long perSecond() {
        long now = clock.nanoTime();
        long epoch = Math.floorDiv(now, BUCKET_NANOS);
        long sum = 0;
        for (int i = 0; i < counts.length; i++) {
            if (epochs[i] > epoch - counts.length && epochs[i] <= epoch) {
                sum += counts[i];
            }
        }
        // the window: the full buckets before this one plus the part of this one gone by
        long span = (counts.length - 1) * BUCKET_NANOS + (now - epoch * BUCKET_NANOS);
        return sum * BUCKET_NANOS / Math.max(BUCKET_NANOS, span);
    }
}
