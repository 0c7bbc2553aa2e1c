package dev.strata.mirror.internal.io;

import dev.strata.api.InvalidArgumentException;
import dev.strata.mirror.internal.log.RegionLog;
import dev.strata.mirror.internal.log.RegionLog.LegShare;
import dev.strata.mirror.internal.region.RegionTracker;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A cluster mirror's side of the leg state its nodes share ({@link RegionLog#sharedLegs}): a leg
 * another node took out is taken out here too (no reads, no writes); a leg being recovered
 * receives this node's writes and a copy of every region this node has marked (nothing is
 * cleared while a leg is out, so those are all the regions this node wrote while it was out);
 * once copied and flushed, the log is told, and when every node has, the leg is in sync again for
 * all. This node never puts a leg back in sync on its own: another node's writes may be missing
 * on it.
 */
final class ClusterLegs {
    private final String name;
    private final Legs legs;
    private final Resync resync;
    private final RegionTracker tracker;
    private final RegionLog log;
    private final FlushAll flusher;
    /** The shared epoch in which each leg last failed here: it sits that recovery out (no lock: set under the legs' monitor). */
    private final AtomicLongArray failedIn;

    /** Flushes every writable leg (the mirror's own flush): the copies are durable before they are reported. */
    interface FlushAll {
        void flush() throws IOException;
    }

    ClusterLegs(String name, Legs legs, Resync resync, RegionTracker tracker, RegionLog log, FlushAll flusher) {
        this.name = name;
        this.legs = legs;
        this.resync = resync;
        this.tracker = tracker;
        this.log = log;
        this.flusher = flusher;
        this.failedIn = new AtomicLongArray(legs.count());
        for (int i = 0; i < legs.count(); i++) {
            failedIn.set(i, -1);
        }
    }

    /** The mirror took {@code leg} out here (a failure it saw); called under the legs' monitor. */
    void failedHere(int leg) {
        LegShare s = log.sharedLegs();
        failedIn.set(leg, s == null ? -1 : s.epoch());
    }

    /** {@code recover LEG} on this node: a recovery for every node. */
    synchronized void recover(int leg) throws IOException {
        if (legs.state(leg) != Legs.State.OUT_OF_SYNC) {
            throw new InvalidArgumentException("mirror " + name + ": leg '" + legs.name(leg) + "' is "
                    + MirrorStatus.label(legs.state(leg)) + "; only an out-of-sync leg can be recovered");
        }
        log.startRecovery(leg);
        runOnce();
    }

    /**
     * Applies the shared state; returns whether this node's leg states changed or it reported
     * copies. A leg out here is out for all (written again if the shared state still has it in);
     * one that failed here during a recovery sits that recovery out (a new one takes it back).
     */
    synchronized boolean runOnce() throws IOException {
        LegShare s = log.sharedLegs();
        if (s == null) {
            return false;
        }
        boolean changed = false;
        boolean copy = false;
        boolean pushOut = false;
        synchronized (legs) {
            for (int i = 0; i < legs.count(); i++) {
                int bit = 1 << i;
                boolean in = (s.inSync() & bit) != 0;
                boolean recovering = (s.recovering() & bit) != 0;
                Legs.State st = legs.state(i);
                if (st == Legs.State.OUT_OF_SYNC && ((in && !recovering) || (recovering && failedIn.get(i) == s.epoch()))) {
                    // out here, in (or being recovered) for the others: they would read it where this
                    // node does not write; written again, which also calls a recovery it failed in off
                    pushOut = true;
                } else if (!in && !recovering && st != Legs.State.OUT_OF_SYNC) {
                    if (st == Legs.State.IN_SYNC && (Integer.bitCount(legs.inSyncMask()) == 1
                            || (i == legs.first() && resync.pending() > 0))) {
                        continue; // as for a failure seen here: the last in-sync leg and a busy resync source stay
                    }
                    legs.state(i, Legs.State.OUT_OF_SYNC); // another node took it out
                    changed = true;
                } else if (recovering && st == Legs.State.OUT_OF_SYNC && failedIn.get(i) != s.epoch()) {
                    legs.state(i, Legs.State.RECOVERING); // it receives writes from now on
                    copy = true;
                    changed = true;
                } else if (in && !recovering && st == Legs.State.RECOVERING && resync.pending() == 0) {
                    // every live node had copied its marks when the leg was put back; this node too
                    // (it said so, or, having missed the recovery, e.g. away without a session, has
                    // just copied its own)
                    legs.state(i, Legs.State.IN_SYNC);
                    changed = true;
                }
            }
        }
        if (pushOut) {
            tracker.writeLegState(legs.writableMask());
        }
        if (!legs.allInSync()) {
            tracker.clearsAllowed(false);
        }
        if (copy) {
            resync.add(tracker.durableSnapshot()); // every region this node may have written without the leg
        }
        boolean reported = false;
        if (s.recovering() != 0 && log.recoveryCopiedEpoch() < s.epoch() && resync.pending() == 0 && copiedHere(s)) {
            flusher.flush(); // the copies and this node's writes durable on the leg before saying so
            log.recoveryCopied(s.epoch());
            reported = true;
        }
        if (changed && legs.allInSync()) {
            tracker.clearsAllowed(true);
            flusher.flush(); // regions held back while a leg was out become clears
        }
        return changed || reported;
    }

    /** Every leg recovering in {@code s} receives this node's writes (it is not out here). */
    private boolean copiedHere(LegShare s) {
        for (int i = 0; i < legs.count(); i++) {
            if ((s.recovering() & (1 << i)) != 0 && legs.state(i) == Legs.State.OUT_OF_SYNC) {
                return false;
            }
        }
        return true;
    }
}
