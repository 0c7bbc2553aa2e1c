package dev.strata.cache.writecache.internal.io;

import dev.strata.cache.writecache.internal.index.SlotIndex;

/** The narrow view of the in-memory state that recovery may set. */
public final class StateAccess {
    private final CacheState state;

    StateAccess(CacheState state) {
        this.state = state;
    }

    public int find(long block) {
        return state.index.find(block);
    }

    public long seq(int slot) {
        return state.index.seq(slot);
    }

    /** {@code slot} holds the committed copy of {@code block}. */
    public void link(int slot, long block, long seq) {
        state.index.insert(slot, block, seq);
    }

    /** {@code slot} replaces {@code old} as the holder of {@code block}; {@code old}'s entry must be rewritten FREE. */
    public void replace(int old, int slot, long block, long seq) {
        state.index.remove(block);
        state.forget(old);
        state.index.insert(slot, block, seq);
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
