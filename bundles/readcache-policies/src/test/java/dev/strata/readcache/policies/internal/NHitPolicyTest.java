package dev.strata.readcache.policies.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.ReadCachePolicy.Instance;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NHitPolicyTest {

    @Test
    void admitsEverythingUntilTriggerFullThenOnTheThresholdthMiss() {
        Driver d = new Driver(new NHitPolicy(), 10);
        for (long k = 0; k < 8; k++) {
            assertFalse(d.access(k));
            assertTrue(d.cached(k), "below 80 % full every miss is promoted: " + k);
        }
        // 8 of 10 slots hold blocks: 80 %, the trigger. Now a block needs 3 misses.
        assertFalse(d.access(100));
        assertFalse(d.cached(100));
        assertFalse(d.access(100));
        assertFalse(d.cached(100));
        assertFalse(d.access(100));
        assertTrue(d.cached(100), "promoted on its third miss");
        assertTrue(d.access(100));
        assertEquals("2", d.policy.status().get("rejections"));
    }

    @Test
    void evictsLruWhenFullAndForgetsPromotedBlocks() {
        Driver d = new Driver(new NHitPolicy(), 4, Map.of("threshold", "2", "trigger", "100"));
        for (long k = 0; k < 4; k++) {
            d.access(k);
        }
        assertTrue(d.access(0)); // order 1, 2, 3, 0
        assertFalse(d.access(50));
        assertFalse(d.cached(50));
        assertFalse(d.access(50));
        assertTrue(d.cached(50), "second miss with threshold=2");
        assertFalse(d.cached(1), "the least recently used block went");
        d.invalidate(50);
        assertFalse(d.access(50));
        assertTrue(d.cached(50), "a free slot again below 100 %: promoted while filling");
        d.access(2); // hit
        d.access(3); // hit
        assertFalse(d.access(60));
        assertFalse(d.cached(60), "one miss is not enough");
    }

    @Test
    void theMissTableForgetsAPromotedBlock() {
        MissTable t = new MissTable(64);
        assertEquals(1, t.increment(7));
        assertEquals(2, t.increment(7));
        t.remove(7);
        assertEquals(0, t.count(7));
        assertEquals(1, t.increment(7));
    }

    @Test
    void theMissTableIsBoundedAndReplacesItsOldestEntry() {
        MissTable t = new MissTable(64);
        for (long k = 0; k < 64; k++) {
            t.increment(k);
        }
        t.increment(5);
        assertEquals(2, t.count(5));
        t.increment(1000); // replaces entry 0, the oldest
        assertEquals(0, t.count(0));
        assertEquals(1, t.count(1000));
        assertEquals(2, t.count(5));
        for (long k = 2000; k < 2200; k++) {
            t.increment(k);
        }
        assertEquals(0, t.count(5), "gone after capacity newer misses");
        int present = 0;
        for (long k = 2000; k < 2200; k++) {
            present += t.count(k) > 0 ? 1 : 0;
        }
        assertEquals(64, present);
    }

    @Test
    void badTunablesAreOneClearLineAndSetIsValidated() {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> new NHitPolicy().open(ReadCacheContents.empty(4), Map.of("threshold", "0")));
        assertEquals("nhit: threshold=0 is out of range; use 1 to 100", e.getMessage());
        e = assertThrows(InvalidArgumentException.class,
                () -> new NHitPolicy().open(ReadCacheContents.empty(4), Map.of("trigger", "x")));
        assertEquals("nhit: trigger=x is not a whole number; use 0 to 100", e.getMessage());
        Instance i = new NHitPolicy().open(ReadCacheContents.empty(4), Map.of("unrelated", "1"));
        assertTrue(i.set("threshold", "5"));
        assertEquals("5", i.status().get("threshold"));
        assertFalse(i.set("window", "5"));
        assertThrows(InvalidArgumentException.class, () -> i.set("trigger", "101"));
        assertEquals("80", i.status().get("trigger"));
        assertNotEquals(null, new NHitPolicy().usage());
    }
}
