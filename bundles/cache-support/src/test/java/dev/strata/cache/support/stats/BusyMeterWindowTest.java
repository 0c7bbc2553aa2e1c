package dev.strata.cache.support.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.cache.support.time.ManualClock;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The busy share is over the last second, however rarely the meter is sampled. */
class BusyMeterWindowTest {
    private final ManualClock clock = new ManualClock();
    private final BusyMeter m = new BusyMeter(clock);

    private void ms(long millis) {
        clock.advance(millis, TimeUnit.MILLISECONDS);
    }

    private void busyFor(long millis) {
        m.begin();
        ms(millis);
        m.end();
    }

    private long busy() {
        return m.sample()[0];
    }

    @Test
    void aBusyLastSecondAfterALongIdleGapReadsBusyWhenSampledRarely() {
        busy(); // the writeback's last sample, before the gap
        ms(10_000); // idle, no sample
        for (int i = 0; i < 100; i++) { // the front end keeps the device busy 90 % of the last second
            busyFor(9);
            ms(1);
        }
        assertEquals(90, busy(), "the gap is more than a second old: it must not dilute the reading");
    }

    @Test
    void busyTimeCountsUntilItIsExactlyOneSecondOld() {
        ms(5_000);
        busyFor(500); // busy 5.0 s .. 5.5 s after the meter started
        ms(700); // window 5.2 .. 6.2 s holds 300 ms of it
        assertEquals(30, busy());
        ms(290); // window 5.49 .. 6.49: 10 ms of the stretch left inside
        assertEquals(1, busy());
        ms(10); // the stretch ended exactly at the window's start
        assertEquals(0, busy());
    }

    @Test
    void aRequestStillInFlightCountsFromTheWindowsStart() {
        ms(3_000);
        m.begin();
        ms(5_000); // in flight for 5 s
        assertEquals(100, busy());
        m.end();
        ms(400);
        assertEquals(60, busy(), "the last 600 ms of the stretch are inside");
    }

    @Test
    void theReadingDoesNotDependOnHowOftenItIsSampled() {
        BusyMeter often = new BusyMeter(clock);
        long lastOften = -1;
        for (int i = 0; i < 400; i++) { // 4 s of 30 % busy, 10 ms periods, one meter sampled every period
            m.begin();
            often.begin();
            ms(3);
            m.end();
            often.end();
            ms(7);
            lastOften = often.sample()[0];
        }
        assertEquals(30, lastOften);
        assertEquals(30, busy());
    }

    @Test
    void aYoungMeterMeasuresOverItsAgeAndAnIdleOneReadsZero() {
        ms(100);
        busyFor(100);
        assertEquals(50, busy());
        ms(60_000);
        assertEquals(0, busy());
    }

    @Test
    void aNonAlignedEdgeIsOffByAtMostOneBucket() {
        ms(1_234);
        for (int i = 0; i < 37; i++) { // irregular busy pattern, 1 ms granularity
            busyFor(7 + i % 5);
            ms(13 + (i * 7) % 11);
        }
        ms(333);
        // the exact share is computed independently from the pattern and the window edges
        long now = 1_234; // ms since the meter started
        long[][] stretches = new long[37][2];
        for (int i = 0; i < 37; i++) {
            stretches[i][0] = now;
            now += 7 + i % 5;
            stretches[i][1] = now;
            now += 13 + (i * 7) % 11;
        }
        now += 333;
        long from = now - 1_000;
        long inside = 0;
        for (long[] s : stretches) {
            inside += Math.max(0, Math.min(s[1], now) - Math.max(s[0], from));
        }
        long exact = inside * 100 / 1_000;
        long read = busy();
        assertTrue(Math.abs(read - exact) <= BusyMeter.BUCKET_NANOS * 100 / BusyMeter.WINDOW_NANOS,
                "read " + read + " %, exact " + exact + " %");
    }
}
