package dev.strata.readcache.policies.internal;

/**
 * A bounded table counting misses of recently missed distinct blocks, for n-hit (OCF's
 * {@code nhit_hash}). It is set-associative: a block hashes to one bucket of {@link #WAYS}
 * entries, and a block not in its bucket takes a free entry or, when the bucket is full, the
 * place of the bucket's oldest entry (a per-bucket round-robin), so the table forgets the least
 * recently first-missed blocks, bucket by bucket. Each entry is one {@code int}: a 25-bit
 * fingerprint of the block over a saturating 7-bit count (two blocks of one bucket sharing a
 * fingerprint share a count — at worst a block is promoted a little early). About 4.1 bytes per
 * entry: the whole read cache must stay within 32 B per cached block (issue 12), and chained
 * entries (fingerprint, count, link, bucket heads: 11 B) left n-hit over it.
 */
final class MissTable {
    static final int WAYS = 8;
    private static final int COUNT_BITS = 7;
    private static final int MAX_COUNT = (1 << COUNT_BITS) - 1;

    private final int[] entries;
    private final byte[] victim;
    private final int buckets;

    MissTable(int capacity) {
        buckets = (int) Math.max(1, ((long) capacity + WAYS - 1) / WAYS);
        entries = new int[buckets * WAYS];
        victim = new byte[buckets];
    }

    /** Counts one miss of {@code key}; returns its misses so far, this one included (≤ 127). */
    int increment(long key) {
        long h = Hashing.mix64(key);
        int base = bucketOf(h) * WAYS;
        int fp = fingerprintOf(h);
        int free = -1;
        for (int i = base; i < base + WAYS; i++) {
            int e = entries[i];
            if (e == 0) {
                free = free < 0 ? i : free;
            } else if (e >>> COUNT_BITS == fp) {
                int c = e & MAX_COUNT;
                if (c < MAX_COUNT) {
                    entries[i] = e + 1;
                    c++;
                }
                return c;
            }
        }
        if (free < 0) {
            int b = base / WAYS;
            free = base + victim[b];
            victim[b] = (byte) ((victim[b] + 1) % WAYS);
        }
        entries[free] = fp << COUNT_BITS | 1;
        return 1;
    }

    /** Forgets {@code key} (it was promoted: its count starts again if it is missed later). */
    void remove(long key) {
        int i = find(key);
        if (i >= 0) {
            entries[i] = 0;
        }
    }

    /** The misses counted for {@code key} (0: not in the table). */
    int count(long key) {
        int i = find(key);
        return i < 0 ? 0 : entries[i] & MAX_COUNT;
    }

    private int find(long key) {
        long h = Hashing.mix64(key);
        int base = bucketOf(h) * WAYS;
        int fp = fingerprintOf(h);
        for (int i = base; i < base + WAYS; i++) {
            int e = entries[i];
            if (e != 0 && e >>> COUNT_BITS == fp) {
                return i;
            }
        }
        return -1;
    }

    /** The bucket from the low 32 bits of the hash, the fingerprint from the top 25. */
    private int bucketOf(long h) {
        return Hashing.reduce((int) h, buckets);
    }

    private static int fingerprintOf(long h) {
        int fp = (int) (h >>> (64 - (32 - COUNT_BITS)));
        return fp == 0 ? 1 : fp; // an entry of 0 is free
    }

    int capacity() {
        return entries.length;
    }

    long heapBytes() {
        return 16L + 4L * entries.length + 16L + victim.length;
    }
}
