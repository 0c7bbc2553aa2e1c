package dev.strata.readcache.policies.internal;

/** Hashing of block numbers for the sketch and the miss table. */
final class Hashing {
    private Hashing() {
    }

    /**
     * Stafford's variant 13 of the MurmurHash3 finaliser (as in SplitMix64): block numbers are
     * dense and sequential, so every bit of the key must reach every bit of the hash.
     */
    static long mix64(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** Maps a 32-bit hash uniformly onto {@code [0, n)} without division (Lemire's reduction). */
    static int reduce(int hash, int n) {
        return (int) (((hash & 0xffffffffL) * n) >>> 32);
    }
}
