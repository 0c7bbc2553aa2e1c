package dev.strata.cache.readcache.internal.index;

/**
 * Origin block → slot, in one {@code int[]}: open addressing with linear probing over a table of
 * {@code ceil(slots * 4 / 3)} cells (load ≤ 0.75), each holding {@code slot + 1} or 0. The keys
 * are not stored here: a cell's key is {@code keys[slot]}, the cache's slot → block table, which
 * the policy reads too — so the index costs about 5.3 bytes per slot, not 16.
 * Removal shifts later cells of the cluster back (no tombstones), so look-ups never degrade.
 * Not thread-safe: the cache calls it under its lock.
 */
public final class BlockIndex {
    private final int[] cells;
    private final long[] keys;
    private int size;

    /** An index over {@code keys} (the slot → block table, shared, not copied). */
    public BlockIndex(long[] keys) {
        this.keys = keys;
        long n = Math.max(2, (keys.length * 4L + 2) / 3 + 1);
        if (n > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("too many slots: " + keys.length);
        }
        this.cells = new int[(int) n];
    }

    private int home(long key) {
        long h = key * 0x9E3779B97F4A7C15L;
        h ^= h >>> 29;
        // Lemire's multiply-shift range reduction: any table size, no power of two needed
        return (int) (((h >>> 32) * cells.length) >>> 32);
    }

    /** The slot holding {@code key}, or -1. */
    public int get(long key) {
        int n = cells.length;
        for (int i = home(key);; i = i + 1 == n ? 0 : i + 1) {
            int c = cells[i];
            if (c == 0) {
                return -1;
            }
            if (keys[c - 1] == key) {
                return c - 1;
            }
        }
    }

    /** Maps {@code keys[slot]} to {@code slot}; the key must not be in the index. */
    public void put(int slot) {
        long key = keys[slot];
        int n = cells.length;
        int i = home(key);
        while (cells[i] != 0) {
            i = i + 1 == n ? 0 : i + 1;
        }
        cells[i] = slot + 1;
        size++;
    }

    /** Removes {@code key} if it maps to {@code slot}; returns whether it did. Reads {@code keys[slot]} as {@code key}. */
    public boolean remove(long key, int slot) {
        int n = cells.length;
        int i = home(key);
        while (true) {
            int c = cells[i];
            if (c == 0) {
                return false;
            }
            if (c - 1 == slot) {
                break;
            }
            i = i + 1 == n ? 0 : i + 1;
        }
        cells[i] = 0;
        size--;
        // backward-shift deletion: move up every later cell of the cluster that may sit at i
        int j = i;
        while (true) {
            j = j + 1 == n ? 0 : j + 1;
            int c = cells[j];
            if (c == 0) {
                return true;
            }
            int h = home(keys[c - 1]);
            boolean between = i <= j ? (i < h && h <= j) : (i < h || h <= j);
            if (!between) {
                cells[i] = c;
                cells[j] = 0;
                i = j;
            }
        }
    }

    public int size() {
        return size;
    }

    /** Heap bytes of the table. */
    public long heapBytes() {
        return 16L + 4L * cells.length;
    }
}
