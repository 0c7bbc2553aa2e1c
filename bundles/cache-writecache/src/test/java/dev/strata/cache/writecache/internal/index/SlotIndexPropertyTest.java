package dev.strata.cache.writecache.internal.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;

/**
 * The index against a {@link TreeMap} reference model: inserts (one block, and runs of
 * consecutive blocks into consecutive slots, the write path's allocation), removals, ceiling,
 * find, the O(1) {@link SlotIndex#holds} check the write path trusts instead of a walk, and the
 * in-order walk in backing order, after every step of random sequences. Blocks come from a small
 * range so that sequences collide, reuse slots and remove what they inserted. The packed node
 * (22 bytes: block, seq_count and both links sharing words) is checked at the fields' full widths
 * in {@link #fullWidthFieldsStayApart}.
 */
class SlotIndexPropertyTest {
    static final int SLOTS = 64;
    private static final int BLOCKS = 160;

    @Property(tries = 300)
    void behavesLikeASortedMap(@ForAll @Size(max = 200) List<@IntRange(min = 0, max = 1 << 20) Integer> ops) {
        SlotIndex index = new SlotIndex(SLOTS);
        TreeMap<Long, Integer> model = new TreeMap<>();
        TreeSet<Integer> free = new TreeSet<>();
        for (int s = 0; s < SLOTS; s++) {
            free.add(s);
        }
        long seq = 0;
        for (int op : ops) {
            assertTrue(index.isTreap());
            long b = op % BLOCKS;
            switch (op >>> 18) { // 0..3
                case 0 -> {
                    if (!model.containsKey(b) && !free.isEmpty()) {
                        int s = free.pollFirst();
                        index.insert(s, b, ++seq);
                        model.put(b, s);
                    }
                }
                case 1 -> {
                    int len = 1 + (op >>> 8) % 9;
                    int first = firstFreeRun(free, len);
                    boolean absent = b + len <= BLOCKS && model.subMap(b, b + len).isEmpty();
                    if (first >= 0 && absent) {
                        index.insertRun(first, b, len, ++seq);
                        for (int i = 0; i < len; i++) {
                            free.remove(first + i);
                            model.put(b + i, first + i);
                            assertEquals(seq, index.seq(first + i));
                        }
                    }
                }
                case 2 -> {
                    Integer had = model.remove(b);
                    int removed = index.remove(b);
                    assertEquals(had == null ? -1 : had, removed, "remove " + b);
                    if (had != null) {
                        assertFalse(index.holds(had, b), "a removed slot is not the holder any more");
                        assertEquals(b, index.block(had), "a removed slot keeps its block (an older copy)");
                        index.clear(had);
                        free.add(had);
                    }
                }
                default -> {
                    Map.Entry<Long, Integer> c = model.ceilingEntry(b);
                    assertEquals(c == null ? -1 : c.getValue(), index.ceiling(b), "ceiling " + b);
                    assertEquals(model.getOrDefault(b, -1), index.find(b), "find " + b);
                }
            }
            assertEquals(model.size(), index.size());
            for (int s = 0; s < SLOTS; s++) {
                long held = index.block(s);
                boolean holder = held != SlotIndex.NONE && Integer.valueOf(s).equals(model.get(held));
                assertEquals(holder, index.holds(s, held), "holds slot " + s);
                assertFalse(index.holds(s, held + 1), "holds only its own block");
            }
        }
        // the in-order walk (the writeback's and discard's range iteration): backing order, every block once
        List<Long> walked = new ArrayList<>();
        long at = 0;
        for (int s = index.ceiling(at); s >= 0; s = index.ceiling(at)) {
            walked.add(index.block(s));
            assertEquals(model.get(index.block(s)), s);
            at = index.block(s) + 1;
        }
        assertEquals(new ArrayList<>(model.keySet()), walked);
        assertFalse(index.holds(-1, 0));
        assertFalse(index.holds(SLOTS, 0));
    }

    /** The first slot of {@code len} consecutive free slots, or -1. */
    static int firstFreeRun(TreeSet<Integer> free, int len) {
        for (int s : free) {
            boolean all = true;
            for (int i = 1; i < len && all; i++) {
                all = free.contains(s + i);
            }
            if (all && s + len <= SLOTS) {
                return s;
            }
        }
        return -1;
    }

    @Property(tries = 50)
    void runsJoinAnyTreeInOrder(@ForAll @IntRange(min = 0, max = 40) int before, @ForAll @IntRange(min = 1, max = 20) int run,
            @ForAll @IntRange(min = 0, max = 40) int after) {
        // blocks spread below and above a run, then the run joined in between: one sorted tree
        SlotIndex index = new SlotIndex(before + run + after);
        TreeMap<Long, Integer> model = new TreeMap<>();
        int slot = 0;
        for (int i = 0; i < before; i++, slot++) {
            index.insert(slot, 1000 - 10L * i, 0);
            model.put(1000 - 10L * i, slot);
        }
        for (int i = 0; i < after; i++, slot++) {
            index.insert(slot, 3000 + 7L * i, 0);
            model.put(3000 + 7L * i, slot);
        }
        index.insertRun(slot, 2000, run, 1);
        for (int i = 0; i < run; i++) {
            model.put(2000L + i, slot + i);
            assertTrue(index.holds(slot + i, 2000L + i));
        }
        long at = 0;
        for (Map.Entry<Long, Integer> e : model.entrySet()) {
            assertEquals(e.getValue(), index.ceiling(at));
            at = e.getKey() + 1;
        }
        assertEquals(-1, index.ceiling(at));
        assertEquals(model.size(), index.size());
        assertTrue(index.isTreap());
    }

