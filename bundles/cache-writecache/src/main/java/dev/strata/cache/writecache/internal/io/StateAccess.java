package dev.strata.cache.writecache.internal.io;

import dev.strata.cache.writecache.internal.index.SlotIndex;
import java.util.Arrays;

/** The narrow view of the in-memory state that recovery may set. */
public final class StateAccess {
    private final CacheState state;

    StateAccess(CacheState state) {
        this.state = state;
    }

    private int[] staged = new int[1024];
    private int stagedCount;

    /**
     * {@code slot} holds a committed copy of {@code block} (loaded, not yet findable); {@link
     * #linkStaged} picks the winner of each block and links them all at once.
     */
    public void stage(int slot, long block, long seq) {
        state.index.assign(slot, block, seq);
        if (stagedCount == staged.length) {
            staged = Arrays.copyOf(staged, stagedCount * 2);
        }
        staged[stagedCount++] = slot;
    }

    /**
     * Of the staged copies of a block the one with the highest seq_count wins (equal seq_counts:
     * the lowest slot); the others are freed and their entries rewritten FREE. The winners become
     * the index, built in one pass from block order. Staged slots must have come in increasing
     * slot order (the metadata scan's).
     */
    public void linkStaged() {
        int n = stagedCount;
        long[] blocks = new long[n];
        int[] slots = Arrays.copyOf(staged, n);
        staged = null;
        for (int i = 0; i < n; i++) {
            blocks[i] = state.index.block(slots[i]);
        }
        sortStable(blocks, slots, n); // by block; slot order kept among copies of one block
        int winners = 0;
        int i = 0;
        while (i < n) {
            int best = slots[i];
            int j = i + 1;
            for (; j < n && blocks[j] == blocks[i]; j++) {
                int s = slots[j];
                if (state.index.seq(s) > state.index.seq(best)) {
                    state.forget(best);
                    best = s;
                } else {
                    state.forget(s);
                }
            }
            slots[winners++] = best;
            i = j;
        }
        state.index.build(slots, winners);
    }

    /** Stable merge sort of {@code keys[0..n)} with {@code vals} moved along. */
    static void sortStable(long[] keys, int[] vals, int n) {
        long[] k2 = new long[n];
        int[] v2 = new int[n];
        long[] ka = keys;
        int[] va = vals;
        long[] kb = k2;
        int[] vb = v2;
        for (int width = 1; width < n; width *= 2) {
            for (int lo = 0; lo < n; lo += 2 * width) {
                int mid = Math.min(lo + width, n);
                int hi = Math.min(lo + 2 * width, n);
                int a = lo;
                int b = mid;
                int o = lo;
                while (a < mid && b < hi) {
                    if (ka[b] < ka[a]) {
                        kb[o] = ka[b];
                        vb[o++] = va[b++];
                    } else {
                        kb[o] = ka[a];
                        vb[o++] = va[a++];
                    }
                }
                while (a < mid) {
                    kb[o] = ka[a];
                    vb[o++] = va[a++];
                }
                while (b < hi) {
                    kb[o] = ka[b];
                    vb[o++] = va[b++];
                }
            }
            long[] kt = ka;
            ka = kb;
            kb = kt;
            int[] vt = va;
            va = vb;
            vb = vt;
        }
        if (ka != keys) {
            System.arraycopy(ka, 0, keys, 0, n);
            System.arraycopy(va, 0, vals, 0, n);
        }
    }

    /** {@code slot} is free, and its entry on the device must be rewritten FREE if {@code rewrite}. */
    public void free(int slot, boolean rewrite) {
        if (rewrite) {
            state.forget(slot);
        }
    }

    /** After loading: every slot that holds nothing is released for use. */
    public void releaseUnused() {
        for (int s = 0; s < state.slots(); s++) {
            if (state.index.block(s) == SlotIndex.NONE) {
                state.free.release(s);
            }
        }
    }
}
