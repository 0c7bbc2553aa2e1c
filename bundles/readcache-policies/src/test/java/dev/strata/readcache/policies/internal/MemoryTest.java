package dev.strata.readcache.policies.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.ReadCachePolicy;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The policy's share of the heap per cached block (issue 12: index + policy ≤ 32 B per block;
 * the index is the read cache's). {@code heapBytes()} adds up the instance's arrays; this test
 * checks it against the budget and against the JVM's own count of the heap the open took.
 */
class MemoryTest {
    private static final int SLOTS = 1 << 20;

    private static double perSlot(ReadCachePolicy p) {
        ReadCachePolicy.Instance i = p.open(ReadCacheContents.empty(SLOTS), Map.of());
        double b = (double) i.heapBytes() / SLOTS;
        System.out.printf("%s: %.2f bytes per slot (%d slots)%n", i.status().get("policy"), b, SLOTS);
        return b;
    }

    @Test
    void perSlotBytesAreWithinTheirShare() {
        assertTrue(perSlot(new LruPolicy()) <= 9.01);
        assertTrue(perSlot(new NHitPolicy()) <= 13.2);
        assertTrue(perSlot(new WTinyLfuPolicy()) <= 17.01);
    }

    @Test
    void heapBytesIsWhatTheJvmAllocates() {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().getId();
        for (ReadCachePolicy p : new ReadCachePolicy[] {new LruPolicy(), new NHitPolicy(), new WTinyLfuPolicy()}) {
            ReadCachePolicy.Contents c = ReadCacheContents.empty(SLOTS);
            long before = mx.getThreadAllocatedBytes(tid);
            ReadCachePolicy.Instance i = p.open(c, Map.of());
            long allocated = mx.getThreadAllocatedBytes(tid) - before;
            long claimed = i.heapBytes();
            assertTrue(Math.abs(allocated - claimed) < 0.01 * claimed + 4096,
                    i.status().get("policy") + ": allocated " + allocated + " bytes, heapBytes() says " + claimed);
        }
    }
}
