package dev.strata.cache.support.guard;

/**
 * Staleness guard for data copied outside the owner's lock (a read miss staged for the read
 * cache, a block promoted from the origin): was the block changed after the copy's source was
 * read?
 *
 * <p>Every change <em>touches</em> the block at the moment it takes effect (under the owner's
 * lock): {@code touched[hash(block)]} gets a new value of a monotonic sequence. A reader takes a
 * {@link #snapshot()} under the lock before it reads the source; later, under the lock, the copy
 * is {@link #stale} if any touch of its hash slot is newer than the snapshot. A touch before the
 * snapshot was seen by the reader (it found the block changed, or read the source after the
 * change); a touch after it voids the copy. Hash collisions only void more than needed. A range
 * too large to stamp block by block bumps one global stamp, which voids every copy taken before.
 *
 * <p>Not thread-safe: every method is called with the owner's lock held.
 */
public final class TouchStamps {
    private final int bits;
    private final long[] touched;
    private final int rangeMax;
    private long touchedAll;
    private long seq;

    /** @param bits log2 of the number of hash slots (a range of more than 2^bits blocks touches all) */
    public TouchStamps(int bits) {
        if (bits < 1 || bits > 24) {
            throw new IllegalArgumentException("bits " + bits + " out of 1..24");
        }
        this.bits = bits;
        this.touched = new long[1 << bits];
        this.rangeMax = 1 << bits;
    }

    private int slot(long block) {
        return (int) ((block * 0x9E3779B97F4A7C15L) >>> (64 - bits));
    }

    /** The stamp a reader keeps from before it reads the source. */
    public long snapshot() {
        return seq;
    }

    /** {@code block} changes now. */
    public void touch(long block) {
        touched[slot(block)] = ++seq;
    }

    /** Blocks {@code [from, to)} change now. */
    public void touchRange(long from, long to) {
        if (from >= to) {
            return;
        }
        long s = ++seq;
        if (to - from > rangeMax) {
            touchedAll = s;
            return;
        }
        for (long b = from; b < to; b++) {
            touched[slot(b)] = s;
        }
    }

    /** Whether {@code block} may have changed since {@code snap}. */
    public boolean stale(long block, long snap) {
        return touchedAll > snap || touched[slot(block)] > snap;
    }

    /** Heap bytes of the stamps. */
    public long heapBytes() {
        return 8L * touched.length;
    }
}
