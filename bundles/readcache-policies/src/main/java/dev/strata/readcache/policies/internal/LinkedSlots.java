package dev.strata.readcache.policies.internal;

/**
 * Doubly linked lists of slots over two {@code int} arrays (no object per slot), plus the list
 * each slot is on in a {@code byte} array: 9 bytes per slot. Each list has a sentinel at index
 * {@code slots + list}, so linking and unlinking never branch on an empty list. A slot is on at
 * most one list; a slot on none is "pending" (handed out by {@code onMiss}, not yet inserted).
 * The head of a list ({@link #first}) is its least recently used end.
 */
final class LinkedSlots {
    static final int NONE = -1;
    /** {@link #listOf} of a slot that is on no list. */
    static final byte OFF = -1;

    private final int slots;
    private final int[] prev;
    private final int[] next;
    private final byte[] list;
    private final int[] sizes;

    LinkedSlots(int slots, int lists) {
        if (slots < 1 || lists < 1 || lists > Byte.MAX_VALUE) {
            throw new IllegalArgumentException("slots " + slots + ", lists " + lists);
        }
        this.slots = slots;
        int n = slots + lists;
        prev = new int[n];
        next = new int[n];
        list = new byte[slots];
        sizes = new int[lists];
        for (int l = 0; l < lists; l++) {
            int s = slots + l;
            prev[s] = s;
            next[s] = s;
        }
        java.util.Arrays.fill(list, OFF);
    }

    int slots() {
        return slots;
    }

    int size(int l) {
        return sizes[l];
    }

    /** The list {@code slot} is on, or {@link #OFF}. */
    int listOf(int slot) {
        return list[slot];
    }

    /** The least recently used slot of list {@code l}, or {@link #NONE}. */
    int first(int l) {
        int f = next[slots + l];
        return f >= slots ? NONE : f;
    }

    /** Appends an unlinked {@code slot} at the most recently used end of list {@code l}. */
    void addLast(int l, int slot) {
        if (list[slot] != OFF) {
            throw new IllegalStateException("slot " + slot + " is already on list " + list[slot]);
        }
        int s = slots + l;
        int p = prev[s];
        next[p] = slot;
        prev[slot] = p;
        next[slot] = s;
        prev[s] = slot;
        list[slot] = (byte) l;
        sizes[l]++;
    }

    /** Takes {@code slot} off its list (it must be on one). */
    void unlink(int slot) {
        int l = list[slot];
        if (l == OFF) {
            throw new IllegalStateException("slot " + slot + " is on no list");
        }
        int p = prev[slot];
        int n = next[slot];
        next[p] = n;
        prev[n] = p;
        list[slot] = OFF;
        sizes[l]--;
    }

    /** Moves {@code slot} (on some list) to the most recently used end of list {@code l}. */
    void moveToLast(int l, int slot) {
        unlink(slot);
        addLast(l, slot);
    }

    /** Takes the least recently used slot off list {@code l}; {@link #NONE} if it is empty. */
    int pollFirst(int l) {
        int f = first(l);
        if (f != NONE) {
            unlink(f);
        }
        return f;
    }

    long heapBytes() {
        return 4L * prev.length + 4L * next.length + list.length + 4L * sizes.length + 3 * 16;
    }
}
