package dev.strata.cache.writeboost.internal.io;

import dev.strata.cache.support.commit.GroupCommit;
import dev.strata.cache.writeboost.internal.format.Layout;
import java.io.IOException;

/** FLUSH/FUA: seal the open record, wait until it is written, and make it durable with a group commit (concurrent flushes share one device flush). */
final class LogFlush {
    static final int SB = Layout.SEGMENT_BLOCKS;
    static final int BS = Layout.BLOCK;
    private final Parts parts;
    private final LogState log;
    private final Stats stats;

    LogFlush(Parts parts) {
        this.parts = parts;
        this.log = parts.log;
        this.stats = parts.stats;
        this.groupCommit = new GroupCommit(log.name, log.clock);
    }

    final GroupCommit groupCommit;

    // ------------------------------------------------------------------------------------------
    // flush

    public void flush() throws IOException {
        log.checkFailure();
        long t0 = log.clock.nanoTime();
        long target;
        long bypassSeq;
        long deadline = log.deadline();
        log.lock.lock();
        try {
            log.seal();
            target = log.lastSealedId;
            bypassSeq = log.bypassCompleted;
            log.waitForWritten(target, deadline, "the log to be written");
        } finally {
            log.lock.unlock();
        }
        groupFlush(target, bypassSeq, deadline);
        stats.flushes.increment();
        stats.flushLatency.recordSince(t0);
    }

    /** Seals the open record and makes the log durable on the cache device (not the backing device). */
    void flushLog(long deadline) throws IOException {
        long target;
        log.lock.lock();
        try {
            log.checkFailure();
            log.seal();
            target = log.lastSealedId;
            while (log.lastWrittenId < target) {
                log.await(deadline, "the log to be written");
            }
        } finally {
            log.lock.unlock();
        }
        if (log.lastFlushedId.get() < target) {
            groupFlush(target, Long.MIN_VALUE, deadline);
        }
    }

    void groupFlush(long target, long bypassSeq, long deadline) throws IOException {
        if (log.lastFlushedId.get() >= target && log.backingFlushedSeq >= bypassSeq) {
            return;
        }
        groupCommit.commit(() -> log.lastFlushedId.get() >= target && log.backingFlushedSeq >= bypassSeq, () -> {
            long b;
            log.lock.lock();
            try {
                b = log.bypassCompleted;
            } finally {
                log.lock.unlock();
            }
            flushCacheDevice();
            if (bypassSeq != Long.MIN_VALUE && b > log.backingFlushedSeq) {
                log.backing.flush();
                log.backingFlushedSeq = b;
            }
        }, deadline);
    }

    /** Flushes the cache device; every record written before is durable afterwards. */
    void flushCacheDevice() throws IOException {
        long w;
        log.lock.lock();
        try {
            w = log.lastWrittenId;
        } finally {
            log.lock.unlock();
        }
        try {
            log.cache.flush();
        } catch (IOException e) {
            log.fail(e);
            throw e;
        }
        stats.cacheFlushes.increment();
        log.lastFlushedId.accumulateAndGet(w, Math::max);
        log.lastCacheFlushNanos = log.clock.nanoTime();
    }
}
