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
    void theMissTableIsBoundedAndReplacesTheOldestEntryOfABucket() {
        MissTable t = new MissTable(64);
        assertEquals(64, t.capacity());
        // keys of one bucket: its entries hold the last 8 first-missed of them
        java.util.List<Long> same = new java.util.ArrayList<>();
        for (long k = 0; same.size() < 9; k++) {
            if (same.isEmpty() || bucketMates(same.get(0), k)) {
                same.add(k);
            }
        }
        for (int i = 0; i < 8; i++) {
            t.increment(same.get(i));
        }
        t.increment(same.get(3));
        assertEquals(2, t.count(same.get(3)));
        t.increment(same.get(8)); // the bucket is full: replaces its oldest, same[0]
        assertEquals(0, t.count(same.get(0)));
        assertEquals(1, t.count(same.get(8)));
        assertEquals(2, t.count(same.get(3)));
        for (long k = 2000; k < 4000; k++) {
            t.increment(k);
        }
        assertEquals(0, t.count(same.get(3)), "gone after many newer misses");
        int present = 0;
        for (long k = 2000; k < 4000; k++) {
            present += t.count(k) > 0 ? 1 : 0;
        }
        assertEquals(64, present, "every entry holds one of the newer blocks, and no more than 64 are counted");
    }

    /** Whether two keys fall into one bucket of a 64-entry table (8 buckets). */
    private static boolean bucketMates(long a, long b) {
        return Hashing.reduce((int) Hashing.mix64(a), 8) == Hashing.reduce((int) Hashing.mix64(b), 8);
    }

    @Test
    void theMissTableCountsUpToItsCeiling() {
        MissTable t = new MissTable(8);
        for (int i = 0; i < 200; i++) {
            t.increment(42);
        }
        assertEquals(127, t.count(42), "saturates, never wraps to a small count");
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
