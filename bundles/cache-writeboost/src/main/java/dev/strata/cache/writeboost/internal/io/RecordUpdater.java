package dev.strata.cache.writeboost.internal.io;

import dev.strata.api.DeviceIOException;
import dev.strata.api.DeviceTimeoutException;
import dev.strata.cache.writeboost.internal.format.Layout;
import dev.strata.cache.writeboost.internal.format.SuperblockRecord;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/** The record updater task and the superblock record update it shares with the log head (which needs a slot reclaimed). */
final class RecordUpdater {
    static final int SB = Layout.SEGMENT_BLOCKS;
    static final int BS = Layout.BLOCK;
    private final Parts parts;
    private final LogState log;
    private final Stats stats;

    RecordUpdater(Parts parts) {
        this.parts = parts;
        this.log = parts.log;
        this.stats = parts.stats;
        this.lastRecordUpdateNanos = log.clock.nanoTime();
    }

    final ReentrantLock recordLock = new ReentrantLock();
    long lastRecordUpdateNanos;
    /**
     * How long the log must stay quiet (no cache flush) after a flush before the record updater
     * writes the durable mark; short enough that a crash soon after a workload's final flush finds
     * it, long enough that a workload flushing continuously never pays for it.
     */
    static final long DURABLE_MARK_QUIET_NANOS = TimeUnit.SECONDS.toNanos(1);

    // ------------------------------------------------------------------------------------------
    // superblock record

    /** Writes the superblock record when it is due or a writer needs a segment reclaimed. */
    public boolean recordUpdaterRunOnce() throws IOException {
        Tunables t = log.tunables();
        long needed;
        boolean due;
        log.lock.lock();
        try {
            if (log.failure != null || log.closed) {
                return false;
            }
            needed = log.recordWanted > log.reclaimSid ? log.recordWanted : Long.MIN_VALUE;
            long now = log.clock.nanoTime();
            due = t.updateRecordInterval() > 0 && log.lwb > log.recordedLwb
                    && now - lastRecordUpdateNanos >= TimeUnit.SECONDS.toNanos(t.updateRecordInterval());
            // the durable mark: once the log has gone quiet after a flush, record how far it is
            // durable. Otherwise the last records flushed are referred to by no later header, and
            // recovery after a crash must read their data to check it (the whole log after a fill
            // ended by one flush); with the mark it reads headers only
            due |= log.recEntries == 0 && log.lastSealedId == log.lastWrittenId && log.lastWrittenId > log.recordedDurable
                    && log.lastFlushedId.get() >= log.lastWrittenId && now - log.lastCacheFlushNanos >= DURABLE_MARK_QUIET_NANOS;
        } finally {
            log.lock.unlock();
        }
        if (!due && needed == Long.MIN_VALUE) {
            return false;
        }
        return updateRecord(needed);
    }

    /**
     * Writes a new superblock record: the current written-back segment, and a reclaimed segment
     * at least {@code requiredReclaim} (as far as written back), keeping the rest warm. The data
     * of written-back segments is flushed first; the record itself is flushed before anything
     * relies on it. Returns whether a record was written.
     */
    public boolean updateRecord(long requiredReclaim) throws IOException {
        try {
            if (!recordLock.tryLock(log.tunables().ioTimeoutMillis(), TimeUnit.MILLISECONDS)) {
                throw new DeviceTimeoutException(log.name, -1, "timed out waiting for a superblock record update");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DeviceIOException(log.name, -1, "interrupted");
        }
        try {
            // every record sealed so far (INVALIDATE entries of blocks in written-back segments
            // among them) is written before the record that keeps those segments warm
            long deadline = log.deadline();
            // segments holding copies dropped by a bypass whose INVALIDATE is not logged yet (or
            // was logged after the seal below) must not become clean in this record
            long unlogged;
            log.lock.lock();
            try {
                unlogged = log.oldestUnloggedDrop();
                log.seal();
                long sealed = log.lastSealedId;
                log.waitForWritten(sealed, deadline, "the log to be written before a superblock record");
            } finally {
                log.lock.unlock();
            }
            SuperblockRecord r;
            long newLwb;
            long newReclaim;
            long rid;
            int rcrc;
            long anchorId;
            int anchorCrc;
            log.lock.lock();
            try {
                newLwb = log.lwb;
                long ahead = log.headSid + log.nb + 2L - log.nSeg;
                newReclaim = Math.max(log.reclaimSid, Math.min(log.lwb, Math.max(requiredReclaim, ahead)));
                unlogged = Math.min(unlogged, log.oldestUnloggedDrop());
                if (unlogged != Long.MAX_VALUE) {
                    newLwb = Math.min(newLwb, Math.max(newReclaim, unlogged - 1));
                }
                if (newLwb == log.recordedLwb && newReclaim == log.reclaimSid && log.lastWrittenId <= log.recordedDurable) {
                    return false;
                }
                rid = log.reclaimAnchorId;
                rcrc = log.reclaimAnchorCrc;
                if (newReclaim != log.reclaimSid) {
                    rid = log.segLastId[log.phys(newReclaim)];
                    rcrc = log.segLastCrc[log.phys(newReclaim)];
                }
                anchorId = log.lwbAnchorId;
                anchorCrc = log.lwbAnchorCrc;
                if (newLwb != log.lwb) {
                    // capped: anchor at the capped segment (complete, and not reused unless reclaimed)
                    anchorId = newLwb == newReclaim ? rid : log.segLastId[log.phys(newLwb)];
                    anchorCrc = newLwb == newReclaim ? rcrc : log.segLastCrc[log.phys(newLwb)];
                }
            } finally {
                log.lock.unlock();
            }
            parts.flush.flushCacheDevice();
            r = new SuperblockRecord(log.recordSeq + 1, newLwb, anchorId, anchorCrc, newReclaim, rid, rcrc, log.uuidHash,
                    log.lastFlushedId.get(), log.session);
            try {
                log.cache.write(r.slotOffset(), r.encode(), 0);
            } catch (IOException e) {
                log.fail(e);
                throw e;
            }
            parts.flush.flushCacheDevice();
            log.lock.lock();
            try {
                log.recordSeq = r.sequence();
                log.recordedDurable = r.durableId();
                log.recordedLwb = r.writtenBackSegment();
                log.reclaimSid = r.reclaimedSegment();
                log.reclaimAnchorId = r.reclaimedLastRecordId();
                log.reclaimAnchorCrc = r.reclaimedLastCrc();
                // a drop whose segment is reclaimed can no longer come back (left by a failed bypass)
                log.unloggedDrops.removeIf(d -> d[1] <= log.reclaimSid);
                lastRecordUpdateNanos = log.clock.nanoTime();
                log.signal();
            } finally {
                log.lock.unlock();
            }
            stats.recordUpdates.increment();
            return true;
        } finally {
            recordLock.unlock();
        }
    }
}
