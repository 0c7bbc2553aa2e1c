package dev.strata.daemons.internal;

/**
 * Spaces writeback to a rate, the way bcache's {@code bch_next_delay} (drivers/md/bcache/util.c)
 * does: it keeps {@code next}, the time the next write may start; a grant of {@code n} blocks
 * moves it on by {@code n / rate}. Two bounds from bcache keep it responsive: it never falls more
 * than {@link #MAX_BEHIND_NANOS} behind (a stalled writer does not bank an unbounded burst) and
 * never runs more than {@link #MAX_AHEAD_NANOS} ahead (a cache is never told to wait longer than
 * that, so it notices when the rate goes up).
 * <p>
 * bcache writes first and sleeps after; a Strata cache asks first, so a grant is what is due now
 * (the backlog since {@code next}), but at least one {@link #QUANTUM_NANOS quantum} of the rate and
 * at least one block, so a cache that asks eagerly still gets runs long enough to merge instead
 * of one block at a time. Time is whatever the caller passes (no clock here). Not thread-safe:
 * one session, one thread at a time.
 */
public final class TokenBucket {
    /** bcache: "Don't let us fall further than 2 seconds behind". */
    public static final long MAX_BEHIND_NANOS = 2_000_000_000L;
    /** bcache: "don't let us sleep more than 2.5 seconds". */
    public static final long MAX_AHEAD_NANOS = 2_500_000_000L;
    /** The smallest grant, as time at the current rate. */
    public static final long QUANTUM_NANOS = 100_000_000L;

    private long next;
    private boolean primed;
    /** The rate of the last grant; a wait still ahead is rescaled when the rate changes. */
    private double lastRate;

    /**
     * Takes what may be written now.
     *
     * @param now           the caller's time in nanoseconds
     * @param blocksPerSec  the rate (&gt; 0)
     * @param limit         the most the caller can use now (the batch limit, the dirty blocks)
     * @return blocks granted, 0 if the caller must wait {@link #waitNanos(long)}
     */
    public int take(long now, double blocksPerSec, long limit) {
        if (limit <= 0 || !(blocksPerSec > 0)) {
            return 0;
        }
        prime(now);
        rescale(now, blocksPerSec);
        if (now < next) {
            return 0;
        }
        if (now - next > MAX_BEHIND_NANOS) {
            next = now - MAX_BEHIND_NANOS;
        }
        double due = (now - next) * blocksPerSec / 1e9;
        double quantum = QUANTUM_NANOS * blocksPerSec / 1e9;
        long g = (long) Math.floor(Math.max(due, quantum));
        g = Math.max(1, Math.min(g, Math.min(limit, Integer.MAX_VALUE)));
        next += Math.round(g * 1e9 / blocksPerSec);
        if (next - now > MAX_AHEAD_NANOS) {
            // one block at a tiny rate can cost more than the bound: bcache forgives the rest
            next = now + MAX_AHEAD_NANOS;
        }
        return (int) g;
    }

    /**
     * Charges {@code blocks} more (or, negative, fewer) than were granted: the cache wrote back
     * whole units beyond its grant, or found blocks already clean. The next slot moves by
     * {@code blocks / rate}; unlike a grant's, this debt is not capped at {@link #MAX_AHEAD_NANOS}
     * (a cache that writes 255 blocks per grant at 1 block/s must wait 254 s, not 2.5 s), but it
     * is kept in blocks: a later change of rate rescales what is left of it.
     */
    public void charge(long blocks, double blocksPerSec) {
        if (!primed || blocks == 0 || !(blocksPerSec > 0)) {
            return;
        }
        next += Math.round(blocks * 1e9 / blocksPerSec);
        lastRate = blocksPerSec;
    }

    /** A wait still ahead of {@code now}, taken at another rate, in blocks at the new one. */
    private void rescale(long now, double blocksPerSec) {
        if (lastRate > 0 && blocksPerSec != lastRate && next > now) {
            next = now + Math.round((next - now) * lastRate / blocksPerSec);
        }
        lastRate = blocksPerSec;
    }

    /** How long until a grant is possible (0: now). */
    public long waitNanos(long now) {
        prime(now);
        return Math.max(0, Math.min(next - now, MAX_AHEAD_NANOS));
    }

    /**
     * How far the writer is behind the rate: how long ago it could have started its next write
     * (negative: it is waiting, ahead of the rate).
     */
    public long behindNanos(long now) {
        return primed ? now - next : 0;
    }

    /** Starts over with nothing banked: the next grant is one quantum. */
    public void reset(long now) {
        next = now;
        primed = true;
    }

    private void prime(long now) {
        if (!primed) {
            reset(now);
        }
    }
}
