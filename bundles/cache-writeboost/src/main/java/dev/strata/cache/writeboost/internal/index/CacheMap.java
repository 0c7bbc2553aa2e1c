package dev.strata.cache.writeboost.internal.index;

/**
 * Which backing block each cache location holds, and the reverse lookup, in primitive arrays:
 * no object per cached block.
 *
 * <pre>
 * per cache location (segment * 256 + block in segment; header locations stay empty):
 *   long[] owner   backing block held there, or -1 (empty, superseded or invalidated)  8 bytes
 *   byte[] valid   valid-sector bits (bit i = sector i of 8)                            1 byte
 *   long[] clean   bitmap: the location holds a clean (read-cached) block              1/8 byte
 * lookup table (open addressing, linear probing, backward-shift deletion, load <= 0.8):
 *   int[]  table   a location, or -1; the key of a slot is owner[table[slot]]          4 / 0.8 = 5 bytes
 * </pre>
 * About 14 bytes of heap per cached 4 KiB block. A location is "current" when it is in the
 * table; {@link #put} and {@link #remove} keep {@code owner} equal to -1 for every location that
 * is not.
 *
 * <p>Not thread-safe: the owner (the cache) guards it with its lock.
 */
public final class CacheMap {
    private static final int EMPTY = -1;
    private final long[] owner;
    private final byte[] valid;
    private final long[] clean;
    private final int[] table;
    private final long tableSize;
    private int size;

    /** A map for {@code locations} cache locations of which at most {@code maxEntries} hold blocks. */
    public CacheMap(int locations, int maxEntries) {
        owner = new long[locations];
        java.util.Arrays.fill(owner, -1L);
        valid = new byte[locations];
        clean = new long[(locations + 63) >>> 6];
        int t = (int) Math.min(Integer.MAX_VALUE - 8, (long) Math.ceil(maxEntries / 0.8) + 1);
        table = new int[t];
        java.util.Arrays.fill(table, EMPTY);
        tableSize = t;
    }

    private int slot(long key) {
        long h = key * 0x9E3779B97F4A7C15L;
        h ^= h >>> 29;
        h *= 0xBF58476D1CE4E5B9L;
        h ^= h >>> 32;
        return (int) (((h & 0xFFFFFFFFL) * tableSize) >>> 32);
    }

    private int next(int s) {
        return ++s == table.length ? 0 : s;
    }

    /** The location holding {@code block}, or -1. */
    public int get(long block) {
        for (int s = slot(block);; s = next(s)) {
            int loc = table[s];
            if (loc == EMPTY) {
                return -1;
            }
            if (owner[loc] == block) {
                return loc;
            }
        }
    }

    /**
     * Makes {@code loc} the location of {@code block}; returns the location it replaces (now
     * empty), or -1.
     */
    public int put(long block, int loc, int validBits, boolean isClean) {
        owner[loc] = block;
        valid[loc] = (byte) validBits;
        setClean(loc, isClean);
        for (int s = slot(block);; s = next(s)) {
            int cur = table[s];
            if (cur == EMPTY) {
                table[s] = loc;
                size++;
                return -1;
            }
            if (cur != loc && owner[cur] == block) {
                table[s] = loc;
                clearLocation(cur);
                return cur;
            }
            if (cur == loc) {
                return -1;
            }
        }
    }

    /** Forgets {@code block}; returns its location (now empty), or -1. */
    public int remove(long block) {
        for (int s = slot(block);; s = next(s)) {
            int loc = table[s];
            if (loc == EMPTY) {
                return -1;
            }
            if (owner[loc] == block) {
                deleteSlot(s);
                clearLocation(loc);
                size--;
                return loc;
            }
        }
    }

    /** Forgets whatever block {@code loc} holds (if it is current). */
    public void removeLocation(int loc) {
        long b = owner[loc];
        if (b >= 0) {
            remove(b);
        }
    }

    private void deleteSlot(int hole) {
        // backward-shift deletion: move later members of the cluster into the hole when their
        // home slot does not lie cyclically in (hole, s]
        int s = hole;
        for (;;) {
            s = next(s);
            int loc = table[s];
            if (loc == EMPTY) {
                break;
            }
            int home = slot(owner[loc]);
            boolean between = hole <= s ? (home > hole && home <= s) : (home > hole || home <= s);
            if (!between) {
                table[hole] = loc;
                hole = s;
            }
        }
        table[hole] = EMPTY;
    }

    private void clearLocation(int loc) {
        owner[loc] = -1;
        valid[loc] = 0;
        setClean(loc, false);
    }

    public long owner(int loc) {
        return owner[loc];
    }

    public int valid(int loc) {
        return valid[loc] & 0xFF;
    }

    public void setValid(int loc, int bits) {
        valid[loc] = (byte) bits;
    }

    public boolean clean(int loc) {
        return (clean[loc >>> 6] & (1L << loc)) != 0;
    }

    public void setClean(int loc, boolean c) {
        if (c) {
            clean[loc >>> 6] |= 1L << loc;
        } else {
            clean[loc >>> 6] &= ~(1L << loc);
        }
    }

    /** Number of blocks held. */
    public int size() {
        return size;
    }

    /** Heap bytes held by the arrays (for the heap-per-block figure). */
    public long heapBytes() {
        return 8L * owner.length + valid.length + 8L * clean.length + 4L * table.length;
    }
}
