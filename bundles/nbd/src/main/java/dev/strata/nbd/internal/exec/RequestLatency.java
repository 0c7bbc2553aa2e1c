package dev.strata.nbd.internal.exec;

import java.util.Map;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * Per-export request latency (HdrHistogram, microseconds, 2 significant digits, up to an hour)
 * for reads, writes (WRITE and WRITE_ZEROES) and flushes, from the executor taking a request to
 * its reply being queued. The request path records into a pre-allocated {@link Recorder}
 * (wait-free, allocation-free); a reader swaps the recorder's interval histogram out and adds it
 * to a running total, so the percentiles cover everything since the export started.
 *
 * <p>Rendered as {@code read|write|flush_latency_us_p50|p99|p999|max} (the caches' key shape,
 * plus the maximum).
 */
public final class RequestLatency {
    static final long MAX_MICROS = 3_600_000_000L;
    /** What is timed: indices into the recorders. */
    public static final int READ = 0;
    public static final int WRITE = 1;
    public static final int FLUSH = 2;
    private static final String[] NAMES = {"read", "write", "flush"};

    private final Recorder[] recorders = new Recorder[NAMES.length];
    private final Histogram[] totals = new Histogram[NAMES.length];
    private final Histogram[] spare = new Histogram[NAMES.length];

    public RequestLatency() {
        for (int i = 0; i < NAMES.length; i++) {
            recorders[i] = new Recorder(MAX_MICROS, 2);
            totals[i] = new Histogram(MAX_MICROS, 2);
        }
    }

    /** Records one request of kind {@code what} that took {@code nanos}. */
    public void record(int what, long nanos) {
        recorders[what].recordValue(Math.min(MAX_MICROS, Math.max(0, nanos / 1000)));
    }

    /** Puts p50, p99, p99.9 and max of each kind into {@code status} (values in microseconds; 0 before any request). */
    public synchronized void render(Map<String, String> status) {
        for (int i = 0; i < NAMES.length; i++) {
            // the recycled histogram comes back as the next interval: the reader allocates only the first time
            spare[i] = recorders[i].getIntervalHistogram(spare[i]);
            totals[i].add(spare[i]);
            Histogram h = totals[i];
            status.put(NAMES[i] + "_latency_us_p50", Long.toString(h.getValueAtPercentile(50)));
            status.put(NAMES[i] + "_latency_us_p99", Long.toString(h.getValueAtPercentile(99)));
            status.put(NAMES[i] + "_latency_us_p999", Long.toString(h.getValueAtPercentile(99.9)));
            status.put(NAMES[i] + "_latency_us_max", Long.toString(h.getTotalCount() == 0 ? 0 : h.getMaxValue()));
        }
    }
}
