package dev.strata.cache.support.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.cache.support.time.ManualClock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class StatsTest {
    @Test
    void busyMeterMeasuresTheShareOfTimeWithIoInFlight() {
        ManualClock clock = new ManualClock();
        BusyMeter m = new BusyMeter(clock);
        clock.advance(10, TimeUnit.MILLISECONDS);
        m.begin();
        clock.advance(20, TimeUnit.MILLISECONDS);
        m.begin(); // overlapping: still one busy stretch
        clock.advance(10, TimeUnit.MILLISECONDS);
        m.end();
        clock.advance(20, TimeUnit.MILLISECONDS);
        m.end();
        m.op();
        clock.advance(40, TimeUnit.MILLISECONDS);
        long[] s = m.sample(); // 50 ms busy of 100
        assertEquals(50, s[0]);
        assertEquals(30, s[1], "3 ops in 0.1 s");
        assertEquals(40, s[2], "idle since the last op");
        clock.advance(100, TimeUnit.MILLISECONDS);
        assertEquals(25, m.sample()[0], "the same 50 ms busy, now of the meter's 200 ms age: sampling does not reset it");
        assertEquals(0, m.sample()[1], "the ops rate is per sample");
    }

    @Test
    void opWithTheCallersTimeCountsAndStampsTheLastOp() {
        ManualClock clock = new ManualClock();
        BusyMeter m = new BusyMeter(clock);
        clock.advance(100, TimeUnit.MILLISECONDS);
        m.op(clock.nanoTime());
        clock.advance(30, TimeUnit.MICROSECONDS);
        m.op(clock.nanoTime()); // within the grain: counted, the stamp may stay
        clock.advance(20, TimeUnit.MILLISECONDS);
        m.op(clock.nanoTime());
        clock.advance(40, TimeUnit.MILLISECONDS);
        long[] s = m.sample();
        assertEquals(3 * 1_000_000_000L / TimeUnit.MILLISECONDS.toNanos(160), s[1], "3 ops in 0.16 s");
        assertEquals(40, s[2], "idle since the last op, to the millisecond");
    }

    @Test
    void countersRenderInCreationOrder() {
        Counters c = new Counters();
        Counters.Counter hits = c.counter("read_hits");
        Counters.Counter misses = c.counter("read_misses");
        hits.add(3);
        misses.increment();
        Map<String, String> m = new LinkedHashMap<>();
        c.render(m);
        assertEquals(List.of("read_hits", "read_misses"), List.copyOf(m.keySet()));
        assertEquals("3", m.get("read_hits"));
        assertEquals("1", m.get("read_misses"));
        assertThrows(IllegalArgumentException.class, () -> c.counter("read_hits"));
    }

    @Test
    void latencyIsTimedOnTheInjectedClock() {
        ManualClock clock = new ManualClock();
        LatencyRecorder r = new LatencyRecorder("write", clock);
        for (int i = 0; i < 99; i++) {
            long t0 = r.start();
            clock.advance(100, TimeUnit.MICROSECONDS);
            r.recordSince(t0);
        }
        long t0 = r.start();
        clock.advance(50, TimeUnit.MILLISECONDS);
        r.recordSince(t0);
        Map<String, String> m = new LinkedHashMap<>();
        r.render(m);
        assertEquals(List.of("write_latency_us_p50", "write_latency_us_p99", "write_latency_us_p999"),
                List.copyOf(m.keySet()));
        long p50 = Long.parseLong(m.get("write_latency_us_p50"));
        long p999 = Long.parseLong(m.get("write_latency_us_p999"));
        assertTrue(p50 >= 100 && p50 < 102, "p50 " + p50);
        assertTrue(p999 >= 50_000 && p999 < 50_600, "p99.9 " + p999);
        assertEquals(100, r.count());
    }

    @Test
    void recentRateIsThePaceOverTheWindowAndFallsToZeroWhenCountingStops() {
        ManualClock clock = new ManualClock(0);
        RecentRate r = new RecentRate(clock, 5);
        assertEquals(0, r.perSecond(), "nothing counted yet");
        for (int s = 0; s < 5; s++) {
            r.add(3000);
            clock.advance(1, TimeUnit.SECONDS);
        }
        assertEquals(3000, r.perSecond(), "3,000 a second for the whole window");
        clock.advance(2, TimeUnit.SECONDS);
        assertEquals(1500, r.perSecond(), "two idle seconds: half the window still counted");
        clock.advance(3, TimeUnit.SECONDS);
        assertEquals(0, r.perSecond(), "a window with nothing counted is idle, not the last pace");
        clock.advance(1, TimeUnit.HOURS);
        assertEquals(0, r.perSecond());
        r.add(500);
        assertEquals(125, r.perSecond(), "a fresh count after idling, spread over the window");
    }

    /** Runs {@code body(t)} on {@code threads} threads started together; fails if any throws. */
    private static void concurrently(int threads, java.util.function.IntConsumer body) throws Exception {
        java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(threads);
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
        try {
            List<java.util.concurrent.Future<?>> fs = new java.util.ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                fs.add(pool.submit(() -> {
                    start.await();
                    body.accept(id);
                    return null;
                }));
            }
            for (java.util.concurrent.Future<?> f : fs) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void stripedLatenciesAddUpToOneHistogramOfAllRecordsUnderConcurrentWriters() throws Exception {
        LatencyRecorder r = new LatencyRecorder("write", new ManualClock());
        int threads = 3 * LatencyRecorder.STRIPES; // more threads than stripes: stripes are shared
        int each = 20_000;
        // each thread its own spread of values, so that a lost or misplaced record moves a percentile
        concurrently(threads, t -> {
            java.util.Random rnd = new java.util.Random(t);
            for (int i = 0; i < each; i++) {
                r.recordMicros(t * 7L + (rnd.nextInt(100) == 0 ? 40_000 + rnd.nextInt(10_000) : rnd.nextInt(300)));
            }
        });
        Histogram reference = new Histogram(3_600_000_000L, 2);
        for (int t = 0; t < threads; t++) {
            java.util.Random rnd = new java.util.Random(t);
            for (int i = 0; i < each; i++) {
                reference.recordValue(t * 7L + (rnd.nextInt(100) == 0 ? 40_000 + rnd.nextInt(10_000) : rnd.nextInt(300)));
            }
        }
        assertEquals((long) threads * each, r.count());
        Map<String, String> m = new LinkedHashMap<>();
        r.render(m);
        assertEquals(List.of("write_latency_us_p50", "write_latency_us_p99", "write_latency_us_p999"),
                List.copyOf(m.keySet()));
        assertEquals(Long.toString(reference.getValueAtPercentile(50)), m.get("write_latency_us_p50"));
        assertEquals(Long.toString(reference.getValueAtPercentile(99)), m.get("write_latency_us_p99"));
        assertEquals(Long.toString(reference.getValueAtPercentile(99.9)), m.get("write_latency_us_p999"));
        assertEquals(reference.getValueAtPercentile(99.9), r.percentile(99.9));
        assertTrue(reference.getValueAtPercentile(99.9) > 40_000, "the tail is in the figures");
    }

    @Test
    void latenciesReadWhileWritersRecordNeverGoBackwards() throws Exception {
        LatencyRecorder r = new LatencyRecorder("read", new ManualClock());
        java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicReference<String> wrong = new java.util.concurrent.atomic.AtomicReference<>();
        Thread reader = new Thread(() -> {
            Map<String, String> m = new LinkedHashMap<>();
            long seen = 0;
            while (!done.get()) {
                long c = r.count();
                if (c < seen) {
                    wrong.compareAndSet(null, "count went back from " + seen + " to " + c);
                }
                seen = c;
                r.render(m);
                long p50 = Long.parseLong(m.get("read_latency_us_p50"));
                if (c > 0 && (p50 < 10 || p50 > 17)) {
                    wrong.compareAndSet(null, "p50 " + p50 + " outside the values recorded");
                }
            }
        });
        reader.start();
        concurrently(8, t -> {
            for (int i = 0; i < 50_000; i++) {
                r.recordMicros(10 + t);
            }
        });
        done.set(true);
        reader.join();
        assertEquals(null, wrong.get());
        assertEquals(400_000, r.count());
        assertEquals(17, r.percentile(100), "the largest value recorded (exact below 256 at 2 digits)");
    }

    @Test
    void countersAndTheBusyMetersOpsAddUpUnderConcurrentWriters() throws Exception {
        ManualClock clock = new ManualClock();
        Counters c = new Counters();
        Counters.Counter writes = c.counter("writes");
        Counters.Counter hits = c.counter("write_hits");
        BusyMeter busy = new BusyMeter(clock);
        int threads = 16;
        int each = 50_000;
        concurrently(threads, t -> {
            for (int i = 0; i < each; i++) {
                writes.add(2);
                hits.increment();
                busy.op(clock.nanoTime());
            }
        });
        Map<String, String> m = new LinkedHashMap<>();
        c.render(m);
        assertEquals(Map.of("writes", Long.toString(2L * threads * each), "write_hits", Long.toString((long) threads * each)), m);
        clock.advance(1, TimeUnit.SECONDS);
        assertEquals((long) threads * each, busy.sample()[1], "every op counted once (the meter's first sample spans one second)");
    }
}
