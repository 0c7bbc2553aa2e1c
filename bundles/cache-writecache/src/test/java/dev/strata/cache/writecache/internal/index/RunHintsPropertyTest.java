package dev.strata.cache.writecache.internal.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * {@link SlotIndex#hinted}, the walk the write path skips, against a {@link TreeMap} reference
 * model: after every step of random inserts, runs, removals and slot reuse it names the slot the
 * model maps a block to or nothing, never another slot (a wrong answer would overwrite another
 * block's slot); right after a run is placed it names every block of it (else it saves nothing);
 * after recovery's one-pass build it names every block of every run of consecutive slots. The
 * index is small (64 slots: 8 hint entries for 20 groups of blocks) so that groups collide.
 */
class RunHintsPropertyTest {
    private static final int SLOTS = SlotIndexPropertyTest.SLOTS; // firstFreeRun is that test's
    private static final int BLOCKS = 160;

    @Property(tries = 300)
    void namesTheHolderOrNothing(@ForAll @Size(max = 200) List<@IntRange(min = 0, max = 1 << 20) Integer> ops) {
        SlotIndex index = new SlotIndex(SLOTS);
        TreeMap<Long, Integer> model = new TreeMap<>();
        TreeSet<Integer> free = new TreeSet<>();
        for (int s = 0; s < SLOTS; s++) {
            free.add(s);
        }
        long seq = 0;
        for (int op : ops) {
            long b = op % BLOCKS;
            switch (op >>> 18) { // 0..3
                case 0 -> {
                    // one block, into the free slot after its predecessor's holder when there is one
                    // (a run placed block by block, as overwrites of committed blocks are)
                    Integer prev = model.get(b - 1);
                    int s = prev != null && free.contains(prev + 1) ? prev + 1 : free.isEmpty() ? -1 : free.first();
                    if (!model.containsKey(b) && s >= 0) {
                        free.remove(s);
                        index.insert(s, b, ++seq);
                        model.put(b, s);
                        if (prev != null && s == prev + 1) {
                            assertEquals(s, index.hinted(b), "a block placed after its predecessor's slot");
                        }
                    }
                }
                case 1 -> {
                    int len = 2 + (op >>> 8) % 15;
                    int first = SlotIndexPropertyTest.firstFreeRun(free, len);
                    if (first >= 0 && b + len <= BLOCKS && model.subMap(b, b + len).isEmpty()) {
                        index.insertRun(first, b, len, ++seq);
                        for (int i = 0; i < len; i++) {
                            free.remove(first + i);
                            model.put(b + i, first + i);
                        }
                        for (int i = 0; i < len; i++) {
                            assertEquals(first + i, index.hinted(b + i), "block " + (b + i) + " of a run just placed");
                        }
                    }
                }
                default -> {
                    // removal, and the slot freed for reuse by any block (stale hints point at it)
                    Integer had = model.remove(b);
                    assertEquals(had == null ? -1 : had, index.remove(b));
                    if (had != null) {
                        if ((op & 1) == 0) {
                            index.clear(had);
                            free.add(had);
                        }
                    }
                }
            }
            for (long x = 0; x < BLOCKS + RunHints.GROUP; x++) {
                int h = index.hinted(x);
                if (h != -1) {
                    assertEquals(model.get(x), Integer.valueOf(h), "hinted " + x);
                }
            }
        }
        assertTrue(index.isTreap());
    }

    @net.jqwik.api.Example
    void anIndexOfNoSlotsKnowsNothing() {
        SlotIndex none = new SlotIndex(0);
        assertEquals(-1, none.hinted(0));
        assertEquals(-1, none.hinted(12345));
    }

    @Property(tries = 100)
    void buildNamesEveryRun(@ForAll @IntRange(min = 1, max = 100_000) int seed) {
        // recovery of a cache written in runs (and lone blocks) in random places: one pass links
        // them and notes each run. Blocks within the table's reach (no two groups share an entry),
        // so a run is missed only where a later run of the same group took the entry.
        Random rnd = new Random(seed);
        int slots = 4096;
        long reach = new RunHints(slots).entries() * RunHints.GROUP;
        SlotIndex index = new SlotIndex(slots);
        TreeMap<Long, Integer> model = new TreeMap<>();
        TreeMap<Long, Integer> runOf = new TreeMap<>(); // block of a run of two or more -> run number
        int slot = 0;
        for (int run = 0; slot < slots / 2; run++) {
            int len = 1 + rnd.nextInt(20);
            long b = rnd.nextInt((int) reach - len);
            if (!model.subMap(b - 1, b + len + 1).isEmpty()) {
                continue; // runs apart, so that each is a run of blocks and slots of its own
            }
            for (int i = 0; i < len; i++) {
                index.assign(slot + i, b + i, 3);
                model.put(b + i, slot + i);
                if (len > 1) {
                    runOf.put(b + i, run);
                }
            }
            slot += len;
        }
        int[] order = model.values().stream().mapToInt(Integer::intValue).toArray();
        index.build(order, order.length);
        assertTrue(index.isTreap());
        for (var e : model.entrySet()) {
            long b = e.getKey();
            int h = index.hinted(b);
            if (h != -1) {
                assertEquals(e.getValue(), Integer.valueOf(h), "hinted " + b);
            }
            Integer run = runOf.get(b);
            if (run != null) {
                // the group's entry belongs to the run of its highest block that is in a run
                long group = b & -RunHints.GROUP;
                Long top = runOf.floorKey(group + RunHints.GROUP - 1);
                if (run.equals(runOf.get(top))) {
                    assertEquals(e.getValue(), Integer.valueOf(h), "block " + b + " of run " + run);
                }
            }
        }
    }
}
