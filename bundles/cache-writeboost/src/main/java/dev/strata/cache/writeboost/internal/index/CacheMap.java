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
 *   int[]  table   a location and a fingerprint, or -1; the key of a slot is          4 / 0.8 = 5 bytes
 *                  owner[location]
 * </pre>
 * A table entry is {@code fingerprint << locBits | location}, where {@code locBits} is the number
 * of bits a location needs and the fingerprint is the (31 - locBits) bits of the key's hash that
 * the slot is not chosen by (none for caches of 2^31 locations). A probe compares fingerprints
 * first and reads {@code owner[location]} (a random access into a large array, i.e. a cache
 * miss) only when they match: a full table's clusters are walked mostly without touching
 * {@code owner}. Correctness never depends on the fingerprint: equal keys have equal
 * fingerprints, and a match is always confirmed by {@code owner}.
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
    private final int locBits;
    private final int locMask;
    private final int fpMask;
    private int size;

    /** A map for {@code locations} cache locations of which at most {@code maxEntries} hold blocks. */
    public CacheMap(int locations, int maxEntries) {
        this(locations, maxEntries, 31);
    }

    /** As above, with at most {@code maxFingerprintBits} fingerprint bits (tests use few, to force collisions). */
    CacheMap(int locations, int maxEntries, int maxFingerprintBits) {
        int bits = Math.max(1, 32 - Integer.numberOfLeadingZeros(Math.max(1, locations - 1)));
        locBits = bits;
        locMask = bits >= 31 ? Integer.MAX_VALUE : (1 << bits) - 1;
        int fpBits = Math.max(0, Math.min(maxFingerprintBits, 31 - bits));
        fpMask = (1 << fpBits) - 1;
        owner = new long[locations];
        java.util.Arrays.fill(owner, -1L);
        valid = new byte[locations];
        clean = new long[(locations + 63) >>> 6];
        int t = (int) Math.min(Integer.MAX_VALUE - 8, (long) Math.ceil(maxEntries / 0.8) + 1);
        table = new int[t];
        java.util.Arrays.fill(table, EMPTY);
        tableSize = t;
    }

    private static long hash(long key) {
        long h = key * 0x9E3779B97F4A7C15L;
        h ^= h >>> 29;
        h *= 0xBF58476D1CE4E5B9L;
        h ^= h >>> 32;
        return h;
    }

    /** The home slot: from the low 32 bits of the hash. */
    private int slot(long h) {
        return (int) (((h & 0xFFFFFFFFL) * tableSize) >>> 32);
    }

    /** The fingerprint, shifted into place: from the high bits of the hash. */
    private int fp(long h) {
        return ((int) (h >>> 40) & fpMask) << locBits;
    }

    /** The fingerprint bits of a table entry, in place. */
    private int fpOf(int e) {
        return e & ~locMask;
    }

    private int next(int s) {
        return ++s == table.length ? 0 : s;
    }

    /** The location holding {@code block}, or -1. */
    public int get(long block) {
        long h = hash(block);
        int f = fp(h);
        for (int s = slot(h);; s = next(s)) {
            int e = table[s];
            if (e == EMPTY) {
                return -1;
            }
            if (fpOf(e) == f && owner[e & locMask] == block) {
                return e & locMask;
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
        long h = hash(block);
        int f = fp(h);
        for (int s = slot(h);; s = next(s)) {
            int e = table[s];
            if (e == EMPTY) {
                table[s] = f | loc;
                size++;
                return -1;
            }
            int cur = e & locMask;
            if (cur == loc) {
                return -1;
            }
            if (fpOf(e) == f && owner[cur] == block) {
                table[s] = f | loc;
                clearLocation(cur);
                return cur;
            }
        }
    }

    /** Forgets {@code block}; returns its location (now empty), or -1. */
    public int remove(long block) {
        long h = hash(block);
        int f = fp(h);
        for (int s = slot(h);; s = next(s)) {
            int e = table[s];
            if (e == EMPTY) {
                return -1;
            }
            int loc = e & locMask;
            if (fpOf(e) == f && owner[loc] == block) {
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
            int e = table[s];
            if (e == EMPTY) {
                break;
            }
            int home = slot(hash(owner[e & locMask]));
            boolean between = hole <= s ? (home > hole && home <= s) : (home > hole || home <= s);
            if (!between) {
                table[hole] = e;
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

    /** Locations in {@code [from, to)} that hold a block that is not clean. */
    public int dirtyIn(int from, int to) {
        int n = 0;
        for (int loc = from; loc < to; loc++) {
            if (owner[loc] >= 0 && (clean[loc >>> 6] & (1L << loc)) == 0) {
                n++;
            }
        }
        return n;
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
