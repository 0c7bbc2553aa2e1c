package dev.strata.cache.support.stats;

import dev.strata.cache.support.time.Clock;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.HdrHistogram.AtomicHistogram;
import org.HdrHistogram.Histogram;

/**
 * A latency histogram (HdrHistogram, microseconds, 2 significant digits, up to an hour) timed on
 * the cache's clock, rendered as {@code <what>_latency_us_p50|p99|p999}. Recording is lock-free
 * and allocation-free.
 *
 * <p>Striped by thread: a request records into one of {@link #STRIPES} histograms picked by its
 * thread, and a reading merges them. One {@code ConcurrentHistogram} for all writers made every
 * request write four lines every writer shares (its phaser's two epochs, the total count and the
 * bucket of the common latency: the same few buckets for all requests); a stripe is an {@link
 * AtomicHistogram} (atomic, because threads whose ids share a stripe may record at the same
 * time), so a record is two atomic increments on lines only that stripe's threads touch. Stripes
 * are made on first use (about 26 KiB each), so a cache recorded into by one thread holds one.
 * The merged figures are what one histogram of all records would show: the same buckets and
 * the same counts.
 */
public final class LatencyRecorder {
    private static final long MAX_MICROS = 3_600_000_000L;
    private static final int DIGITS = 2;
    /** Stripes: four per core, a power of two in [8, 64]. */
    static final int STRIPES = Math.max(8, Math.min(64, Integer.highestOneBit(Runtime.getRuntime().availableProcessors() * 4 - 1) << 1));
    private static final int SHIFT = 64 - Integer.numberOfTrailingZeros(STRIPES);
    private final String what;
    private final Clock clock;
    private final AtomicReferenceArray<AtomicHistogram> stripes = new AtomicReferenceArray<>(STRIPES);
    /** Reused by readers (under this object's monitor): the stripes added up. */
    private final Histogram merged = new Histogram(MAX_MICROS, DIGITS);

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
        stripe().recordValue(Math.min(MAX_MICROS, Math.max(0, micros)));
    }

    /** This thread's stripe (Fibonacci hash of the thread id: consecutive ids land apart). */
    private AtomicHistogram stripe() {
        int i = (int) ((Thread.currentThread().getId() * 0x9E3779B97F4A7C15L) >>> SHIFT);
        AtomicHistogram h = stripes.get(i);
        if (h == null) {
            AtomicHistogram made = new AtomicHistogram(MAX_MICROS, DIGITS);
            h = stripes.compareAndExchange(i, null, made);
            if (h == null) {
                h = made;
            }
        }
        return h;
    }

    /** The stripes added up into {@link #merged}; call under this object's monitor. */
    private Histogram merge() {
        merged.reset();
        for (int i = 0; i < STRIPES; i++) {
            AtomicHistogram h = stripes.get(i);
            if (h != null) {
                merged.add(h);
            }
        }
        return merged;
    }

    /** The value at {@code percentile} in microseconds (0 before anything was recorded). */
    public synchronized long percentile(double percentile) {
        return merge().getValueAtPercentile(percentile);
    }

    public long count() {
        long n = 0;
        for (int i = 0; i < STRIPES; i++) {
            AtomicHistogram h = stripes.get(i);
            if (h != null) {
                n += h.getTotalCount();
            }
        }
        return n;
    }

    /** Puts p50, p99 and p99.9 into {@code status} (from one merge: the three agree with each other). */
    public void render(Map<String, String> status) {
        long p50;
        long p99;
        long p999;
        synchronized (this) {
            Histogram h = merge();
            p50 = h.getValueAtPercentile(50);
            p99 = h.getValueAtPercentile(99);
            p999 = h.getValueAtPercentile(99.9);
        }
        status.put(what + "_latency_us_p50", Long.toString(p50));
        status.put(what + "_latency_us_p99", Long.toString(p99));
        status.put(what + "_latency_us_p999", Long.toString(p999));
    }
}
