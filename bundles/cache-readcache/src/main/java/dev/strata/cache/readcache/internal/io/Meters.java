package dev.strata.cache.readcache.internal.io;

import dev.strata.api.CacheTarget.Keys;
import dev.strata.cache.support.stats.Counters;
import dev.strata.cache.support.stats.LatencyRecorder;
import dev.strata.cache.support.time.Clock;
import java.util.Locale;
import java.util.Map;

/**
 * The cache's counters and latencies (cache-support's {@link Counters} and {@link LatencyRecorder},
 * as the other caches show them) and what only a read cache has: the hit ratio over the last
 * minute (60 one-second buckets) and since start.
 */
final class Meters {
    private final Counters counters = new Counters();
    final Counters.Counter hits = counters.counter(Keys.READ_HITS);
    final Counters.Counter misses = counters.counter(Keys.READ_MISSES);
    final Counters.Counter bypassed = counters.counter(Keys.BYPASSED);
    final Counters.Counter promotions = counters.counter("promotions");
    final Counters.Counter promotionsAbandoned = counters.counter("promotions_abandoned");
    final Counters.Counter rejections = counters.counter("rejections");
    final Counters.Counter writePromotions = counters.counter("write_promotions");
    final Counters.Counter writeRejections = counters.counter("write_rejections");
    final Counters.Counter evictions = counters.counter("evictions");
    final Counters.Counter invalidations = counters.counter("invalidations");
    final Counters.Counter cacheReadErrors = counters.counter("cache_read_errors");
    final Counters.Counter cacheWriteErrors = counters.counter("cache_write_errors");
    final Counters.Counter metadataWrites = counters.counter("metadata_writes");
    /** Read misses that read a whole readahead extent, and the extent blocks they claimed. */
    final Counters.Counter readaheads = counters.counter("readaheads");
    final Counters.Counter readaheadBlocks = counters.counter("readahead_blocks");
    final LatencyRecorder readLatency;
    final LatencyRecorder writeLatency;
    private final Clock clock;
    private final long[] bucketHits = new long[60];
    private final long[] bucketMisses = new long[60];
    private final long[] bucketSecond = new long[60];

    Meters(Clock clock) {
        this.clock = clock;
        this.readLatency = new LatencyRecorder("read", clock);
        this.writeLatency = new LatencyRecorder("write", clock);
    }

    /** Counts a read's hits and misses (blocks). */
    void read(int h, int m) {
        hits.add(h);
        misses.add(m);
        long sec = clock.nanoTime() / 1_000_000_000L;
        int i = (int) Math.floorMod(sec, 60L);
        synchronized (bucketSecond) {
            if (bucketSecond[i] != sec) {
                bucketSecond[i] = sec;
                bucketHits[i] = 0;
                bucketMisses[i] = 0;
            }
            bucketHits[i] += h;
            bucketMisses[i] += m;
        }
    }

    /** Hit ratio in percent over the last 60 s, or -1 without reads. */
    double lastMinute() {
        long sec = clock.nanoTime() / 1_000_000_000L;
        long h = 0;
        long m = 0;
        synchronized (bucketSecond) {
            for (int i = 0; i < 60; i++) {
                if (sec - bucketSecond[i] < 60) {
                    h += bucketHits[i];
                    m += bucketMisses[i];
                }
            }
        }
        return h + m == 0 ? -1 : 100.0 * h / (h + m);
    }

    long now() {
        return clock.nanoTime();
    }

    void putAll(Map<String, String> m) {
        counters.render(m);
        long h = hits.sum();
        long mi = misses.sum();
        m.put("hit_ratio", h + mi == 0 ? "-" : String.format(Locale.ROOT, "%.2f", 100.0 * h / (h + mi)));
        double lm = lastMinute();
        m.put("hit_ratio_1m", lm < 0 ? "-" : String.format(Locale.ROOT, "%.2f", lm));
        // only once there is one: "p99 read 0 µs" next to "no reads yet" says nothing true
        if (readLatency.count() > 0) {
            readLatency.render(m);
        }
        if (writeLatency.count() > 0) {
            writeLatency.render(m);
        }
    }
}
