package dev.strata.cache.writecache.internal.index;

import java.util.BitSet;

/**
 * The free slots, ordered by position on the cache device (a bitmap: one bit per slot), with a
 * cursor that moves forward through the device and wraps: consecutive free slots after the
 * cursor are handed out together, so a multi-block write becomes one cache-device I/O, and
 * allocation sweeps the device instead of reusing the same few slots. Not thread-safe.
 */
public final class FreeSlots {
    private final BitSet free = new BitSet();
    private final int slots;
    private int cursor;
    private int count;

    public FreeSlots(int slots) {
        this.slots = slots;
    }

    public int count() {
        return count;
    }

    public boolean isFree(int slot) {
        return free.get(slot);
    }

    public void release(int slot) {
        if (free.get(slot)) {
            throw new IllegalStateException("slot " + slot + " is free already");
        }
        free.set(slot);
        count++;
    }

    /**
     * Takes up to {@code want} physically consecutive free slots: the first run at or after the
     * cursor (wrapping once). Returns {@code start << 32 | length}, or -1 when none is free.
     */
    public long take(int want) {
        if (count == 0 || want <= 0) {
            return -1;
        }
        int start = free.nextSetBit(cursor);
        if (start < 0) {
            start = free.nextSetBit(0);
        }
        // bounded by want: nextClearBit would scan the whole free run (all of an empty cache)
        int limit = (int) Math.min(slots, (long) start + want);
        int len = 1;
        while (start + len < limit && free.get(start + len)) {
            len++;
        }
        free.clear(start, start + len);
        count -= len;
        cursor = start + len >= slots ? 0 : start + len;
        return ((long) start << 32) | len;
    }
}
