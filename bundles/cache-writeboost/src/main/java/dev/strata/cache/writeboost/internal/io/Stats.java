package dev.strata.cache.writeboost.internal.io;

import dev.strata.cache.support.stats.BusyMeter;
import dev.strata.cache.support.stats.Counters;
import dev.strata.cache.support.stats.LatencyRecorder;
import dev.strata.cache.support.stats.RecentRate;
import dev.strata.cache.support.time.Clock;
import dev.strata.cache.writeboost.internal.format.Layout;

/** The cache's counters, latency histograms and backing-device busy meter (rendered by {@link WriteboostCache#status()}). */
final class Stats {
    static final int SB = Layout.SEGMENT_BLOCKS;
    static final int BS = Layout.BLOCK;


    // ---- counters ----
    // (in groups, each rendered where its keys have always been in status())
    final Counters readCounters = new Counters();
    final Counters.Counter readHits = readCounters.counter("read_hits");
    final Counters.Counter readMisses = readCounters.counter("read_misses");
    final Counters.Counter readPartial = readCounters.counter("read_partial_hits");
    /** Reads served straight from the backing device (passthrough). */
    final Counters.Counter readsPassedThrough = readCounters.counter("reads_passed_through");
    final Counters writeCounters = new Counters();
    final Counters.Counter writeHits = writeCounters.counter("write_hits");
    final Counters.Counter writesCached = writeCounters.counter("writes_cached");
    final Counters.Counter blocksWritten = writeCounters.counter("blocks_written");
    final Counters.Counter bypassed = writeCounters.counter("bypassed");
    final Counters writebackCounters = new Counters();
    final Counters.Counter writtenBackBlocks = writebackCounters.counter("written_back_blocks");
    final Counters.Counter writebackBatches = writebackCounters.counter("writeback_batches");
    final Counters.Counter writebackWrites = writebackCounters.counter("writeback_writes");
    final Counters logCounters = new Counters();
    final Counters.Counter flushes = logCounters.counter("flushes");
    final Counters.Counter cacheFlushes = logCounters.counter("cache_flushes");
    final Counters.Counter recordUpdates = logCounters.counter("record_updates");
    final Counters.Counter segmentsWritten = logCounters.counter("segments_written");
    final LatencyRecorder readLatency;
    final LatencyRecorder writeLatency;
    final LatencyRecorder flushLatency;
    final BusyMeter busy;

    Stats(Clock clock) {
        this.busy = new BusyMeter(clock);
        this.readLatency = new LatencyRecorder("read", clock);
        this.writeLatency = new LatencyRecorder("write", clock);
        this.flushLatency = new LatencyRecorder("flush", clock);
        this.writebackRate = new RecentRate(clock, WRITEBACK_RATE_WINDOW_S);
    }

    /** Seconds the reported writeback pace covers: long enough to smooth batches, short enough to show idling. */
    static final int WRITEBACK_RATE_WINDOW_S = 5;
    /** Blocks written back over the last few seconds (0 once writeback stands still). */
    final RecentRate writebackRate;
    volatile String lastWritebackError = "";
}
