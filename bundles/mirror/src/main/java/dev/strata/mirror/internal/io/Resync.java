package dev.strata.mirror.internal.io;

import dev.strata.mirror.internal.log.RegionLog;
import dev.strata.mirror.internal.region.RegionTracker;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.BitSet;

/**
 * Copies regions from an in-sync leg to every other leg that receives writes: after an unclean
 * stop the regions the log holds dirty, after a leg's recovery the regions it may have missed.
 * Each copy holds its region's stripe exclusively ({@link RegionLocks}), so no write to the
 * region is in flight while it is read and none is overwritten by the older copy.
 *
 * <p>In a cluster ({@link #clustered}) the stripes order this node's writes only: the regions are
 * first made known to the other nodes, which hold their writes to them back, and copied only once
 * every one has said so ({@link RegionLog#resyncMayCopy}); copied regions are let go again
 * ({@link RegionLog#resyncProgress}). A write of this node to a region waiting for resync does not
 * copy it first there (that copy would have to wait for the other nodes): it goes to every leg,
 * and the later copy, under the stripe, copies it along; reads go to the source until then.
 */
final class Resync {
    private final Legs legs;
    private final RegionTracker tracker;
    private final RegionLocks locks;
    private final LegFailures failures;
    private final long size;
    private final long regionSize;
    private final BitSet needed = new BitSet();
    /** Regions copied whose copies are not flushed yet (still needed): a writer flushes them instead of copying again. */
    private final BitSet unflushed = new BitSet();
    /** {@code needed} is empty: read without the lock by every request (the common case costs no monitor). */
    private volatile boolean idle = true;
    private long total;
    private long done;
    private long bytes;
    private int cursor;
    /** Regions published to the other nodes at once in a cluster (see {@link #window}). */
    static final int WINDOW = 64;
    /** A cluster log, or null: its nodes hold their writes back before this node copies. */
    private volatile RegionLog cluster;
    /** Cluster: the regions the other nodes hold back now (copied only from these). */
    private BitSet allowed;

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

    /** This mirror is a node of a cluster sharing {@code log}: copies are ordered with the other nodes' writes. */
    void clustered(RegionLog log) {
        cluster = log;
    }

    /** Whether a write to {@code r} copies it first: on a single node, to a region waiting for resync. */
    boolean copiesBeforeWrite(int r) {
        return cluster == null && needs(r);
    }

    /** Whether a write to {@code [first, last]} waits for those regions' resync (single node only, see the class). */
    boolean writeWaits(int first, int last) {
        return cluster == null && anyNeeded(first, last);
    }

