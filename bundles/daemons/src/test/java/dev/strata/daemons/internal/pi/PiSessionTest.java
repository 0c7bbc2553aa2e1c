package dev.strata.daemons.internal.pi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.WritebackController;
import dev.strata.api.WritebackController.CacheLoad;
import dev.strata.api.WritebackController.Decision;
import dev.strata.api.WritebackController.Occupancy;
import dev.strata.api.WritebackController.Session;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The pi session with made-up times: 4 KiB blocks (8 sectors), a cache of 125 000 blocks
 * (1 000 000 sectors, target 100 000 sectors = 12 500 blocks).
 */
class PiSessionTest {
    private static final long S = 1_000_000_000L;
    private static final long MS = 1_000_000L;
    private static final long T0 = 42 * S;
    private static final long CAPACITY = 125_000;

    private static CacheLoad load(long t, long dirtyBlocks) {
        return new CacheLoad(t, dirtyBlocks, CAPACITY, 4096, 0, 0, 0, 0, 100_000);
    }

    /**
     * Drives a session as a writer that keeps up: asks, and asks again when told to, from
     * {@code from} until before {@code to}.
     */
    private static long prompt(Session s, long from, long to, long dirty) {
        long granted = 0;
        for (long t = from; t < to; ) {
            Decision d = s.decide(load(t, dirty));
            granted += d.blocks();
            t += Math.max(MS, d.askAgainNanos());
        }
        return granted;
    }

    @Test
    void theFirstDecisionSetsPAndTheNextIntegratesAfterUpdateSeconds() {
        PiSession s = new PiSession("c", Map.of());
        // 17 500 dirty blocks = 140 000 sectors: error 40 000, P = 1000 sectors/s = 125 blocks/s
        Decision d = s.decide(load(T0, 17_500));
        assertEquals(1000, s.rate());
        assertEquals(0, s.integral(), "no interval behind the first update");
        assertEquals(125, d.rateBlocksPerSec());
        assertEquals(12, d.blocks(), "a quantum: 100 ms at 125 blocks/s = 12.5 blocks");
        assertEquals(96 * MS, d.askAgainNanos(), "12 blocks at 125/s cost 96 ms");
        // within update_seconds: no update, however often it is asked
        prompt(s, T0 + d.askAgainNanos(), T0 + 5 * S, 17_500);
        assertEquals(0, s.integral());
        assertEquals("1", s.status().get("updates"));
        // the first decision at or after 5 s updates: integral 200 000, rate 1020
        prompt(s, T0 + 5 * S, T0 + 6 * S, 17_500);
        assertEquals(200_000, s.integral());
        assertEquals(1020, s.rate());
        assertEquals("2", s.status().get("updates"));
        assertEquals("true", s.status().get("keeping_up"));
    }

    @Test
    void aWriterFarBehindItsRateDoesNotWindTheIntegralUp() {
        PiSession s = new PiSession("c", Map.of());
        s.decide(load(T0, 17_500)); // granted 12 blocks, next slot at T0 + 96 ms
        // the cache comes back only 5 s later: 4.9 s behind its rate, not keeping up
        s.decide(load(T0 + 5 * S, 17_500));
        assertEquals(0, s.integral());
        assertEquals("false", s.status().get("keeping_up"));
    }

    @Test
    void grantsAreSpacedAtTheRate() {
        PiSession s = new PiSession("c", Map.of("rate_minimum", "8000", "rate_maximum", "8000"));
        // 8000 sectors/s = 1000 blocks/s; asked every 10 ms for 2 s
        long granted = 0;
        for (long t = T0; t < T0 + 2 * S; t += 10 * MS) {
            granted += s.decide(load(t, 50_000)).blocks();
        }
        assertEquals(2000, granted, 100, "2 s at 1000 blocks/s, ± one quantum");
    }

    @Test
    void aCacheWritingWholeSegmentsBeyondItsGrantsIsChargedForThem() {
        // 1000 blocks/s; the cache (writeboost) writes back 255-block segments whatever it is granted
        PiSession s = new PiSession("c", Map.of("rate_minimum", "8000", "rate_maximum", "8000"));
        long written = 0;
        for (long t = T0; t < T0 + 10 * S; t += 10 * MS) {
            Decision d = s.decide(load(t, 50_000));
            if (d.blocks() > 0) {
                s.wroteBack(255, t);
                written += 255;
            }
        }
        assertEquals(10_000, written, 255, "10 s at 1000 blocks/s, ± one segment");
        // without the charge it would have been 100 grants a second, 25 500 blocks/s
        PiSession uncharged = new PiSession("c", Map.of("rate_minimum", "8000", "rate_maximum", "8000"));
        long grants = 0;
        for (long t = T0; t < T0 + 10 * S; t += 10 * MS) {
            grants += uncharged.decide(load(t, 50_000)).blocks() > 0 ? 1 : 0;
        }
        assertEquals(100, grants, 2);
        // a report without a paced grant before it charges nothing
        PiSession idle = new PiSession("c", Map.of("rate_minimum", "8000", "rate_maximum", "8000"));
        idle.wroteBack(1_000_000, T0);
        assertEquals(100, idle.decide(load(T0, 50_000)).blocks());
    }

