package dev.strata.cache.readcache.internal.io;

import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * The cache's counters, the hit ratio over the last minute (60 one-second buckets) and since
 * start, and latency histograms (HdrHistogram, microseconds). Kept apart so a shared
 * cache-support meter can replace it.
 */
final class Meters {
    final LongAdder hits = new LongAdder();
    final LongAdder misses = new LongAdder();
    final LongAdder promotions = new LongAdder();
    final LongAdder promotionsAbandoned = new LongAdder();
    final LongAdder rejections = new LongAdder();
    final LongAdder evictions = new LongAdder();
    final LongAdder invalidations = new LongAdder();
    final LongAdder bypassed = new LongAdder();
    final LongAdder cacheReadErrors = new LongAdder();
    final LongAdder cacheWriteErrors = new LongAdder();
    final LongAdder metadataWrites = new LongAdder();
    final ConcurrentHistogram readLatency = new ConcurrentHistogram(3_600_000_000L, 2);
    final ConcurrentHistogram writeLatency = new ConcurrentHistogram(3_600_000_000L, 2);
    private final LongSupplier nanos;
    private final long[] bucketHits = new long[60];
    private final long[] bucketMisses = new long[60];
    private final long[] bucketSecond = new long[60];

    Meters(LongSupplier nanos) {
        this.nanos = nanos;
    }

    /** Counts a read's hits and misses (blocks). */
    void read(int h, int m) {
        hits.add(h);
        misses.add(m);
        long sec = nanos.getAsLong() / 1_000_000_000L;
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
        long sec = nanos.getAsLong() / 1_000_000_000L;
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

    void since(long t0, Histogram h) {
        h.recordValue(Math.min(3_600_000_000L, Math.max(0, (nanos.getAsLong() - t0) / 1000)));
    }

    long now() {
        return nanos.getAsLong();
    }

    void putAll(Map<String, String> m) {
        long h = hits.sum();
        long mi = misses.sum();
        m.put("promotions", Long.toString(promotions.sum()));
        m.put("promotions_abandoned", Long.toString(promotionsAbandoned.sum()));
        m.put("rejections", Long.toString(rejections.sum()));
        m.put("evictions", Long.toString(evictions.sum()));
        m.put("invalidations", Long.toString(invalidations.sum()));
        m.put("cache_read_errors", Long.toString(cacheReadErrors.sum()));
        m.put("cache_write_errors", Long.toString(cacheWriteErrors.sum()));
        m.put("metadata_writes", Long.toString(metadataWrites.sum()));
        m.put("hit_ratio", h + mi == 0 ? "-" : String.format(java.util.Locale.ROOT, "%.2f", 100.0 * h / (h + mi)));
        double lm = lastMinute();
        m.put("hit_ratio_1m", lm < 0 ? "-" : String.format(java.util.Locale.ROOT, "%.2f", lm));
        latency(m, "read", readLatency);
        latency(m, "write", writeLatency);
    }

    private static void latency(Map<String, String> m, String what, Histogram h) {
        m.put(what + "_latency_us_p50", Long.toString(h.getValueAtPercentile(50)));
        m.put(what + "_latency_us_p99", Long.toString(h.getValueAtPercentile(99)));
        m.put(what + "_latency_us_p999", Long.toString(h.getValueAtPercentile(99.9)));
    }
}
