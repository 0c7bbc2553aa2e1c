package dev.strata.cache.writeboost.internal.io;

import dev.strata.cache.writeboost.internal.format.Layout;
import dev.strata.cache.writeboost.internal.format.RecordHeader;
import java.io.IOException;
import java.nio.ByteBuffer;

/** I/O straight to the backing device, coordinated with writeback, and the INVALIDATE entries for the cached copies it makes stale. */
final class Bypass {
    static final int SB = Layout.SEGMENT_BLOCKS;
    static final int BS = Layout.BLOCK;
    private final Parts parts;
    private final LogState log;
    private final Stats stats;

    Bypass(Parts parts) {
        this.parts = parts;
        this.log = parts.log;
        this.stats = parts.stats;
    }


    /** An I/O on the backing device. */
    @FunctionalInterface
    interface BackingOp {
        void run() throws IOException;
    }

    /**
     * Runs {@code op} on backing blocks {@code [from, to)} directly. While it runs, writeback
     * does not touch those blocks; it waits for writeback already writing them. Afterwards, if
     * {@code invalidate}, the cached copies are dropped and the drop is logged (in a record
     * written only after the backing device is flushed).
     */
    void bypass(long from, long to, boolean invalidate, BackingOp op) throws IOException {
        bypass(from, to, invalidate, null, op);
    }

    /**
     * {@link #bypass(long, long, boolean, BackingOp)}, and then (writethrough) stages the blocks
     * written, {@code written} holding them from its position on, as clean copies for the injector.
     * A block is staged only if no other write touched it while this one ran and no other bypass
     * of it is in flight: then the backing device holds exactly this data, which is what a clean
     * copy claims. Later writes void the staged copy as they void staged read misses.
     */
    void bypass(long from, long to, boolean invalidate, ByteBuffer written, BackingOp op) throws IOException {
        long[] range = {from, to};
        long before = 0;
        long deadline = log.deadline();
        // log order: every write acknowledged before this one is durable before it reaches the
        // backing device, and every record sealed after it flushes the backing device first, so
        // that a crash leaves a prefix of the acknowledged writes
        parts.flush.flushLog(deadline);
        while (true) {
            if (invalidate) {
                // a clean copy claims to equal the backing device, and recovery keeps written-back
                // blocks warm: its drop must be durable before the backing device can change
                dropCleanCopies(from, to, deadline);
            }
            log.lock.lock();
            try {
                log.checkFailure();
                log.bypassRanges.add(range);
                // -1: staging was off when this write began, so touches meanwhile went unrecorded
                before = log.readCache.active() ? log.readCache.snapshot() : -1;
                while (log.writebackOverlaps(from, to)) {
                    try {
                        log.await(deadline, "writeback of the blocks being bypassed");
                    } catch (IOException e) {
                        log.bypassRanges.remove(range);
                        log.signal();
                        throw e;
                    }
                }
                // writeback that just finished may have made copies in the range clean: drop
                // those durably too (not while the range is registered: that may wait for log
                // space, and writeback would wait for the range)
                if (!invalidate || log.cleanCopies(from, to).length == 0) {
                    break;
                }
                log.bypassRanges.remove(range);
                log.signal();
            } finally {
                log.lock.unlock();
            }
        }
        boolean ok = false;
        stats.busy.begin();
        try {
            op.run();
            ok = true;
        } finally {
            stats.busy.end();
            log.lock.lock();
            try {
                boolean[] stageable = ok && written != null && before >= 0 ? stageable(from, to, range, before) : null;
                // staged read-cache copies of the range read before this point are stale (even
                // if the op failed: it may have changed part of the range)
                log.readCache.touchRange(from, to);
                if (stageable != null) {
                    stage(from, to, written, stageable);
                }
                // even a failed op may have left data in the backing device's volatile cache, and
                // a read may copy it into the log as a CLEAN entry: flush it before later records
                log.backingFlushPending = true;
                if (ok) {
                    if (invalidate) {
                        // The cached copies (dirty ones included) are stale from now on. Drop them from
                        // the map at once, before waiting for log space for the INVALIDATE entries:
                        // writeback of their segments would otherwise wait for this (registered)
                        // range while this waits for writeback to free log space — a deadlock when
                        // the log is full. Once dropped, writeback skips them (the backing device
                        // already holds newer data), and their segments can be written back and
                        // reclaimed. Until the entries are logged (and so sealed and written before
                        // any later superblock record), updateRecord keeps the segments of the
                        // dropped copies out of the clean (warm) region, so a crash cannot bring a
                        // stale copy back as clean; in the dirty region a replayed copy only undoes
                        // this unacknowledged write. invalidateLogged drops again whatever a
                        // concurrent cached write put into the range meanwhile (it is ordered
                        // before this write) and logs the entries for the whole range.
                        long[] drop = {Long.MAX_VALUE, Long.MIN_VALUE};
                        if (log.dropStale(from, to, drop)) {
                            log.unloggedDrops.add(drop);
                        } else {
                            drop = null;
                        }
                        invalidateLogged(from, to, drop != null, deadline);
                        // on failure (above) it stays: updateRecord forgets it once its segment is reclaimed
                        if (drop != null) {
                            log.unloggedDrops.remove(drop);
                        }
                    }
                    log.bypassCompleted++;
                    stats.bypassed.increment();
                }
            } finally {
                log.bypassRanges.remove(range);
                log.signal();
                log.lock.unlock();
            }
        }
    }

