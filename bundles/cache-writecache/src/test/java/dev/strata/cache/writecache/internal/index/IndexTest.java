package dev.strata.cache.writecache.internal.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class IndexTest {

    @Test
    void agreesWithATreeMap() {
        int slots = 5000;
        SlotIndex index = new SlotIndex(slots);
        TreeMap<Long, Integer> model = new TreeMap<>();
        ArrayDeque<Integer> free = new ArrayDeque<>();
        for (int i = 0; i < slots; i++) {
            free.add(i);
        }
        randomOperations(index, model, free, new Random(3), 200_000, 20_000);
        assertThrows(IllegalStateException.class, () -> {
            long b = model.firstKey();
            index.insert(free.poll(), b, 0);
        });
    }

    @Test
    void aTreeBuiltInOnePassBehavesAsOneBuiltByInserts() {
        int slots = 4000;
        SlotIndex index = new SlotIndex(slots);
        TreeMap<Long, Integer> model = new TreeMap<>();
        Random r = new Random(11);
        // slots hold random distinct blocks; the build gets them in block order
        java.util.List<Integer> order = new java.util.ArrayList<>();
        for (int s = 0; s < 3000; s++) {
            long b;
            do {
                b = r.nextInt(50_000);
            } while (model.containsKey(b));
            index.assign(s, b, 1);
            model.put(b, s);
        }
        order.addAll(model.values());
        int[] sorted = order.stream().mapToInt(Integer::intValue).toArray();
        index.build(sorted, sorted.length);
        assertEquals(model.size(), index.size());
        ArrayDeque<Integer> free = new ArrayDeque<>();
        for (int s = 3000; s < slots; s++) {
            free.add(s);
        }
        // then the same random operations as agreesWithATreeMap: the treap stays a search tree
        randomOperations(index, model, free, r, 50_000, 50_000);
        assertEquals(model.size(), index.size());
        assertThrows(IllegalStateException.class, () -> index.build(new int[0], 0)); // not empty
        SlotIndex unsorted = new SlotIndex(4);
        unsorted.assign(0, 5, 1);
        unsorted.assign(1, 3, 1);
        assertThrows(IllegalStateException.class, () -> unsorted.build(new int[] {0, 1}, 2));
    }

    /** Random finds, inserts, removes and ceilings on {@code index}, each checked against {@code model}. */
    private static void randomOperations(SlotIndex index, TreeMap<Long, Integer> model, ArrayDeque<Integer> free, Random r,
            int steps, int blocks) {
        for (int step = 0; step < steps; step++) {
            long b = r.nextInt(blocks);
            Integer have = model.get(b);
            assertEquals(have == null ? -1 : have, index.find(b));
            if (have == null && !free.isEmpty() && r.nextInt(3) != 0) {
                int s = free.poll();
                index.insert(s, b, step);
                model.put(b, s);
            } else if (have != null) {
                assertEquals(have, index.remove(b));
                assertEquals(b, index.block(have));
                index.clear(have);
                model.remove(b);
                free.add(have);
            }
            long q = r.nextInt(blocks + blocks / 20);
            Map.Entry<Long, Integer> c = model.ceilingEntry(q);
            assertEquals(c == null ? -1 : c.getValue(), index.ceiling(q), "ceiling " + q);
            assertEquals(model.size(), index.size());
        }
    }

    @Test
    void inOrderWalkThroughCeilingIsSorted() {
        SlotIndex index = new SlotIndex(1000);
        Random r = new Random(1);
        TreeMap<Long, Integer> model = new TreeMap<>();
        for (int s = 0; s < 1000; s++) {
            long b;
            do {
                b = r.nextInt(1 << 30);
            } while (model.containsKey(b));
            index.insert(s, b, s);
            model.put(b, s);
        }
        long at = 0;
        for (Map.Entry<Long, Integer> e : model.entrySet()) {
            int s = index.ceiling(at);
            assertEquals(e.getValue(), s);
            at = index.block(s) + 1;
        }
        assertEquals(-1, index.ceiling(at));
    }

    @Test
    void heapPerSlotWithTheFreeMapIsBelow24Bytes() {
        assertEquals(22, SlotIndex.heapBytesPerSlot());
        int n = 1 << 20;
        // bytes this thread allocated: every array of the index and the free list is allocated
        // here and kept, so this is their heap, and other threads of the test JVM (surefire, GC)
        // do not count — the used-heap deltas this replaced read 24.35 B once on a loaded machine
        com.sun.management.ThreadMXBean mx =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().getId();
        long before = mx.getThreadAllocatedBytes(tid);
        SlotIndex index = new SlotIndex(n);
        long mid = mx.getThreadAllocatedBytes(tid);
        FreeSlots free = new FreeSlots(n);
        for (int i = 0; i < n; i++) {
            free.release(i);
        }
        long after = mx.getThreadAllocatedBytes(tid);
        assertEquals(n, index.slots());
        assertEquals(n, free.count());
        double perSlot = (mid - before) / (double) n;
        double freeList = (after - mid) / (double) n;
        System.out.printf("writecache heap per slot: index %.2f B, free list %.2f B (%d slots)%n", perSlot, freeList, n);
        assertTrue(perSlot <= 22.6, "index heap per slot " + perSlot); // 22-byte nodes + at most 0.5 B of run hints
        assertTrue(freeList <= 0.3, "free list heap per slot " + freeList); // allocated: the BitSet's growth counts
        assertTrue(perSlot + freeList <= 24, "heap per slot, index and free map " + (perSlot + freeList));
    }

    @Test
    void linksAndFieldsHoldTheirExtremes() {
        // slot numbers up to Integer.MAX_VALUE - 1 (a cache of Integer.MAX_VALUE slots) and "none"
        int nil = Integer.MAX_VALUE;
        int[] values = {0, 1, 0x4000_0000, nil - 1, nil};
        for (int l : values) {
            for (int r : values) {
                long w = SlotIndex.link(l, r);
                assertEquals(l, SlotIndex.leftOf(w));
                assertEquals(r, SlotIndex.rightOf(w));
                assertEquals(0, w >>> 62, "the top two bits stay zero");
            }
        }
        SlotIndex index = new SlotIndex(3);
        long maxBlock = (1L << SlotIndex.BLOCK_BITS) - 2;
        index.insert(0, maxBlock, SlotIndex.SEQ_LIMIT - 1);
        index.insert(1, 0, 0);
        assertEquals(maxBlock, index.block(0));
        assertEquals(SlotIndex.SEQ_LIMIT - 1, index.seq(0));
        assertEquals(0, index.find(maxBlock));
        assertEquals(1, index.find(0));
        assertEquals(SlotIndex.NONE, index.block(2));
        // what does not fit is refused, never truncated into another block or seq_count
        assertThrows(IllegalArgumentException.class, () -> index.assign(2, maxBlock + 1, 0)); // the "none" pattern
        assertThrows(IllegalArgumentException.class, () -> index.assign(2, -2, 0));
        assertThrows(IllegalArgumentException.class, () -> index.assign(2, 5, SlotIndex.SEQ_LIMIT));
        assertThrows(IllegalArgumentException.class, () -> index.assign(2, 5, -1));
        assertThrows(IllegalArgumentException.class, () -> index.setSeq(0, SlotIndex.SEQ_LIMIT));
        assertThrows(IllegalArgumentException.class, () -> index.insertRun(2, 5, 1, SlotIndex.SEQ_LIMIT));
        assertEquals(SlotIndex.NONE, index.block(2));
        assertEquals(SlotIndex.SEQ_LIMIT - 1, index.seq(0));
        assertEquals(2, index.size());
    }

    @Test
    void freeSlotsHandOutConsecutiveRunsFromTheCursor() {
        FreeSlots f = new FreeSlots(16);
        for (int i = 0; i < 16; i++) {
            f.release(i);
        }
        assertEquals((0L << 32) | 4, f.take(4));
        assertEquals((4L << 32) | 12, f.take(100));
        assertEquals(-1, f.take(1));
        f.release(9);
        f.release(10);
        f.release(2);
        assertEquals((2L << 32) | 1, f.take(4)); // cursor wrapped to 0: first run is slot 2 alone
        assertEquals((9L << 32) | 2, f.take(4)); // the next run after the cursor, not merged across a used slot
        assertEquals(0, f.count());
        assertThrows(IllegalStateException.class, () -> {
            f.release(3);
            f.release(3);
        });
    }

    @Test
    void lanesStartASixteenthApartAndFallBackToAnyFreeSlot() {
        int n = 16 * 64;
        FreeSlots f = new FreeSlots(n);
        for (int i = 0; i < n; i++) {
            f.release(i);
        }
        // concurrent writers' lanes: far apart on the device, each run consecutive
        assertEquals((0L << 32) | 8, f.take(8, 0));
        assertEquals((64L << 32) | 8, f.take(8, 1));
        assertEquals((15L * 64 << 32) | 8, f.take(8, 15));
        assertEquals((8L << 32) | 8, f.take(8, 0)); // lane 0 goes on from its own cursor
        assertEquals((16L << 32) | 8, f.take(8)); // take(n) is lane 0
        // a lane whose slots after it are used takes the next free ones (wrapping), anywhere
        FreeSlots g = new FreeSlots(n);
        g.release(3);
        g.release(5);
        assertEquals((3L << 32) | 1, g.take(4, 7));
        assertEquals((5L << 32) | 1, g.take(4, 7));
        assertEquals(-1, g.take(1, 3));
    }
}