    @Test
    void cleanOrPercentZero() {
        PiSession s = new PiSession("c", Map.of());
        Decision clean = s.decide(load(T0, 0));
        assertEquals(0, clean.blocks());
        assertEquals(PiSession.CLEAN_POLL_NANOS, clean.askAgainNanos());
        s.set("writeback_percent", "0");
        assertEquals(Decision.fullSpeed(100_000), s.decide(load(T0, 10)), "bcache: writeback_percent 0 = no rate limit");
    }

    @Test
    void fragmentationThroughTheOccupancyOverload() {
        PiSession s = new PiSession("c", Map.of());
        // 2500 dirty blocks (20 000 sectors) pinning 75 000 blocks (60 %) in 128-block units (512 KiB):
        // used units 585, unit 1024 sectors: term 1020 sectors/s (see PiControlTest)
        s.decide(load(T0, 2500), new Occupancy(75_000, 128));
        assertEquals(1020, s.rate());
        assertEquals("1020", s.status().get("fragment_term"));
        // the plain call knows no occupancy: no term, P is negative, the rate is the minimum
        PiSession plain = new PiSession("c", Map.of());
        plain.decide(load(T0, 2500));
        assertEquals(8, plain.rate());
    }

    @Test
    void twoCachesOnOneServiceKeepSeparateState() {
        WritebackController pi = new PiController();
        Session a = pi.open("a", Map.of());
        Session b = pi.open("b", Map.of("writeback_percent", "20"));
        // interleaved on one thread, as two caches' writeback threads would call one service
        for (long t = T0; t < T0 + 21 * S; t += 10 * MS) {
            a.decide(load(t, 17_500)); // 40 000 sectors over its 10 % target
            b.decide(load(t + 3 * MS, 17_500)); // 60 000 under its 20 % target
        }
        // a integrated four times: 4 × 200 000; b never (its error is negative and its integral 0)
        assertEquals("800000", a.status().get("integral"));
        assertEquals("1080", a.status().get("rate_sectors_per_sec"));
        assertEquals("0", b.status().get("integral"));
        assertEquals("8", b.status().get("rate_sectors_per_sec"));
        assertEquals("20", b.status().get("writeback_percent"));
        assertEquals("10", a.status().get("writeback_percent"));
        b.set("p_term_inverse", "80");
        assertEquals("40", a.status().get("p_term_inverse"), "a setting of b is not a's");
        a.close();
        assertNotEquals(a.status(), b.status());
    }

    @Test
    void badTunablesAreRefusedWithTheRangeAndChangeNothing() {
        PiSession s = new PiSession("c", Map.of());
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> s.set("writeback_percent", "101"));
        assertEquals("pi: writeback_percent=101 is out of range; allowed 0 to 100 "
                + "(percent of the cache that may stay dirty; 0 writes back at full speed)", e.getMessage());
        assertEquals("10", s.status().get("writeback_percent"));
        e = assertThrows(InvalidArgumentException.class, () -> s.set("update_seconds", "0"));
        assertTrue(e.getMessage().contains("allowed 1 to 60"), e.getMessage());
        e = assertThrows(InvalidArgumentException.class, () -> s.set("rate_maximum", "4"));
        assertTrue(e.getMessage().startsWith("pi: rate_maximum=4 leaves rate_minimum (8) above rate_maximum (4)"), e.getMessage());
        assertEquals("1000000000", s.status().get("rate_maximum"));
        assertFalse(s.set("writeback_threshold", "50"), "another controller's key is not ours");
        assertThrows(InvalidArgumentException.class, () -> new PiController().open("c", Map.of("i_term_inverse", "0")));
        // unknown keys at open are ignored, so a cache can switch controllers without losing settings
        new PiController().open("c", Map.of("writeback_threshold", "50", "idle_ms", "x"));
    }
}
