package dev.strata.daemons.internal.sim;

import dev.strata.api.WritebackController.CacheLoad;
import dev.strata.api.WritebackController.Decision;
import dev.strata.api.WritebackController.Session;

/**
 * A write-back cache and its backing device, simulated in steps of a fake clock, bound to one
 * controller session. The front end dirties blocks at {@link #foregroundBlocksPerSec} (stalling
 * when the cache is full) and may keep the backing device busy for a share of its time
 * ({@link #foregroundBackingShare}, reads that miss); the writeback thread asks the session,
 * writes what it is granted at the backing device's remaining speed, and asks again when done or
 * when told to. A busy meter over the last second feeds {@link CacheLoad#backingBusyPercent()}.
 */
final class SimulatedCache {
    static final long MS = 1_000_000L;
    static final int BLOCK = 4096;

    final long capacity;
    final int maxBatch;
    final double backingBlocksPerSec;
    private final Session session;

    double foregroundBlocksPerSec;
    double foregroundBackingShare;

    private long now;
    private double dirty;
    private long lastForeground = Long.MIN_VALUE / 2;
    private long inFlight;
    private long busyUntil;
    private long askAt;
    private long writtenBack;
    private long stalledSteps;
    private long decisions;
    private final double[] busy = new double[1000]; // busy share of each of the last 1000 ms
    private double busySum;

    SimulatedCache(Session session, long capacity, int maxBatch, double backingBlocksPerSec, long startNanos) {
        this.session = session;
        this.capacity = capacity;
        this.maxBatch = maxBatch;
        this.backingBlocksPerSec = backingBlocksPerSec;
        this.now = startNanos;
        this.askAt = startNanos;
    }

    /** Runs {@code millis} steps of 1 ms. */
    void run(long millis) {
        for (long i = 0; i < millis; i++) {
            step();
        }
    }

    /**
     * Runs 1 ms steps until {@code done} holds or {@code maxMillis} have passed.
     *
     * @return the steps run, or -1 if {@code done} never held
     */
    long runUntil(java.util.function.BooleanSupplier done, long maxMillis) {
        for (long i = 0; i < maxMillis; i++) {
            if (done.getAsBoolean()) {
                return i;
            }
            step();
        }
        return done.getAsBoolean() ? maxMillis : -1;
    }

    private void step() {
        // front end
        if (foregroundBlocksPerSec > 0) {
            lastForeground = now;
            double add = foregroundBlocksPerSec / 1000.0;
            if (dirty + add > capacity) {
                stalledSteps++;
                add = Math.max(0, capacity - dirty);
            }
            dirty += add;
        }
        // writeback thread
        if (inFlight > 0 && now - busyUntil >= 0) {
            dirty -= inFlight;
            writtenBack += inFlight;
            inFlight = 0;
            askAt = now;
        }
        if (inFlight == 0 && now - askAt >= 0) {
            decisions++;
            Decision d = session.decide(load());
            long n = Math.min(d.blocks(), (long) Math.floor(dirty));
            if (d.blocks() > load().maxBatch()) {
                throw new AssertionError("granted " + d.blocks() + " blocks, more than maxBatch " + maxBatch);
            }
            if (d.askAgainNanos() < 0) {
                throw new AssertionError("negative askAgainNanos " + d.askAgainNanos());
            }
            if (n > 0) {
                inFlight = n;
                double speed = backingBlocksPerSec * (1 - foregroundBackingShare);
                busyUntil = now + Math.max(MS, (long) Math.ceil(n / speed * 1e9));
            } else {
                askAt = now + Math.max(MS, d.askAgainNanos());
            }
        }
        // busy meter: the front end's share, and the rest while writeback is in flight
        double b = Math.min(1, foregroundBackingShare + (inFlight > 0 ? 1 - foregroundBackingShare : 0));
        int slot = (int) ((now / MS) % busy.length);
        busySum += b - busy[slot];
        busy[slot] = b;
        now += MS;
    }

    CacheLoad load() {
        long idleMs = Math.max(0, (now - lastForeground) / MS);
        int busyPercent = (int) Math.round(Math.max(0, Math.min(100, busySum / busy.length * 100)));
        return new CacheLoad(now, (long) Math.floor(dirty), capacity, BLOCK, busyPercent, 0,
                Math.round(foregroundBlocksPerSec), idleMs, maxBatch);
    }

    double dirtyPercent() {
        return 100.0 * dirty / capacity;
    }

    long dirtyBlocks() {
        return (long) Math.floor(dirty);
    }

    long writtenBack() {
        return writtenBack;
    }

    long stalledMillis() {
        return stalledSteps;
    }

    long decisions() {
        return decisions;
    }

    long now() {
        return now;
    }

    Session session() {
        return session;
    }
}
