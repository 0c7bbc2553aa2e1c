package dev.strata.cache.writeboost.internal.io;

import dev.strata.cache.writeboost.internal.format.Layout;
import dev.strata.cache.writeboost.internal.format.RecordHeader;
import java.io.IOException;
import java.nio.ByteBuffer;

/** The read-cache injector task: appends staged read misses to the log as CLEAN entries, never waiting for room. */
final class Injector {
    static final int SB = Layout.SEGMENT_BLOCKS;
    static final int BS = Layout.BLOCK;
    private final Parts parts;
    private final LogState log;
    private final Stats stats;

    Injector(Parts parts) {
        this.parts = parts;
        this.log = parts.log;
        this.stats = parts.stats;
    }


    // ------------------------------------------------------------------------------------------
    // read-cache injector

    final ReadCacheInjector.Log cleanAppender = this::appendClean;

    /**
     * Appends a batch of staged read misses to the log as clean entries (see
     * {@link ReadCacheInjector}). Never waits for log space: when the head segment is full and the
     * next one is not free yet, the blocks stay staged for a later try. Returns false when there
     * was nothing to do.
     */
    public boolean injectorRunOnce() throws IOException {
        log.lock.lock();
        try {
            if (log.failure != null || log.closed) {
                log.readCache.clear();
                return false;
            }
            return log.readCache.inject(cleanAppender, 64);
        } finally {
            log.lock.unlock();
        }
    }

    /** One staged block into the open record as a CLEAN entry. Lock held; never waits. */
    ReadCacheInjector.Outcome appendClean(long block, ByteBuffer src, int srcIndex) throws IOException {
        Tunables t = log.tunables();
        // a cached copy is at least as new; a bypass in flight changes the backing device (and
        // relies on no clean copy of its range entering the index meanwhile)
        // writethrough stages the blocks it wrote even with read caching off; passthrough caches nothing
        if ((t.readCacheThreshold() == 0 && !t.writethrough()) || t.writeAround() || t.passthrough() || log.failure != null || block >= log.size / BS
                || log.map.get(block) >= 0 || log.bypassOverlaps(block)) {
            return ReadCacheInjector.Outcome.DROPPED;
        }
        if (!log.hasDataRoom()) {
            if (log.recStart < SB) {
                log.seal();
            }
            if (log.recStart >= SB) {
                if (!parts.head.canAdvanceNow()) {
                    return ReadCacheInjector.Outcome.NO_ROOM;
                }
                parts.head.advance(log.deadline()); // does not wait (checked above)
            }
            if (!log.hasDataRoom()) {
                return ReadCacheInjector.Outcome.NO_ROOM;
            }
        }
        int headBuf = (int) Math.floorMod(log.headSid, (long) log.nb);
        ByteBuffer buf = log.bufs[headBuf];
        parts.flusher.crcs.forget(headBuf * Layout.SEGMENT_BLOCKS + log.recPos);
        buf.put(log.recPos * BS, src, srcIndex, BS);
        int loc = log.phys(log.headSid) * SB + log.recPos;
        RecordHeader.putEntry(buf, log.recStart * BS, log.recEntries, block, Layout.FULL, RecordHeader.ENTRY_CLEAN, 1);
        log.openEntryOfData[log.recData] = log.recEntries;
        log.recEntries++;
        log.recData++;
        log.recPos++;
        log.map.put(block, loc, Layout.FULL, true);
        if (!log.hasDataRoom() && log.recStart < SB) {
            log.seal();
        }
        return ReadCacheInjector.Outcome.INJECTED;
    }

    /** Allocates the staging area (once) when read caching is on. */
    void activateReadCache() {
        if (log.tunables().readCacheThreshold() > 0 || log.tunables().writethrough()) {
            log.lock.lock();
            try {
                log.readCache.activate();
            } finally {
                log.lock.unlock();
            }
        }
    }

    /** Stops the injector and forgets what it had staged (suspend, close). */
    void stopInjector() {
        parts.daemons.injector().stop();
        log.lock.lock();
        try {
            log.readCache.clear();
        } finally {
            log.lock.unlock();
        }
    }
}
