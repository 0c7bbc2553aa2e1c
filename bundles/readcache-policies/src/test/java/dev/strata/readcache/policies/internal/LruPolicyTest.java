package dev.strata.readcache.policies.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.ReadCachePolicy.Contents;
import dev.strata.api.ReadCachePolicy.Instance;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LruPolicyTest {

    @Test
    void evictsTheLeastRecentlyUsedBlockAndUsesFreeSlotsFirst() {
        Driver d = new Driver(new LruPolicy(), 3);
        assertFalse(d.access(1));
        assertFalse(d.access(2));
        assertFalse(d.access(3));
        assertTrue(d.access(1)); // order now 2, 3, 1
        int slotOf2 = d.slotOf(2);
        assertFalse(d.access(4)); // evicts 2, the LRU
        assertFalse(d.cached(2));
        assertEquals(slotOf2, d.slotOf(4));
        int slotOf3 = d.slotOf(3);
        d.invalidate(3); // a write: slot free again
        assertFalse(d.access(5)); // takes the free slot, evicts nothing
        assertEquals(slotOf3, d.slotOf(5));
        assertTrue(d.cached(1) && d.cached(4));
        assertFalse(d.access(6)); // order was 1, 4, 5: evicts 1
        assertFalse(d.cached(1));
        assertEquals("2", d.policy.status().get("evictions"));
    }

    @Test
    void rebuildKeepsEveryCachedBlockAndTakesSlotOrderAsRecency() {
        long[] keys = {10, Contents.EMPTY, 30, 40};
        Instance lru = new LruPolicy().open(Contents.of(keys), Map.of());
        assertEquals("3", lru.status().get("cached"));
        assertEquals(1, lru.onMiss(99), "the free slot first");
        lru.onInsert(1, 99);
        keys[1] = 99;
        lru.onHit(0); // 10 becomes the most recent: order 30, 40, 99, 10
        assertEquals(2, lru.onMiss(100));
        assertEquals(3, lru.onMiss(101));
    }

    @Test
    void aPendingSlotIsNeverHandedOutAgain() {
        Instance lru = new LruPolicy().open(Contents.of(new long[] {Contents.EMPTY, Contents.EMPTY}), Map.of());
        int a = lru.onMiss(1);
        int b = lru.onMiss(2);
        assertTrue(a != b);
        assertEquals(Instance.REJECT, lru.onMiss(3), "both slots pending: nothing to give");
        lru.onRemove(a); // abandoned
        assertEquals(a, lru.onMiss(3));
    }
}
