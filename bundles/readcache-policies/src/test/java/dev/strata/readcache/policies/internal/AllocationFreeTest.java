package dev.strata.readcache.policies.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.ReadCachePolicy;
import dev.strata.api.ReadCachePolicy.Contents;
import dev.strata.api.ReadCachePolicy.Instance;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The contract's "allocates nothing after open" for onMiss, onHit, onInsert and onRemove: a
 * cache with a primitive index (block numbers are small here, so an array is the index) runs a
 * skewed workload with invalidations, and the JVM's count of this thread's allocated bytes
 * over a million calls stays flat.
 */
class AllocationFreeTest {
    private static final int SLOTS = 1024;
    private static final int KEYS = 8192;

    private static long run(Instance p, long[] keys, int[] slotOfKey, long seed, int ops) {
        long x = seed;
        long hits = 0;
        for (int i = 0; i < ops; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            int r = (int) (x >>> 33);
            int key = (r & 3) == 0 ? r % KEYS : r % (KEYS / 16); // a hot set and a cold tail
            int s = slotOfKey[key];
            if (s >= 0) {
                if ((r & 63) == 1) { // a write invalidates it
                    slotOfKey[key] = -1;
                    keys[s] = Contents.EMPTY;
                    p.onRemove(s);
                } else {
                    p.onHit(s);
                    hits++;
                }
                continue;
            }
            s = p.onMiss(key);
            if (s == Instance.REJECT) {
                continue;
            }
            if (keys[s] != Contents.EMPTY) {
                slotOfKey[(int) keys[s]] = -1;
            }
            keys[s] = key;
            slotOfKey[key] = s;
            p.onInsert(s, key);
        }
        return hits;
    }

    @Test
    void steadyStateCallsAllocateNothing() {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().getId();
        ReadCachePolicy[] policies = {new LruPolicy(), new NHitPolicy(), new WTinyLfuPolicy()};
        for (ReadCachePolicy policy : policies) {
            for (Map<String, String> t : new Map[] {Map.of(), Map.of("climb", "true")}) {
                long[] keys = new long[SLOTS];
                Arrays.fill(keys, Contents.EMPTY);
                int[] slotOfKey = new int[KEYS];
                Arrays.fill(slotOfKey, -1);
                Instance p = policy.open(Contents.of(keys), t);
                run(p, keys, slotOfKey, 1, 200_000); // warm up: JIT, every path taken
                long before = mx.getThreadAllocatedBytes(tid);
                long hits = run(p, keys, slotOfKey, 2, 1_000_000);
                long allocated = mx.getThreadAllocatedBytes(tid) - before;
                String name = p.status().get("policy") + " " + t;
                assertTrue(hits > 0, name);
                assertTrue(allocated < 4096, name + " allocated " + allocated + " bytes in a million calls");
            }
        }
    }
}