    synchronized void add(BitSet regions) {
        // not cleared before they are copied, whatever writes to them complete meanwhile (in a
        // cluster a write does not copy its region first; found by the zookeeper log's crash model)
        tracker.hold(regions);
        BitSet fresh = (BitSet) regions.clone();
        fresh.andNot(needed);
        total += fresh.cardinality();
        needed.or(regions);
        unflushed.andNot(regions); // needed again (e.g. for a leg that joined since): copied again
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

    /** The next region waiting for resync that is not in {@code skip} (copied in this batch already), or -1. */
    private synchronized int nextNeeded(BitSet skip) {
        int r = nextNotIn(cursor, skip);
        if (r < 0) {
            r = nextNotIn(0, skip);
        }
        cursor = r < 0 ? 0 : r + 1;
        return r;
    }

    private int nextNotIn(int from, BitSet skip) {
        int r = needed.nextSetBit(from);
        while (r >= 0 && (skip.get(r) || (allowed != null && !allowed.get(r)))) {
            r = needed.nextSetBit(r + 1);
        }
        return r;
    }

    /**
     * Copies up to {@code max} regions; returns how many it copied. The copies are flushed on the
     * legs they went to before any of them counts as done (see {@link #syncRegion}).
     */
    int runOnce(int max) throws IOException {
        RegionLog c = cluster;
        if (c != null) {
            BitSet wanted = window();
            if (wanted.isEmpty()) {
                return 0;
            }
            if (!c.resyncMayCopy(wanted)) {
                return 0; // not every other node holds its writes back yet: the next round
            }
            synchronized (this) {
                allowed = wanted;
            }
        }
        int n = copyBatch(max);
        if (c != null && n > 0) {
            BitSet left;
            synchronized (this) {
                left = (BitSet) needed.clone();
            }
            c.resyncProgress(left);
        }
        return n;
    }

    /**
     * Cluster: the regions to publish and copy next — what is left of the current window, else
     * the next {@link #WINDOW} regions waiting from the cursor on. A window, not every region
     * waiting: the other nodes' writes wait only for the regions being copied now (as dm-raid1
     * delays writes only to the region it recovers), not for the whole resync.
     */
    private synchronized BitSet window() {
        BitSet w = new BitSet();
        if (allowed != null) {
            w.or(allowed);
            w.and(needed);
            if (!w.isEmpty()) {
                return w;
            }
        }
        int n = 0;
        for (int r = needed.nextSetBit(cursor); r >= 0 && n < WINDOW; r = needed.nextSetBit(r + 1), n++) {
            w.set(r);
        }
        for (int r = needed.nextSetBit(0); r >= 0 && r < cursor && n < WINDOW; r = needed.nextSetBit(r + 1), n++) {
            w.set(r);
        }
        return w;
    }

    private int copyBatch(int max) throws IOException {
        BitSet copied = new BitSet();
        int targets = 0;
        int n = 0;
        while (n < max) {
            int r = nextNeeded(copied);
            if (r < 0) {
                break;
            }
            targets |= copy(r, copied);
            n++;
        }
        if (!copied.isEmpty()) {
            flushTargets(targets);
            finish(copied);
        }
        return n;
    }

    /**
     * Copies region {@code r} if it still needs it, durably. A copy counts as done only once the
     * legs it went to have flushed it: until then a leg's volatile cache could lose it, and if the
     * source failed meanwhile (it may be taken out once nothing waits for resync) the stale leg
     * would be the only one left in sync — found by the zookeeper log's crash model, where the
     * leg state survives the legs' power cut.
     */
    void syncRegion(int r) throws IOException {
        BitSet copied = new BitSet();
        int targets = copy(r, copied);
        if (!copied.isEmpty()) {
            flushTargets(targets);
            finish(copied);
        }
    }

    /** Copies {@code r} (if still needed) to every writable leg but the source; returns the legs written. */
    private int copy(int r, BitSet copied) throws IOException {
        locks.lockExclusive(r);
        try {
            if (!needs(r)) {
                return 0;
            }
            synchronized (this) {
                if (unflushed.get(r)) {
                    copied.set(r); // copied by a batch whose flush has not run yet: flushing is enough
                    return legs.writableMask() & ~(1 << Math.max(0, legs.first()));
                }
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
                return 0;
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
                bytes += length;
                unflushed.set(r);
            }
            copied.set(r);
            return targets;
        } finally {
            locks.unlockExclusive(r);
        }
    }

    private void flushTargets(int targets) throws IOException {
        int writable = legs.writableMask();
        for (int leg = 0; leg < legs.count(); leg++) {
            if ((targets & writable & (1 << leg)) != 0) {
                try {
                    legs.device(leg).flush();
                } catch (IOException e) {
                    failures.legFailed(leg, e);
                }
            }
        }
    }

    /** The copies of {@code copied} are durable: the regions no longer wait for resync. */
    private void finish(BitSet copied) {
        for (int r = copied.nextSetBit(0); r >= 0; r = copied.nextSetBit(r + 1)) {
            synchronized (this) {
                boolean was = needed.get(r);
                needed.clear(r);
                unflushed.clear(r);
                idle = needed.isEmpty();
                if (was) {
                    done++;
                    tracker.regionSynced(r); // under the monitor: an add of r again cannot slip in between
                }
            }
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
