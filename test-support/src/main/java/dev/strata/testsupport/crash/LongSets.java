package dev.strata.testsupport.crash;

import java.util.Arrays;
import java.util.StringJoiner;

/** Tiny sets of sector tokens as sorted {@code long[]}s (the sets hold one to a few values). */
final class LongSets {
    static final long[] EMPTY = new long[0];

    private LongSets() {
    }

    static long[] of(long v) {
        return new long[] {v};
    }

    static boolean contains(long[] set, long v) {
        for (long x : set) {
            if (x == v) {
                return true;
            }
        }
        return false;
    }

    static long[] add(long[] set, long v) {
        if (contains(set, v)) {
            return set;
        }
        long[] r = Arrays.copyOf(set, set.length + 1);
        r[set.length] = v;
        Arrays.sort(r);
        return r;
    }

    static long[] union(long[] a, long[] b) {
        long[] r = a;
        for (long v : b) {
            r = add(r, v);
        }
        return r;
    }

    static String describe(long[] set) {
        StringJoiner j = new StringJoiner(", ", "{", "}");
        for (long v : set) {
            j.add(SectorPattern.describe(v));
        }
        return j.toString();
    }
}
