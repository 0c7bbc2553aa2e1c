package dev.strata.cache.support.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.cache.support.time.ManualClock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
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
}