    @Property(tries = 100)
    void runsKeepTheTreapOrder(@ForAll @IntRange(min = 1, max = 1000) int seed) {
        // a fresh cache's allocation: runs of 1-16 uncached blocks at random places, each joined in
        // below the nodes that outrank its root; the tree must stay a treap (order and priorities)
        java.util.Random rnd = new java.util.Random(seed);
        int slots = 4096;
        SlotIndex index = new SlotIndex(slots);
        TreeMap<Long, Integer> model = new TreeMap<>();
        int slot = 0;
        while (slot < slots) {
            int len = Math.min(slots - slot, 1 + rnd.nextInt(16));
            long b = 16L * rnd.nextInt(100_000);
            if (!model.subMap(b, b + 16).isEmpty()) {
                continue;
            }
            index.insertRun(slot, b, len, 1);
            for (int i = 0; i < len; i++) {
                model.put(b + i, slot + i);
            }
            slot += len;
            if (rnd.nextInt(8) == 0) {
                assertTrue(index.isTreap(), "after " + slot + " slots");
            }
        }
        assertTrue(index.isTreap());
        for (Map.Entry<Long, Integer> e : model.entrySet()) {
            assertEquals(e.getValue(), index.find(e.getKey()));
        }
    }

    private static final long MAX_BLOCK = (1L << SlotIndex.BLOCK_BITS) - 2;

    /**
     * Blocks and seq_counts at their full widths (2^54 - 2 and 2^58 - 1 at most; jqwik mixes in
     * the bounds), in slots spread over more than one chunk: every field reads back exactly what
     * was written, whatever its neighbours hold; a seq_count rewritten in place changes nothing
     * else; older copies (assigned, not linked) of blocks in the tree are never their holders;
     * and a tree rebuilt in one pass from the same slots is the same map.
     */
    @Property(tries = 200)
    void fullWidthFieldsStayApart(@ForAll @Size(min = 1, max = 80) List<@LongRange(min = 0, max = MAX_BLOCK) Long> blocks,
            @ForAll @Size(min = 80, max = 80) List<@LongRange(min = 0, max = SlotIndex.SEQ_LIMIT - 1) Long> seqs,
            @ForAll @IntRange(min = 0, max = 1 << 16) int spread) {
        int slots = SlotIndex.CHUNK + 2 * 80;
        SlotIndex index = new SlotIndex(slots);
        TreeMap<Long, Integer> model = new TreeMap<>();
        Map<Integer, long[]> held = new TreeMap<>(); // slot -> {block, seq}
        for (int i = 0; i < blocks.size(); i++) {
            // slots on both sides of the first chunk boundary, and the last slot
            int slot = i % 2 == 0 ? SlotIndex.CHUNK - 1 - i : (i == 1 ? slots - 1 : SlotIndex.CHUNK + i);
            long b = blocks.get(i);
            long s = seqs.get((i + spread) % seqs.size());
            if (model.containsKey(b)) {
                index.assign(slot, b, s); // an older copy of a block the tree holds elsewhere
            } else {
                index.insert(slot, b, s);
                model.put(b, slot);
            }
            held.put(slot, new long[] {b, s});
        }
        assertTrue(index.isTreap());
        checkFields(index, model, held, slots);
        // seq_counts rewritten in place (a commit's restamp) leave blocks and links alone
        for (Map.Entry<Integer, long[]> e : held.entrySet()) {
            long s = SlotIndex.SEQ_LIMIT - 1 - e.getValue()[1];
            index.setSeq(e.getKey(), s);
            e.getValue()[1] = s;
        }
        assertTrue(index.isTreap());
        checkFields(index, model, held, slots);
        // the same holders linked in one pass (recovery's build): the same map, the same fields
        SlotIndex rebuilt = new SlotIndex(slots);
        for (Map.Entry<Integer, long[]> e : held.entrySet()) {
            rebuilt.assign(e.getKey(), e.getValue()[0], e.getValue()[1]);
        }
        int[] order = model.values().stream().mapToInt(Integer::intValue).toArray();
        rebuilt.build(order, order.length);
        assertTrue(rebuilt.isTreap());
        checkFields(rebuilt, model, held, slots);
        // half of them removed: the rest stays findable, the removed keep their fields
        int k = 0;
        for (Long b : new ArrayList<>(model.keySet())) {
            if (k++ % 2 == 0) {
                int slot = model.remove(b);
                assertEquals(slot, rebuilt.remove(b));
            }
        }
        assertTrue(rebuilt.isTreap());
        checkFields(rebuilt, model, held, slots);
    }

    private static void checkFields(SlotIndex index, TreeMap<Long, Integer> model, Map<Integer, long[]> held, int slots) {
        assertEquals(model.size(), index.size());
        for (int s = 0; s < slots; s++) {
            long[] f = held.get(s);
            assertEquals(f == null ? SlotIndex.NONE : f[0], index.block(s), "block of slot " + s);
            assertEquals(f == null ? 0 : f[1], index.seq(s), "seq_count of slot " + s);
            if (f != null) {
                assertEquals(Integer.valueOf(s).equals(model.get(f[0])), index.holds(s, f[0]), "holds slot " + s);
            }
        }
        for (Map.Entry<Long, Integer> e : model.entrySet()) {
            assertEquals(e.getValue(), index.find(e.getKey()));
            assertEquals(e.getValue(), index.ceiling(e.getKey()));
        }
    }
}
