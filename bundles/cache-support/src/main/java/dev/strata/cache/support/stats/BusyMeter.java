package dev.strata.cache.support.stats;

import dev.strata.cache.support.time.Clock;
import java.util.concurrent.atomic.LongAdder;

/**
 * How busy the backing device is with foreground I/O: the share of wall time during which at
 * least one foreground request was in flight, over the last second ({@link #WINDOW_NANOS}),
 * whenever and however rarely it is sampled.
 *
 * <p>Why a window and not "since the previous sample": writeback samples only while it has work,
 * so after an idle gap a since-last-sample share would include the gap, read "not busy" and start
 * writeback under full foreground load. The controllers' contract (
 * {@code CacheLoad.backingBusyPercent}) and docs/daemons.md say "the last second".
 *
 * <p>How: the meter keeps the running total of busy nanoseconds (as before) and a ring of that
 * total's values at every {@link #BUCKET_NANOS} boundary of its clock. Between two calls the
 * in-flight count is constant, so the total at a boundary that passed since the last call is
 * exact; each call first records the boundaries that passed (an O(1) check, a short loop once per
 * bucket, at most one ring's length after a long gap). The busy time since "now minus one
 * second" is the total now minus the total then, interpolated inside the one bucket that holds
 * "then" — so the reading is exact to within that bucket: at most
 * {@code BUCKET_NANOS * 100 / WINDOW_NANOS} = 2 percentage points. A meter younger than a second
 * measures over its age. No allocation after construction.
 */
public final class BusyMeter {
    /** The measuring window: the last second (dm-writeboost's modulator reads one second). */
    public static final long WINDOW_NANOS = 1_000_000_000L;
    /** The ring's resolution: 20 ms, so the window's edge is off by at most 2 % of it. */
    public static final long BUCKET_NANOS = 20_000_000L;
    private static final int BUCKETS = (int) (WINDOW_NANOS / BUCKET_NANOS);

    private final Clock clock;
    private final long origin;
    /** Busy total at boundary k (origin + k * BUCKET_NANOS), at index k % ring.length. */
    private final long[] ring = new long[BUCKETS + 1];
    /** Highest boundary index recorded in the ring. */
    private long rolled;
    private long nextBoundary;
    private int inflight;
    private long busySince;
    private long busyNanos;
    private long sampleStart;
    private long ops;
    private long sampleOps;
    private long lastOpNanos;

    public BusyMeter(Clock clock) {
        this.clock = clock;
        this.origin = clock.nanoTime();
        this.sampleStart = origin;
        this.lastOpNanos = origin;
        this.lastFastOpNanos = origin;
        this.nextBoundary = origin + BUCKET_NANOS;
    }

    public synchronized void begin() {
        long now = clock.nanoTime();
        roll(now);
        if (inflight++ == 0) {
            busySince = now;
        }
    }

    public synchronized void end() {
        long now = clock.nanoTime();
        roll(now);
        if (--inflight == 0) {
            busyNanos += now - busySince;
        }
        ops++;
        lastOpNanos = now;
    }

    private final LongAdder fastOps = new LongAdder();
    private volatile long lastFastOpNanos;

    /** Counts a foreground request that did not touch the backing device (lock-free: on the hot path). */
    public void op() {
        op(clock.nanoTime());
    }

    /**
     * {@link #op()} with the clock time the caller already has (one clock read less per request).
     * The time of the last request is stored only when it moved by more than
     * {@link #LAST_OP_GRAIN_NANOS}: it is reported in milliseconds, and a store by every request
     * bounced its cache line between the cores of all concurrent writers.
     */
    public void op(long nowNanos) {
        fastOps.increment();
        if (nowNanos - lastFastOpNanos > LAST_OP_GRAIN_NANOS) {
            lastFastOpNanos = nowNanos;
        }
    }

    /** How stale the last request's time may be (well under the reported millisecond). */
    static final long LAST_OP_GRAIN_NANOS = 100_000;

    /**
     * Busy percent over the last second; foreground ops per second since the previous sample;
     * milliseconds since the last foreground op. Sampling changes only the ops rate's interval.
     */
    public synchronized long[] sample() {
        long now = clock.nanoTime();
        roll(now);
        long start = Math.max(origin, now - WINDOW_NANOS);
        long span = Math.max(1, now - start);
        long pct = Math.min(100, Math.max(0, (busyAt(now) - recordedBusyAt(start)) * 100 / span));
        long all = ops + fastOps.sum();
        long rate = (all - sampleOps) * 1_000_000_000L / Math.max(1, now - sampleStart);
        sampleStart = now;
        sampleOps = all;
        long last = Math.max(lastOpNanos, lastFastOpNanos);
        return new long[] {pct, rate, (now - last) / 1_000_000};
    }

    /** Busy total at {@code t}, for t no earlier than the last state change (exact). */
    private long busyAt(long t) {
        return busyNanos + (inflight > 0 ? t - busySince : 0);
    }

    /** Records the busy total at every boundary up to {@code now}; cheap unless one passed. */
    private void roll(long now) {
        if (now < nextBoundary) {
            return;
        }
        long target = (now - origin) / BUCKET_NANOS;
        // after a gap longer than the ring, only the last ring's worth of boundaries survive
        for (long k = Math.max(rolled + 1, target - BUCKETS); k <= target; k++) {
            ring[(int) (k % ring.length)] = busyAt(origin + k * BUCKET_NANOS);
        }
        rolled = target;
        nextBoundary = origin + (target + 1) * BUCKET_NANOS;
    }

    /** Busy total at {@code t} within the last window, interpolated inside its bucket. */
    private long recordedBusyAt(long t) {
        long j = (t - origin) / BUCKET_NANOS;
        long from = ring[(int) (j % ring.length)];
        long into = t - (origin + j * BUCKET_NANOS);
        if (into == 0) {
            return from;
        }
        long to = j + 1 <= rolled ? ring[(int) ((j + 1) % ring.length)] : busyAt(origin + (j + 1) * BUCKET_NANOS);
        return from + (to - from) * into / BUCKET_NANOS;
    }
}
