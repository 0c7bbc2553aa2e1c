package dev.strata.cache.writecache.internal.io;

import dev.strata.api.CacheTarget.Keys;
import dev.strata.cache.support.stats.BusyMeter;
import dev.strata.cache.support.stats.Counters;
import dev.strata.cache.support.stats.Counters.Counter;
import dev.strata.cache.support.stats.LatencyRecorder;
import dev.strata.cache.support.stats.RecentRate;
import dev.strata.cache.support.time.Clock;

/**
 * The counters behind dm-writecache's status figures (per block, except flushes and discards: per
 * request), the request latencies, the backing device's foreground busy meter and the time of the
 * last write that went around (for {@code pause_writeback}). Counters are cache-support's
 * lock-free ones, named by their status keys.
 */
final class Stats {
    private final Clock clock;
    private final Counters all = new Counters();
    final Counter reads = all.counter("reads");
    final Counter readHits = all.counter(Keys.READ_HITS);
    final Counter writes = all.counter("writes");
    final Counter writeHitsUncommitted = all.counter("write_hits_uncommitted");
    final Counter writeHitsCommitted = all.counter("write_hits_committed");
    final Counter writesAround = all.counter("writes_around");
    final Counter writesAllocated = all.counter("writes_allocated");
    final Counter writesBlockedOnFreelist = all.counter("writes_blocked_on_freelist");
    final Counter flushes = all.counter("flushes");
    final Counter flushesForwarded = all.counter("flushes_forwarded");
    final Counter discards = all.counter("discards");
    final Counter commits = all.counter("commits");
    final Counter writtenBack = all.counter(Keys.WRITTEN_BACK_BLOCKS);
    final Counter writebackBatches = all.counter("writeback_batches");
    final Counter writebackErrors = all.counter(Keys.WRITEBACK_ERROR);
    /**
     * Blocks written back per second over the last few seconds: {@code cache:stats}' shared
     * layout reads {@link Keys#WRITEBACK_RATE} for its "writeback" line, and said "writeback
     * idle" while writecache wrote back (it did not report the key).
     */
    final RecentRate writebackRate;
    /** The rate's window, as writeboost's. */
    static final int WRITEBACK_RATE_WINDOW_S = 5;
    final LatencyRecorder readLatency;
    final LatencyRecorder writeLatency;
    final LatencyRecorder flushLatency;
    /** Foreground requests' share of the backing device's time: what the modulator paces on. */
    final BusyMeter busy;
    /** When a write last went around to the backing device (clock nanos; Long.MIN_VALUE: never). */
    private volatile long lastAroundNanos = Long.MIN_VALUE;

    Stats(Clock clock) {
        this.clock = clock;
        this.readLatency = new LatencyRecorder("read", clock);
        this.writeLatency = new LatencyRecorder("write", clock);
        this.flushLatency = new LatencyRecorder("flush", clock);
        this.busy = new BusyMeter(clock);
        this.writebackRate = new RecentRate(clock, WRITEBACK_RATE_WINDOW_S);
    }

    /** A batch of {@code blocks} was written back (flushed, freed durably). */
    void writtenBack(long blocks) {
        writtenBack.add(blocks);
        writebackRate.add(blocks);
    }

    /** {@code blocks} went around to the backing device now. */
    void around(long blocks) {
        writesAround.add(blocks);
        lastAroundNanos = clock.nanoTime();
    }

    /** Whether a write went around less than {@code millis} ago (dm-writecache's pause_writeback). */
    boolean aroundWithin(long millis) {
        long last = lastAroundNanos;
        return millis > 0 && last != Long.MIN_VALUE && clock.nanoTime() - last < millis * 1_000_000L;
    }

    /** When a pause of {@code millis} after the last write around ends (clock nanos). */
    long pauseEnd(long millis) {
        return lastAroundNanos + millis * 1_000_000L;
    }

    /** The latency percentiles, as writeboost shows them. */
    void renderLatencies(java.util.Map<String, String> status) {
        readLatency.render(status);
        writeLatency.render(status);
        flushLatency.render(status);
    }
}