    /** Which blocks of a finished writethrough bypass may be staged (see above). Lock held. */
    private boolean[] stageable(long from, long to, long[] own, long before) {
        boolean[] out = new boolean[(int) (to - from)];
        for (long b = from; b < to; b++) {
            boolean other = false;
            for (long[] r : log.bypassRanges) {
                if (r != own && r[0] <= b && b < r[1]) {
                    other = true;
                    break;
                }
            }
            out[(int) (b - from)] = !other && !log.readCache.stale(b, before);
        }
        return out;
    }

    /** Stages the stageable blocks with a stamp taken after this write's own touch. Lock held. */
    private void stage(long from, long to, ByteBuffer written, boolean[] stageable) {
        long snap = log.readCache.snapshot();
        boolean any = false;
        int base = written.position();
        for (long b = from; b < to; b++) {
            if (stageable[(int) (b - from)]) {
                any |= log.readCache.stage(b, written, base + (int) ((b - from) * BS), snap);
            }
        }
        if (any) {
            log.injectWake.signal();
        }
    }

    /**
     * Drops the clean cached copies of {@code [from, to)}, logs an INVALIDATE entry for each and
     * makes them durable (a flush) before returning: the backing device still equals those copies,
     * so nothing is lost if the drop survives a crash without the write that follows.
     */
    void dropCleanCopies(long from, long to, long deadline) throws IOException {
        boolean logged = false;
        log.lock.lock();
        try {
            log.checkFailure();
            for (long b : log.cleanCopies(from, to)) {
                while (!log.hasEntryRoom()) {
                    parts.head.makeRoom(deadline);
                }
                int loc = log.map.get(b);
                if (loc < 0 || log.isDirty(loc)) {
                    continue;
                }
                log.map.remove(b);
                ByteBuffer buf = log.bufs[(int) Math.floorMod(log.headSid, (long) log.nb)];
                RecordHeader.putEntry(buf, log.recStart * BS, log.recEntries, b, 0, RecordHeader.ENTRY_INVALIDATE, 1);
                log.recEntries++;
                logged = true;
            }
        } finally {
            log.lock.unlock();
        }
        if (logged) {
            parts.flush.flushLog(deadline);
        }
    }

    /**
     * Drops cached copies of {@code [from, to)} and logs INVALIDATE entries for them (for every
     * chunk if {@code always}: copies dropped earlier by dropStale). Lock held.
     */
    void invalidateLogged(long from, long to, boolean always, long deadline) throws IOException {
        for (long c = from; c < to; c += RecordHeader.MAX_INVALIDATE_LENGTH) {
            long e = Math.min(to, c + RecordHeader.MAX_INVALIDATE_LENGTH);
            // room first: making room may wait (releasing the lock), and the entry must follow
            // every data entry of these blocks logged before the drop, and precede every later one
            while (!log.hasEntryRoom()) {
                parts.head.makeRoom(deadline);
            }
            if (log.invalidateInMap(c, e) > 0 || always) {
                ByteBuffer buf = log.bufs[(int) Math.floorMod(log.headSid, (long) log.nb)];
                RecordHeader.putEntry(buf, log.recStart * BS, log.recEntries, c, 0, RecordHeader.ENTRY_INVALIDATE, (int) (e - c));
                log.recEntries++;
                log.recNeedsBackingFlush = true;
            }
        }
    }
}
