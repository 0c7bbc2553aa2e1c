package dev.strata.mirror.internal.region;

import dev.strata.mirror.internal.log.RegionLog;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.BitSet;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * The dirty-region state of one mirror and the integrated log flush (dm-raid1's region hash with
 * the cluster-raid1 flush): which regions are durably marked in the {@link RegionLog} (the hot
 * set), which marks and clears wait for the next commit, and the writes and flushes in between.
 *
 * <h2>Rules</h2>
 * <ul>
 * <li>A write may go to the legs only when every region it touches is in {@code durable}:
 * {@link #beginWrite} waits for that. A write into a durable region costs no log I/O.</li>
 * <li>A commit is one log round trip carrying <em>every</em> pending mark and pending clear.
 * Writers that need marks group-commit: whoever finds no commit running makes the next one.</li>
 * <li>A region becomes a pending clear only when no write to it is in flight and a flush of the
 * legs that started after its last write completed has succeeded (so the legs agree there even
 * after a power cut), and only while every leg is in sync (a missing leg's regions stay marked).
 * A write into a pending clear cancels it. Clears ride on the next commit with marks, or after
 * {@code clearDelay} a clear-only commit carries them ({@link #clearerRunOnce}).</li>
 * <li>Regions being cleared by a running commit leave {@code durable} when the commit is
 * snapshotted, so a write into one waits for a later commit, which sets the bit again after the
 * clear has reached the log (commits are serialised).</li>
 * <li>In a cluster, a write to a region another node is resyncing (held back, {@link #holdBack})
 * waits before it counts as in flight; {@link #drained} tells the log when this node may say it
 * holds those regions back.</li>
 * </ul>
 *
 * <h2>Locking</h2>
 * One lock guards every field; log I/O runs outside it, by the single thread that holds
 * {@code committing}.
 */
public final class RegionTracker implements RegionLog.RemoteGate {
    private static final long HELD_BACK_NANOS = 120_000_000_000L;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final RegionLog log;
    private final int regions;
    private final int shift;
    private final LongSupplier clock;
    private final int[] inflight;
    private final BitSet durable;
    private BitSet pendingMarks = new BitSet();
    private BitSet pendingClears = new BitSet();
    private BitSet committingMarks = new BitSet();
    private BitSet awaitingFlush = new BitSet();
    private final BitSet held = new BitSet();
    /** Regions other nodes of a cluster are resyncing: writes to them wait (RegionLog.RemoteGate). */
    private BitSet heldBack = new BitSet();
    private boolean heldBackAny;
    private long writesHeldBack;
    /** Regions read from the resync source only (never mutated once published; null: none). */
    private volatile BitSet sourceOnly;
    private boolean committing;
    private boolean clearsAllowed = true;
    private long firstPendingClearNanos;
    private volatile long clearDelayNanos;
    private volatile boolean integrated = true;
    // counters, for status
    private long writes;
    private long writesMarking;
    private long commits;
    private long commitsWithMarks;
    private long commitsClearOnly;
    private long marksCommitted;
    private long clearsCommitted;
    private long flushes;

    /**
     * @param dirty regions the log holds marked at open (they start durable: writes into them are free)
     */
    public RegionTracker(RegionLog log, long regionSize, long regions, BitSet dirty, long clearDelayNanos, LongSupplier clock) {
        this.log = log;
        this.regions = Math.toIntExact(regions);
        this.shift = Long.numberOfTrailingZeros(regionSize);
        this.clock = clock;
        this.inflight = new int[this.regions];
        this.durable = (BitSet) dirty.clone();
        this.clearDelayNanos = clearDelayNanos;
    }

    public int regions() {
        return regions;
    }

    public int regionOf(long offset) {
        return (int) (offset >>> shift);
    }

    /** The last region touched by {@code [offset, offset+length)}, {@code length > 0}. */
    public int lastRegionOf(long offset, long length) {
        return (int) ((offset + length - 1) >>> shift);
    }

    public void clearDelayNanos(long nanos) {
        clearDelayNanos = nanos;
    }

    public long clearDelayNanos() {
        return clearDelayNanos;
    }

    /**
     * The bench switch: {@code false} gives the naive log the seed measured, its mark, flush and
     * clear requests each a round trip of their own: marks committed on their own and followed by
     * a {@link RegionLog#flushRequest}, clears committed at once after every flush of the legs
     * (three round trips per flush interval where the integrated flush needs one).
     */
    public void integrated(boolean on) {
        integrated = on;
    }

    public boolean integrated() {
        return integrated;
    }

    /** Naive mode only: commits the pending clears now, without waiting for {@code clear_delay}. */
    public void commitClearsNow() throws IOException {
        lock.lock();
        try {
            while (committing) {
                awaitChange();
            }
            if (!pendingClears.isEmpty()) {
                commitLocked();
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Counts a write into regions {@code [first, last]} as in flight and returns once every one
     * is durably marked. On an I/O error of the log the write is no longer in flight.
     */
    public void beginWrite(int first, int last) throws IOException {
        lock.lock();
        try {
            writes++;
            boolean counted = false;
            while (true) {
                if (heldBackAny) {
                    awaitNotHeldBack(first, last);
                }
                boolean marking = false;
                for (int r = first; r <= last; r++) {
                    inflight[r]++;
                    pendingClears.clear(r);
                    if (!durable.get(r) && !committingMarks.get(r)) {
                        pendingMarks.set(r);
                    }
                    marking |= !durable.get(r);
                }
                if (!marking) {
                    return; // nothing changed since the held-back check: the lock was held throughout
                }
                if (!counted) {
                    writesMarking++;
                    counted = true;
                }
                try {
                    while (durable.nextClearBit(first) <= last) {
                        if (!committing) {
                            commitLocked();
                        } else {
                            awaitChange();
                        }
                    }
                } catch (IOException | RuntimeException e) {
                    endWriteLocked(first, last);
                    throw e;
                }
                if (!heldBackAny || !heldBackIn(first, last)) {
                    return;
                }
                // another node's resync became known while this write waited for its marks (a commit's
                // check saw it): not in flight, it waits like any other write to those regions
                endWriteLocked(first, last);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Holding the lock: waits until no region of {@code [first, last]} is held back, at most {@code HELD_BACK_NANOS}. */
    private void awaitNotHeldBack(int first, int last) throws IOException {
        if (!heldBackIn(first, last)) {
            return;
        }
        writesHeldBack++;
        long left = HELD_BACK_NANOS;
        while (heldBackAny && heldBackIn(first, last)) {
            if (left <= 0) {
                throw new IOException("mirror: a write to region " + heldBack.nextSetBit(first)
                        + " waited 120 s for another node's resync of it; is that node's resync stuck (mirror:status there)?");
            }
            try {
                left = changed.awaitNanos(left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while waiting for another node's resync");
            }
        }
    }

    private boolean heldBackIn(int first, int last) {
        int n = heldBack.nextSetBit(first);
        return n >= 0 && n <= last;
    }

    /** Writes to {@code regions} wait from now on (another node resyncs them); the regions held back before and not in it are let go. */
    @Override
    public void holdBack(BitSet regions) {
        lock.lock();
        try {
            heldBack = (BitSet) regions.clone();
            heldBackAny = !heldBack.isEmpty();
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Reads of {@code regions} go to the resync source only from now on (cluster regions not in
     * sync). One volatile field, null when empty, so a read takes no lock and allocates nothing.
     */
    @Override
    public void readFromSource(BitSet regions) {
        sourceOnly = regions.isEmpty() ? null : (BitSet) regions.clone();
    }

    /** Whether a read of {@code [first, last]} must go to the resync source only (lock-free: the I/O path). */
    public boolean readsFromSource(int first, int last) {
        BitSet s = sourceOnly;
        if (s == null) {
            return false;
        }
        int n = s.nextSetBit(first);
        return n >= 0 && n <= last;
    }

    /** Whether no write to any of {@code regions} is in flight here (the acknowledgement to a resyncing node waits for that). */
    @Override
    public boolean drained(BitSet regions) {
        lock.lock();
        try {
            for (int r = regions.nextSetBit(0); r >= 0 && r < this.regions; r = regions.nextSetBit(r + 1)) {
                if (inflight[r] > 0) {
                    return false;
                }
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    public long writesHeldBack() {
        lock.lock();
        try {
            return writesHeldBack;
        } finally {
            lock.unlock();
        }
    }

    /** Ends a write begun by {@link #beginWrite} (whether it reached the legs or not). */
    public void endWrite(int first, int last) {
        lock.lock();
        try {
            endWriteLocked(first, last);
        } finally {
            lock.unlock();
        }
    }

    private void endWriteLocked(int first, int last) {
        for (int r = first; r <= last; r++) {
            if (--inflight[r] == 0) {
                awaitingFlush.set(r);
            }
        }
    }

    /**
     * Regions that became this node's marks behind its back (a cluster log took a dead node's
     * marks over): durable from now on, and never cleared before resync copied them, however
     * many of this node's own writes to them complete and are flushed meanwhile. Waits for a
     * running commit, so none carries a clear of them that was taken before.
     */
    public void adopt(BitSet regions) throws IOException {
        lock.lock();
        try {
            while (committing) {
                awaitChange();
            }
            durable.or(regions);
            held.or(regions);
            pendingClears.andNot(regions);
            pendingMarks.andNot(regions);
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Regions waiting for resync: never cleared before {@link #regionSynced}, however many writes to them complete. */
    public void hold(BitSet regions) {
        lock.lock();
        try {
            held.or(regions);
            pendingClears.andNot(regions);
        } finally {
            lock.unlock();
        }
    }

    /** A region copied by resync: like a completed write, it may be cleared after the next flush. */
    public void regionSynced(int r) {
        lock.lock();
        try {
            held.clear(r);
            if (inflight[r] == 0) {
                awaitingFlush.set(r);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Called before the legs are flushed: the regions whose writes that flush makes durable. */
    public BitSet flushStarted() {
        lock.lock();
        try {
            flushes++;
            BitSet s = awaitingFlush;
            awaitingFlush = new BitSet();
            return s;
        } finally {
            lock.unlock();
        }
    }

    /** Called after the legs were flushed successfully with what {@link #flushStarted} returned. */
    public void flushCompleted(BitSet covered) {
        lock.lock();
        try {
            if (!clearsAllowed) {
                // kept for the first flush after every leg is back in sync
                awaitingFlush.or(covered);
                return;
            }
            for (int r = covered.nextSetBit(0); r >= 0; r = covered.nextSetBit(r + 1)) {
                if (inflight[r] == 0 && !awaitingFlush.get(r) && durable.get(r) && !held.get(r)) {
                    if (pendingClears.isEmpty()) {
                        firstPendingClearNanos = clock.getAsLong();
                    }
                    pendingClears.set(r);
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /** While a leg is missing, nothing is cleared: its regions must be resynced when it returns. */
    public void clearsAllowed(boolean allowed) {
        lock.lock();
        try {
            clearsAllowed = allowed;
            if (!allowed) {
                pendingClears.clear();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Makes a clear-only commit if clears have waited {@code clear_delay}. Returns whether it did. */
    public boolean clearerRunOnce() throws IOException {
        lock.lock();
        try {
            if (committing || pendingClears.isEmpty() || clock.getAsLong() - firstPendingClearNanos < clearDelayNanos) {
                return false;
            }
            commitLocked();
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Commits everything pending now (suspend, close). */
    public void commitAll() throws IOException {
        lock.lock();
        try {
            while (committing) {
                awaitChange();
            }
            if (!pendingMarks.isEmpty() || !pendingClears.isEmpty()) {
                commitLocked();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Writes the in-sync mask through the log, serialised with commits. */
    public void writeLegState(int mask) throws IOException {
        lock.lock();
        try {
            while (committing) {
                awaitChange();
            }
            committing = true;
            lock.unlock();
            try {
                log.writeLegState(mask);
            } finally {
                lock.lock();
                committing = false;
                changed.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Holding the lock and not committing: takes everything pending, writes it, publishes it. */
    private void commitLocked() throws IOException {
        BitSet marks = pendingMarks;
        BitSet clears = pendingClears;
        pendingMarks = new BitSet();
        pendingClears = new BitSet();
        if (!integrated && !marks.isEmpty()) {
            pendingClears = clears; // naive: a mark commit carries marks only
            clears = new BitSet();
        }
        durable.andNot(clears);
        committingMarks = marks;
        committing = true;
        boolean ok = false;
        try {
            // the I/O runs without the lock so writers into hot regions never wait for it
            lock.unlock();
            try {
                log.commit(marks, clears);
                if (!integrated && !marks.isEmpty()) {
                    log.flushRequest(); // the naive log: mark, then flush, as requests of their own
                }
                ok = true;
            } finally {
                lock.lock();
            }
        } finally {
            committing = false;
            committingMarks = new BitSet();
            if (ok) {
                durable.or(marks);
                commits++;
                marksCommitted += marks.cardinality();
                clearsCommitted += clears.cardinality();
                if (marks.isEmpty()) {
                    commitsClearOnly++;
                } else {
                    commitsWithMarks++;
                }
            } else {
                // the marks are retried by the next commit; the clears are simply lost (extra resync)
                pendingMarks.or(marks);
            }
            changed.signalAll();
        }
    }

    private void awaitChange() throws InterruptedIOException {
        try {
            changed.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for the mirror's region log");
        }
    }

    // ---- status

    public int dirtyRegions() {
        lock.lock();
        try {
            return durable.cardinality();
        } finally {
            lock.unlock();
        }
    }

    public BitSet durableSnapshot() {
        lock.lock();
        try {
            return (BitSet) durable.clone();
        } finally {
            lock.unlock();
        }
    }

    public int pendingClears() {
        lock.lock();
        try {
            return pendingClears.cardinality();
        } finally {
            lock.unlock();
        }
    }

    public Counters counters() {
        lock.lock();
        try {
            return new Counters(log.roundTrips(), commits, commitsWithMarks, commitsClearOnly, marksCommitted, clearsCommitted,
                    writes, writesMarking, flushes);
        } finally {
            lock.unlock();
        }
    }

    /** The figures of the integrated flush. */
    public record Counters(long roundTrips, long commits, long commitsWithMarks, long commitsClearOnly, long marksCommitted,
            long clearsCommitted, long writes, long writesMarking, long flushes) {
    }
}
