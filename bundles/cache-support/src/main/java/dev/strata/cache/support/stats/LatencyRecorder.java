package dev.strata.cache.support.stats;

import dev.strata.cache.support.time.Clock;
import java.util.Map;
import org.HdrHistogram.ConcurrentHistogram;

/**
 * A latency histogram (HdrHistogram, microseconds, 2 significant digits, up to an hour) timed on
 * the cache's clock, rendered as {@code <what>_latency_us_p50|p99|p999}. Recording is lock-free
 * and allocation-free.
 */
public final class LatencyRecorder {
    private static final long MAX_MICROS = 3_600_000_000L;
    private final String what;
    private final Clock clock;
    private final ConcurrentHistogram histogram = new ConcurrentHistogram(MAX_MICROS, 2);

    public LatencyRecorder(String what, Clock clock) {
        this.what = what;
        this.clock = clock;
    }

    /** The start of an operation, for {@link #recordSince}. */
    public long start() {
        return clock.nanoTime();
    }

    /** Records the time since {@code startNanos} (from {@link #start()}). */
    public void recordSince(long startNanos) {
        recordMicros((clock.nanoTime() - startNanos) / 1000);
    }

    public void recordMicros(long micros) {
        histogram.recordValue(Math.min(MAX_MICROS, Math.max(0, micros)));
    }

    /** The value at {@code percentile} in microseconds (0 before anything was recorded). */
    public long percentile(double percentile) {
        return histogram.getValueAtPercentile(percentile);
    }

    public long count() {
        return histogram.getTotalCount();
    }

    /** Puts p50, p99 and p99.9 into {@code status}. */
    public void render(Map<String, String> status) {
        status.put(what + "_latency_us_p50", Long.toString(percentile(50)));
        status.put(what + "_latency_us_p99", Long.toString(percentile(99)));
        status.put(what + "_latency_us_p999", Long.toString(percentile(99.9)));
    }
}
