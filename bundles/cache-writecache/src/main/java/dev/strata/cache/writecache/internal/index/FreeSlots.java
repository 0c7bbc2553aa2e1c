package dev.strata.cache.writecache.internal.index;

import java.util.BitSet;

/**
 * The free slots, ordered by position on the cache device (a bitmap: one bit per slot), with a
 * cursor that moves forward through the device and wraps: consecutive free slots after the
 * cursor are handed out together, so a multi-block write becomes one cache-device I/O, and
 * allocation sweeps the device instead of reusing the same few slots. Not thread-safe.
 *
 * <p>There are {@link #LANES} cursors, which start {@code slots / LANES} apart: concurrent
 * writers allocate from different lanes, so that their data writes land far apart on the cache
 * device instead of in consecutive slots of one device chunk (one stripe lock of a memory
 * device, one erase block of a flash device), where they would queue behind each other. A lone
 * writer always uses lane 0, whose cursor sweeps the whole device as a single cursor would; any
 * cursor takes any free slot once the slots after it are used (the bitmap is the only truth).
 */
public final class FreeSlots {
    private final BitSet free = new BitSet();
    private final int slots;
    /** Allocation cursors; see the class comment. */
    public static final int LANES = 16;
    private final int[] cursors = new int[LANES];
    private int count;

    public FreeSlots(int slots) {
        this.slots = slots;
        for (int k = 0; k < LANES; k++) {
            cursors[k] = (int) ((long) slots * k / LANES);
        }
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
        return take(want, 0);
    }

    /** {@link #take(int)} from the cursor of {@code lane} (0 to {@link #LANES} - 1). */
    public long take(int want, int lane) {
        if (count == 0 || want <= 0) {
            return -1;
        }
        int cursor = cursors[lane];
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
        cursors[lane] = start + len >= slots ? 0 : start + len;
        return ((long) start << 32) | len;
    }
}
