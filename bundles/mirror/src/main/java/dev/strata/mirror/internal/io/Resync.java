package dev.strata.mirror.internal.io;

import dev.strata.mirror.internal.region.RegionTracker;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.BitSet;

/**
 * Copies regions from an in-sync leg to every other leg that receives writes: after an unclean
 * stop the regions the log holds dirty, after a leg's recovery the regions it may have missed.
 * Each copy holds its region's stripe exclusively ({@link RegionLocks}), so no write to the
 * region is in flight while it is read and none is overwritten by the older copy.
 */
final class Resync {
    private final Legs legs;
    private final RegionTracker tracker;
    private final RegionLocks locks;
    private final LegFailures failures;
    private final long size;
    private final long regionSize;
    private final BitSet needed = new BitSet();
    /** {@code needed} is empty: read without the lock by every request (the common case costs no monitor). */
    private volatile boolean idle = true;
    private long total;
    private long done;
    private long bytes;
    private int cursor;

    /** How a failing leg is taken out (the mirror's own handling). */
    interface LegFailures {
        void legFailed(int leg, IOException cause) throws IOException;
    }

    Resync(Legs legs, RegionTracker tracker, RegionLocks locks, LegFailures failures, long size, long regionSize) {
        this.legs = legs;
        this.tracker = tracker;
        this.locks = locks;
        this.failures = failures;
        this.size = size;
        this.regionSize = regionSize;
    }

    synchronized void add(BitSet regions) {
        BitSet fresh = (BitSet) regions.clone();
        fresh.andNot(needed);
        total += fresh.cardinality();
        needed.or(regions);
        idle = needed.isEmpty();
        cursor = 0;
    }

    boolean needs(int r) {
        if (idle) {
            return false;
        }
        synchronized (this) {
            return needed.get(r);
        }
    }

    boolean anyNeeded(int first, int last) {
        if (idle) {
            return false;
        }
        synchronized (this) {
            int n = needed.nextSetBit(first);
            return n >= 0 && n <= last;
        }
    }

    synchronized int pending() {
        return needed.cardinality();
    }

    synchronized long total() {
        return total;
    }

    synchronized long done() {
        return done;
    }

    synchronized long bytes() {
        return bytes;
    }

    private synchronized int nextNeeded() {
        int r = needed.nextSetBit(cursor);
        if (r < 0) {
            r = needed.nextSetBit(0);
        }
        cursor = r < 0 ? 0 : r + 1;
        return r;
    }

    /** Copies up to {@code max} regions; returns how many it copied. */
    int runOnce(int max) throws IOException {
        int n = 0;
        while (n < max) {
            int r = nextNeeded();
            if (r < 0) {
                break;
            }
            syncRegion(r);
            n++;
        }
        return n;
    }

    /** Copies region {@code r} if it still needs it. */
    void syncRegion(int r) throws IOException {
        locks.lockExclusive(r);
        try {
            if (!needs(r)) {
                return;
            }
            long offset = r * regionSize;
            int length = (int) Math.min(regionSize, size - offset);
            if (Integer.bitCount(legs.writableMask()) < 2) {
                // one leg takes writes: nothing to copy to; the region stays marked for the missing legs
                synchronized (this) {
                    needed.clear(r);
                    idle = needed.isEmpty();
                    done++;
                }
                return;
            }
            ByteBuffer data = ByteBuffer.allocate(length);
            int source = readFromSource(offset, data);
            int targets = legs.writableMask() & ~(1 << source);
            for (int leg = 0; leg < legs.count(); leg++) {
                if ((targets & (1 << leg)) != 0) {
                    try {
                        legs.device(leg).write(offset, data.duplicate().clear(), 0);
                    } catch (IOException e) {
                        failures.legFailed(leg, e);
                    }
                }
            }
            synchronized (this) {
                needed.clear(r);
                idle = needed.isEmpty();
                done++;
                bytes += length;
            }
            tracker.regionSynced(r);
        } finally {
            locks.unlockExclusive(r);
        }
    }

    private int readFromSource(long offset, ByteBuffer data) throws IOException {
        while (true) {
            int source = legs.first();
            if (source < 0) {
                throw new IOException("mirror: no leg is in sync to resync from");
            }
            try {
                legs.device(source).read(offset, data.clear());
                return source;
            } catch (IOException e) {
                failures.legFailed(source, e);
                if (legs.first() == source) {
                    throw e; // the last in-sync leg stays in: the resync waits for it
                }
            }
        }
    }
}
