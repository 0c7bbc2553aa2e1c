package dev.strata.readcache.policies.internal;

/**
 * A bounded table counting misses of the most recently missed distinct blocks, for n-hit (OCF's
 * {@code nhit_hash}): a ring of {@code capacity} entries where a block not in the table takes
 * the oldest entry's place. Entries hold a 32-bit fingerprint of the block (two blocks sharing
 * one share a count — at worst a block is promoted a little early), a saturating 8-bit count and
 * a chain link; buckets are heads of chains. About 9 + 4 × buckets/capacity bytes per entry.
 */
final class MissTable {
    private static final int NONE = -1;

    private final int[] fingerprint;
    private final byte[] count;
    private final int[] chain;
    private final int[] bucket;
    private final int bucketShift;
    private int clock;

    MissTable(int capacity) {
        fingerprint = new int[capacity];
        count = new byte[capacity];
        chain = new int[capacity];
        int buckets = Integer.highestOneBit(Math.max(1, capacity / 2));
        bucket = new int[buckets];
        bucketShift = 32 - Integer.numberOfTrailingZeros(buckets);
        java.util.Arrays.fill(bucket, NONE);
        java.util.Arrays.fill(chain, NONE);
    }

    /** Counts one miss of {@code key}; returns its misses so far, this one included (≤ 127). */
    int increment(long key) {
        long h = Hashing.mix64(key);
        int fp = fingerprintOf(h);
        int b = bucketOf(fp);
        for (int e = bucket[b]; e != NONE; e = chain[e]) {
            if (fingerprint[e] == fp) {
                if (count[e] < Byte.MAX_VALUE) {
                    count[e]++;
                }
                return count[e];
            }
        }
        int e = clock;
        clock = clock + 1 == fingerprint.length ? 0 : clock + 1;
        if (fingerprint[e] != 0) {
            unchain(e);
        }
        fingerprint[e] = fp;
        count[e] = 1;
        chain[e] = bucket[b];
        bucket[b] = e;
        return 1;
    }

    /** Forgets {@code key} (it was promoted: its count starts again if it is missed later). */
    void remove(long key) {
        long h = Hashing.mix64(key);
        int fp = fingerprintOf(h);
        int b = bucketOf(fp);
        for (int e = bucket[b]; e != NONE; e = chain[e]) {
            if (fingerprint[e] == fp) {
                unchain(e);
                fingerprint[e] = 0;
                count[e] = 0;
                return;
            }
        }
    }

    /** The misses counted for {@code key} (0: not in the table). */
    int count(long key) {
        long h = Hashing.mix64(key);
        int fp = fingerprintOf(h);
        for (int e = bucket[bucketOf(fp)]; e != NONE; e = chain[e]) {
            if (fingerprint[e] == fp) {
                return count[e];
            }
        }
        return 0;
    }

    private void unchain(int e) {
        int b = bucketOf(fingerprint[e]);
        if (bucket[b] == e) {
            bucket[b] = chain[e];
        } else {
            int p = bucket[b];
            while (chain[p] != e) {
                p = chain[p];
            }
            chain[p] = chain[e];
        }
        chain[e] = NONE;
    }

    /**
     * The bucket of a fingerprint: its top bits, so that an entry's bucket is known from the entry
     * alone (the ring replaces entries without knowing their key).
     */
    private int bucketOf(int fp) {
        return bucketShift == 32 ? 0 : fp >>> bucketShift;
    }

    private static int fingerprintOf(long h) {
        int fp = (int) (h >>> 32);
        return fp == 0 ? 1 : fp; // 0 marks an empty entry
    }

    int capacity() {
        return fingerprint.length;
    }

    long heapBytes() {
        return 4L * fingerprint.length + count.length + 4L * chain.length + 4L * bucket.length + 4 * 16;
    }
}
