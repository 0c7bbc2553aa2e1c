package dev.strata.mirror.internal.log.zk;

import java.util.BitSet;

/**
 * The handover to the mirror of regions this node has become responsible for resyncing (a dead
 * node's marks taken over, or its own after it was fenced): from the moment it owns them until
 * the mirror's resync has queued them, and the clears the log ignores until the mirror's tracker
 * holds them as marks. Kept apart from the log's lock so that the status can count them without
 * waiting for a ZooKeeper call. Thread-safe.
 */
final class ResyncWork {
    /** Owned, not yet handed to the mirror. */
    private final BitSet waiting = new BitSet();
    /** Handed to the mirror, not yet in its resync queue. */
    private final BitSet handedOut = new BitSet();
    /** Marks no clear may drop: the tracker does not hold them yet. */
    private final BitSet protect = new BitSet();

    /** Clears of {@code regions} are ignored until {@link #adopted}. */
    synchronized void protect(BitSet regions) {
        protect.or(regions);
    }

    /** This node owns {@code regions} for resync now (protected too). */
    synchronized void add(BitSet regions) {
        protect.or(regions);
        waiting.or(regions);
    }

    synchronized boolean isProtected(int region) {
        return protect.get(region);
    }

    /** The mirror's tracker holds {@code regions} as marks: their clears count again. */
    synchronized void adopted(BitSet regions) {
        protect.andNot(regions);
    }

    /** The regions not handed out yet, now handed out (each region once). */
    synchronized BitSet take() {
        BitSet w = (BitSet) waiting.clone();
        waiting.clear();
        handedOut.or(w);
        return w;
    }

    /** The resync queue holds {@code regions} now. */
    synchronized void queued(BitSet regions) {
        handedOut.andNot(regions);
    }

    /** Regions owned and not yet in the resync queue. */
    synchronized int pending() {
        BitSet all = (BitSet) waiting.clone();
        all.or(handedOut);
        return all.cardinality();
    }
}
