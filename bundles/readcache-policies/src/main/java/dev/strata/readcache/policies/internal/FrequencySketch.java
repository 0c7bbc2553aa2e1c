package dev.strata.readcache.policies.internal;

/**
 * A count-min sketch of 4-bit counters estimating how often each block was accessed recently:
 * Caffeine's {@code FrequencySketch} (block-based layout) ported to {@code long} keys and sized
 * to one {@code long} (16 counters, 8 bytes) per cache slot, rather than to the next power of two
 * (which would cost up to 16 bytes).
 * <p>
 * The table is made of 64-byte blocks of eight longs; a key picks one block (one cache line) and
 * one counter in each of four of its longs, so an update touches one cache line. The frequency is
 * the minimum of the four. <b>Aging</b>: after {@code sampleSize} increments every counter is
 * halved, so the sketch follows a changing workload (TinyLFU's "reset").
 */
final class FrequencySketch {
    private static final long RESET_MASK = 0x7777777777777777L;
    private static final long ONE_MASK = 0x1111111111111111L;
    /** The highest count a 4-bit counter holds. */
    static final int MAX = 15;

    private final long[] table;
    private final int blocks;
    private final int sampleSize;
    private int additions;
    private long resets;

    /**
     * @param entries     how many keys the sketch is sized for (the cache's slots)
     * @param sampleFactor increments per entry between two halvings (Caffeine: 10)
     */
    FrequencySketch(int entries, int sampleFactor) {
        blocks = Math.max(1, (entries + 7) >>> 3);
        table = new long[blocks << 3];
        sampleSize = (int) Math.min(Integer.MAX_VALUE, (long) sampleFactor * Math.max(entries, 1));
    }

    /** The estimated recent access count of {@code key}, 0 to {@link #MAX}. */
    int frequency(long key) {
        long h = Hashing.mix64(key);
        int block = Hashing.reduce((int) h, blocks) << 3;
        int counterHash = (int) (h >>> 32);
        int frequency = MAX;
        for (int i = 0; i < 4; i++) {
            int c = counterHash >>> (i << 3);
            int index = (c >>> 1) & 15;
            int slot = block + (c & 1) + (i << 1);
            frequency = Math.min(frequency, (int) ((table[slot] >>> (index << 2)) & 0xfL));
        }
        return frequency;
    }

    /** Counts one access of {@code key}; ages the sketch every {@code sampleSize} increments. */
    void increment(long key) {
        long h = Hashing.mix64(key);
        int block = Hashing.reduce((int) h, blocks) << 3;
        int counterHash = (int) (h >>> 32);
        boolean added = false;
        for (int i = 0; i < 4; i++) {
            int c = counterHash >>> (i << 3);
            int index = (c >>> 1) & 15;
            int slot = block + (c & 1) + (i << 1);
            long offset = index << 2;
            long mask = 0xfL << offset;
            if ((table[slot] & mask) != mask) {
                table[slot] += 1L << offset;
                added = true;
            }
        }
        if (added && ++additions >= sampleSize) {
            reset();
        }
    }

    /** Halves every counter (TinyLFU's aging); the odd counts lost are taken off the additions. */
    void reset() {
        int odd = 0;
        for (int i = 0; i < table.length; i++) {
            odd += Long.bitCount(table[i] & ONE_MASK);
            table[i] = (table[i] >>> 1) & RESET_MASK;
        }
        additions = (additions - (odd >>> 2)) >>> 1;
        resets++;
    }

    int sampleSize() {
        return sampleSize;
    }

    long resets() {
        return resets;
    }

    long heapBytes() {
        return 8L * table.length + 16;
    }
}
