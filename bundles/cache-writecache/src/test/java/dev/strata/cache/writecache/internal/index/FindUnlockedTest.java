package dev.strata.cache.writecache.internal.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link SlotIndex#findUnlocked}, the walk of an in-place write's optimistic look: on a tree
 * nobody changes it answers as {@link SlotIndex#find}; past its step bound it gives up with -1;
 * and racing a writer that inserts, removes and rotates (no lock, as the optimistic look does)
 * it always ends, never throws, and answers -1 or a slot in range — the caller validates the
 * answer, but a walk that looped or failed on a half-made change would hang or break the write.
 */
@Timeout(60)
class FindUnlockedTest {
    @Test
    void answersAsFindOnAStableTree() {
        SlotIndex ix = new SlotIndex(4096);
        Random rnd = new Random(3);
        long[] blocks = new long[4096];
        for (int s = 0; s < 4096; s++) {
            long b;
            do {
                b = rnd.nextInt(1 << 20) * 2L; // even blocks: the odd ones are surely absent
            } while (ix.find(b) >= 0);
            blocks[s] = b;
            ix.insert(s, b, 1);
        }
        for (int s = 0; s < 4096; s++) {
            assertEquals(s, ix.findUnlocked(blocks[s], 512), "block " + blocks[s]);
            assertEquals(-1, ix.findUnlocked(blocks[s] + 1, 512), "absent block " + (blocks[s] + 1));
        }
        int deep = 0;
        for (int s = 0; s < 4096; s++) {
            if (ix.findUnlocked(blocks[s], 2) < 0) {
                deep++;
            }
        }
        assertTrue(deep > 4000, "a walk of 2 levels finds at most the root and its children, gave up on " + deep);
    }

    @Test
    void endsAndStaysInRangeWhileTheTreeChanges() throws Exception {
        int slots = 2048;
        SlotIndex ix = new SlotIndex(slots);
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread reader = new Thread(() -> {
            Random rnd = new Random(5);
            try {
                for (int i = 0; i < 2_000_000; i++) {
                    int s = ix.findUnlocked(rnd.nextInt(4096), 512);
                    int h = ix.hinted(rnd.nextInt(4096)); // the optimistic look's first try
                    if (s < -1 || s >= slots || h < -1 || h >= slots) {
                        throw new AssertionError("slot out of range: " + s + ", " + h);
                    }
                }
            } catch (Throwable x) {
                failed.set(x);
            }
        }, "reader");
        reader.start();
        Random rnd = new Random(7);
        boolean[] used = new boolean[slots];
        while (reader.isAlive()) {
            int s = rnd.nextInt(slots);
            if (used[s]) {
                ix.remove(ix.block(s));
                ix.clear(s);
                used[s] = false;
            } else {
                long b = rnd.nextInt(4096);
                if (s + 1 < slots && !used[s + 1] && ix.find(b) < 0 && ix.find(b + 1) < 0) {
                    ix.insertRun(s, b, 2, 1); // a run: noted in the hints the reader follows
                    used[s] = true;
                    used[s + 1] = true;
                } else if (ix.find(b) < 0) {
                    ix.insert(s, b, 1);
                    used[s] = true;
                }
            }
        }
        reader.join();
        assertEquals(null, failed.get(), "the unlocked walk failed");
    }
}
