package dev.strata.readcache.policies.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.ReadCachePolicy.Contents;
import dev.strata.api.ReadCachePolicy.Instance;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WTinyLfuTest {
    private static final int WINDOW = 1;
    private static final int PROBATION = 2;
    private static final int PROTECTED = 3;

    private static WTinyLfu open(long[] keys, Map<String, String> tunables) {
        return (WTinyLfu) new WTinyLfuPolicy().open(Contents.of(keys), tunables);
    }

    /** 100 slots, window 1 (1 %), no climbing; blocks 0…99 missed once each, in order. */
    private static Driver filled() {
        Driver d = new Driver(new WTinyLfuPolicy(), 100, Map.of("climb", "false"));
        for (long k = 0; k < 100; k++) {
            assertFalse(d.access(k));
        }
        return d;
    }

    @Test
    void theWindowsCandidateDisplacesTheVictimOnlyWithAHigherFrequency() {
        Driver d = filled();
        WTinyLfu p = (WTinyLfu) d.policy;
        assertEquals(1, p.windowMax());
        assertEquals(WINDOW, p.regionOf(d.slotOf(99)));
        assertEquals(PROBATION, p.regionOf(d.slotOf(0)));
        for (long k = 0; k < 100; k++) {
            assertEquals(1, p.frequency(k), "precondition: no sketch collision among the blocks of this test");
        }
        // 500 arrives: candidate 99 (frequency 1) against victim 0 (1): a tie keeps the victim.
        int slotOf99 = d.slotOf(99);
        d.access(500);
        assertFalse(d.cached(99));
        assertEquals(slotOf99, d.slotOf(500));
        assertTrue(d.cached(0));
        // 99 again (now frequency 2) enters the window; 500 (1) loses against 0 (1).
        d.access(99);
        assertFalse(d.cached(500));
        // 600 arrives: candidate 99 (2) beats victim 0 (1): 0 goes, 99 moves to probation.
        int slotOf0 = d.slotOf(0);
        d.access(600);
        assertFalse(d.cached(0));
        assertEquals(slotOf0, d.slotOf(600));
        assertEquals(PROBATION, p.regionOf(d.slotOf(99)));
        assertEquals(WINDOW, p.regionOf(d.slotOf(600)));
    }

    @Test
    void aProbationHitMovesToProtectedWhichIsSkippedForVictims() {
        Driver d = filled();
        WTinyLfu p = (WTinyLfu) d.policy;
        assertTrue(d.access(1));
        assertEquals(PROTECTED, p.regionOf(d.slotOf(1)));
        assertTrue(d.access(0));
        // Victim is now probation's LRU, 2 (frequency 1); candidate 99 (1) loses, 2 stays.
        d.access(700);
        assertTrue(d.cached(0) && d.cached(1) && d.cached(2));
        assertFalse(d.cached(99));
    }

    @Test
    void protectedOverItsShareDemotesItsOldestToProbation() {
        Driver d = filled(); // protected share: 80 % of 99 = 79
        WTinyLfu p = (WTinyLfu) d.policy;
        for (long k = 0; k < 80; k++) {
            assertTrue(d.access(k));
        }
        assertEquals(PROBATION, p.regionOf(d.slotOf(0)), "the 80th promotion pushed the oldest back");
        assertEquals(PROTECTED, p.regionOf(d.slotOf(1)));
        assertEquals("79", p.status().get("protected"));
    }

    @Test
    void windowZeroAdmitsAtTheDoorOrRejects() {
        Driver d = new Driver(new WTinyLfuPolicy(), 100, Map.of("window", "0"));
        for (long k = 0; k < 100; k++) {
            d.access(k);
        }
        int slots = 100;
        assertEquals(0, ((WTinyLfu) d.policy).windowMax());
        assertEquals(PROBATION, ((WTinyLfu) d.policy).regionOf(d.slotOf(5)));
        d.access(900); // frequency 1 against victim 0 (1): rejected, nothing written
        assertFalse(d.cached(900));
        assertEquals(slots, d.index.size());
        int slotOf0 = d.slotOf(0);
        d.access(900); // frequency 2 > 1: takes the victim's slot
        assertTrue(d.cached(900));
        assertFalse(d.cached(0));
        assertEquals(slotOf0, d.slotOf(900));
        assertEquals("1", d.policy.status().get("rejections"));
    }

    @Test
    void theSketchCountsSaturatesAndAges() {
        FrequencySketch s = new FrequencySketch(64, 10);
        assertEquals(0, s.frequency(42));
        for (int i = 0; i < 20; i++) {
            s.increment(42);
        }
        assertEquals(FrequencySketch.MAX, s.frequency(42), "4-bit counters saturate at 15");
        s.reset();
        assertEquals(7, s.frequency(42), "aging halves every counter");
        assertEquals(1, s.resets());
        FrequencySketch t = new FrequencySketch(64, 10); // ages after 640 counted increments
        for (long k = 0; t.resets() == 0; k++) {
            t.increment(k % 1000);
            assertTrue(k < 640, "the sketch aged by itself within its sample");
        }
        assertEquals(640, t.sampleSize());
    }

    @Test
    void theClimberResizesTheWindowWithinBounds() {
        Driver d = new Driver(new WTinyLfuPolicy(), 1000, Map.of("climb", "true"));
        java.util.Random r = new java.util.Random(7);
        int lastWindow = ((WTinyLfu) d.policy).windowMax();
        boolean changed = false;
        for (int i = 0; i < 200_000; i++) {
            // recency-biased: the last few hundred keys of a moving stream are hot
            d.access(i / 10 + r.nextInt(400));
            int w = ((WTinyLfu) d.policy).windowMax();
            assertTrue(w >= 1 && w <= 1000, "window " + w);
            changed |= w != lastWindow;
        }
        assertTrue(changed, "the climber moved the window on a recency workload");
        assertTrue(Long.parseLong(d.policy.status().get("climbs")) > 0);
    }

    @Test
    void rebuildPutsCachedBlocksOnProbationAndFreeSlotsFirst() {
        long[] keys = {10, Contents.EMPTY, 30, 40};
        WTinyLfu p = open(keys, Map.of());
        assertEquals(PROBATION, p.regionOf(0));
        assertEquals(PROBATION, p.regionOf(3));
        assertEquals("1", p.status().get("free"));
        assertEquals(1, p.onMiss(50));
    }

    @Test
    void badTunablesAreOneClearLine() {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> open(new long[] {Contents.EMPTY}, Map.of("window", "101")));
        assertEquals("wtinylfu: window=101 is out of range; use 0 to 100", e.getMessage());
        e = assertThrows(InvalidArgumentException.class, () -> open(new long[] {Contents.EMPTY}, Map.of("climb", "maybe")));
        assertEquals("wtinylfu: climb=maybe is not a switch; use true or false", e.getMessage());
        Instance i = open(new long[] {Contents.EMPTY}, Map.of("threshold", "3")); // another policy's key: ignored
        assertFalse(i.set("window", "5"), "sizes are fixed at open; reopen to change them");
    }
}
