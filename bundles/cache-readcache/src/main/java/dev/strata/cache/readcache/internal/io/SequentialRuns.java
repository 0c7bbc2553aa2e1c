package dev.strata.cache.readcache.internal.io;

/**
 * Sequential run detection over a few stream slots (8 interleaved streams): a request that starts
 * where a slot's last request ended extends that run; any other request starts a new run in the
 * next slot. Deliberately unsynchronised (it is on every request's path): a race only
 * mis-detects a run, which changes where a write goes or whether a read is cached, never what is
 * read back.
 */
final class SequentialRuns {
    private final long[] ends = new long[8];
    private final long[] lengths = new long[8];
    private int next;

    /** Adds a request of {@code len} bytes at {@code offset}; returns the length of its run in bytes. */
    long extend(long offset, int len) {
        long[] e = ends;
        long[] l = lengths;
        for (int i = 0; i < e.length; i++) {
            if (e[i] == offset && l[i] > 0) {
                long run = l[i] + len;
                l[i] = run;
                e[i] = offset + len;
                return run;
            }
        }
        int i = (next + 1) & (e.length - 1);
        next = i;
        e[i] = offset + len;
        l[i] = len;
        return len;
    }
}
