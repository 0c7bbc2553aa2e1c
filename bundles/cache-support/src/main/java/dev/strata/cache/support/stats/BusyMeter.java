package dev.strata.cache.support.stats;

import dev.strata.cache.support.time.Clock;

/**
 * How busy the backing device is with foreground I/O: the share of wall time during which at
 * least one foreground request was in flight, over the interval since the previous sample.
 */
public final class BusyMeter {
    private final Clock clock;
    private int inflight;
    private long busySince;
    private long busyNanos;
    private long sampleStart;
    private long sampleBusy;
    private long ops;
    private long sampleOps;
    private long lastOpNanos;

    public BusyMeter(Clock clock) {
        this.clock = clock;
        this.sampleStart = clock.nanoTime();
        this.lastOpNanos = sampleStart;
        this.lastFastOpNanos = sampleStart;
    }

    public synchronized void begin() {
        if (inflight++ == 0) {
            busySince = clock.nanoTime();
        }
    }

    public synchronized void end() {
        long now = clock.nanoTime();
        if (--inflight == 0) {
            busyNanos += now - busySince;
        }
        ops++;
        lastOpNanos = now;
    }

    private final java.util.concurrent.atomic.LongAdder fastOps = new java.util.concurrent.atomic.LongAdder();
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

    /** Busy percent and ops per second since the previous sample; starts a new interval. */
    public synchronized long[] sample() {
        long now = clock.nanoTime();
        long busy = busyNanos + (inflight > 0 ? now - busySince : 0);
        long span = Math.max(1, now - sampleStart);
        long pct = Math.min(100, Math.max(0, (busy - sampleBusy) * 100 / span));
        long all = ops + fastOps.sum();
        long rate = (all - sampleOps) * 1_000_000_000L / span;
        sampleStart = now;
        sampleBusy = busy;
        sampleOps = all;
        long last = Math.max(lastOpNanos, lastFastOpNanos);
        return new long[] {pct, rate, (now - last) / 1_000_000};
    }
}
