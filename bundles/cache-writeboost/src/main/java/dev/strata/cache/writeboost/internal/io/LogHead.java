package dev.strata.cache.writeboost.internal.io;

import dev.strata.cache.writeboost.internal.format.Layout;
import dev.strata.cache.writeboost.internal.format.RecordHeader;
import java.io.IOException;

/** The log head: makes room in the open record, moves the head to the next segment (waiting for a buffer or for writeback to free a slot). */
final class LogHead {
    static final int SB = Layout.SEGMENT_BLOCKS;
    static final int BS = Layout.BLOCK;
    private final Parts parts;
    private final LogState log;
    private final Stats stats;

    LogHead(Parts parts) {
        this.parts = parts;
        this.log = parts.log;
        this.stats = parts.stats;
    }


    /** Seals a full open record or moves to the next segment. Lock held; may wait. */
    void makeRoom(long deadline) throws IOException {
        if (log.recStart < SB && (log.recPos >= SB || log.recData >= Layout.MAX_DATA || log.recEntries >= RecordHeader.MAX_ENTRIES)) {
            log.seal();
        }
        if (log.recStart >= SB) {
            advance(deadline);
        }
    }

    /** Moves the head to the next segment, reclaiming its slot. Lock held; may wait. */
    void advance(long deadline) throws IOException {
        log.pushMarker();
        long next = log.headSid + 1;
        boolean waitingForReclaim = false;
        try {
            while (true) {
                log.checkFailure();
                boolean bufferFree = log.completedSid >= next - log.nb;
                long needReclaim = next - log.nSeg;
                if (bufferFree && needReclaim <= log.reclaimSid) {
                    break;
                }
                if (needReclaim > log.reclaimSid && needReclaim <= log.lwb) {
                    // written back, but no durable record says so yet: write one ourselves
                    log.recordWanted = Math.max(log.recordWanted, needReclaim);
                    log.lock.unlock();
                    try {
                        parts.record.updateRecord(needReclaim);
                    } finally {
                        log.lock.lock();
                    }
                    continue;
                }
                if (needReclaim > log.lwb) {
                    // the log is full: writeback becomes urgent whatever writeback_threshold says.
                    // Waiting only for a log buffer is the cache device's pace and must not count
                    // (signalled once, when this writer starts waiting: a signal at every wake-up
                    // made waiting writers wake each other, and every daemon, in a busy loop)
                    if (!waitingForReclaim) {
                        waitingForReclaim = true;
                        log.reclaimWaiters++;
                        log.signal();
                    }
                } else if (waitingForReclaim) {
                    waitingForReclaim = false;
                    log.reclaimWaiters--;
                }
                log.await(deadline, needReclaim > log.lwb ? "writeback to free log space" : "a free log buffer");
            }
        } finally {
            if (waitingForReclaim) {
                log.reclaimWaiters--;
            }
        }
        if (log.headSid != next - 1) {
            return; // someone else advanced while we waited
        }
        int p = log.phys(next);
        log.segGen[p]++;
        for (int b = 0; b < SB; b++) {
            log.map.removeLocation(p * SB + b);
        }
        log.segSid[p] = next;
        log.segLastId[p] = 0;
        log.segLastCrc[p] = 0;
        log.headSid = next;
        log.startRecordAt(0);
    }

    /**
     * Whether the head can move to the next segment without waiting (a free buffer, a reclaimed
     * slot). If the slot is written back but not yet recorded as reclaimed, asks the record
     * updater for a record. Lock held.
     */
    boolean canAdvanceNow() {
        log.pushMarker();
        long next = log.headSid + 1;
        long needReclaim = next - log.nSeg;
        if (log.completedSid < next - log.nb) {
            return false;
        }
        if (needReclaim <= log.reclaimSid) {
            return true;
        }
        if (needReclaim <= log.lwb && log.recordWanted < needReclaim) {
            log.recordWanted = needReclaim;
            log.signal();
        }
        return false;
    }
}
