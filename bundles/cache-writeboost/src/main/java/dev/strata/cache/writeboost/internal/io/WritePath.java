package dev.strata.cache.writeboost.internal.io;

import dev.strata.api.BlockDevice;
import dev.strata.api.FastZeroUnsupportedException;
import dev.strata.api.Requests;
import dev.strata.cache.support.guard.SequentialRuns;
import dev.strata.cache.writeboost.internal.format.Layout;
import dev.strata.cache.writeboost.internal.format.RecordHeader;
import java.io.IOException;
import java.nio.ByteBuffer;

/** The write path: writes copied into the open record (merging partial blocks), or bypassed; write-zeroes and discard. */
final class WritePath {
    static final int SB = Layout.SEGMENT_BLOCKS;
    static final int BS = Layout.BLOCK;
    private final Parts parts;
    private final LogState log;
    private final Stats stats;

    WritePath(Parts parts) {
        this.parts = parts;
        this.log = parts.log;
        this.stats = parts.stats;
    }


    /** Sequential stream detection of writes (racy on purpose, see SequentialRuns). */
    final SequentialRuns writeRuns = new SequentialRuns();

    // ------------------------------------------------------------------------------------------
    // write path

    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        int len = src.remaining();
        Requests.check(log.size, offset, len);
        log.checkFailure();
        long t0 = log.clock.nanoTime();
        if (len > 0) {
            Tunables t = log.tunables();
            boolean bypass = t.writesToBacking() || (t.bypassThreshold() > 0 && len >= t.bypassThreshold())
                    || sequential(offset, len, t.sequentialCutoff());
            long a = (offset + BS - 1) & -BS;
            long b = (offset + len) & -BS;
            if (bypass && a < b) {
                int base = src.position();
                if (a > offset) {
                    writeCached(offset, src.duplicate().limit(base + (int) (a - offset)));
                }
                ByteBuffer mid = src.duplicate().position(base + (int) (a - offset)).limit(base + (int) (b - offset));
                // writethrough: the blocks written are also cached, clean (staged for the injector)
                ByteBuffer written = t.writethrough() ? mid.duplicate() : null;
                parts.bypass.bypass(a >>> Layout.BLOCK_SHIFT, b >>> Layout.BLOCK_SHIFT, true, written,
                        () -> log.backing.write(a, mid, 0));
                if (b < offset + len) {
                    writeCached(b, src.duplicate().position(base + (int) (b - offset)));
                }
                src.position(src.limit());
            } else {
                writeCached(offset, src, t0);
                src.position(src.limit());
            }
        }
        if ((flags & BlockDevice.FUA) != 0) {
            parts.flush.flush();
        }
        stats.writeLatency.recordSince(t0);
    }

    /** Whether this write makes its sequential stream longer than {@code cutoff} bytes (0: never). */
    boolean sequential(long offset, int len, long cutoff) {
        return cutoff > 0 && writeRuns.extend(offset, len) > cutoff;
    }

    /** Runs after a run of blocks is reserved and before its copy (a seam for tests; null in use). */
    volatile Runnable beforeCopy;

    /** Copies a write into the log. */
    void writeCached(long offset, ByteBuffer src) throws IOException {
        writeCached(offset, src, log.clock.nanoTime());
    }

    /**
     * Copies a write into the log; {@code now} is the clock time the request started (its
     * deadline and its busy-meter stamp: one clock read per request instead of three; clock
     * reads took ~3 % of the NBD workers' CPU samples at 4 KiB, a VM's clocksource).
     */
    void writeCached(long offset, ByteBuffer src, long now) throws IOException {
        int len = src.remaining();
        if (len == 0) {
            return;
        }
        long end = offset + len;
        long first = offset >>> Layout.BLOCK_SHIFT;
        long last = (end - 1) >>> Layout.BLOCK_SHIFT;
        int srcBase = src.position();
        long deadline = log.deadline(now);
        ByteBuffer merge = null; // 4 KiB, for merging a partial block with its copy on the cache device
        int needRead = -1;
        int needGen = 0;
        long b = first;
        while (b <= last) {
            // a run of full blocks reserved under the lock, copied after it (see LogState.copying)
            ByteBuffer runBuf = null;
            int runSlot = 0;
            int runSrc = 0;
            int runLen = 0;
            int runCopy = 0;
            boolean mustRead = false;
            log.lock.lock();
            try {
                log.checkFailure();
                // as many blocks as fit; stop only to read a block that a partial write must merge
                // with, or to copy the reserved run before anything that may wait
                while (b <= last) {
                    int s0 = b == first ? (int) ((offset & (BS - 1)) >>> 9) : 0;
                    int s1 = b == last ? (int) ((((end - 1) & (BS - 1)) >>> 9) + 1) : Layout.SECTORS_PER_BLOCK;
                    int bits = ((1 << (s1 - s0)) - 1) << s0;
                    int srcIndex = srcBase + (int) ((b << Layout.BLOCK_SHIFT) + (s0 << 9) - offset);
                    if (bits == Layout.FULL && log.hasDataRoom()) {
                        int old = log.map.get(b);
                        if (old < 0 || !log.inOpenRecord(old)) {
                            int headBuf = (int) Math.floorMod(log.headSid, (long) log.nb);
                            if (runLen > 0 && (log.bufs[headBuf] != runBuf || log.recPos != runSlot + runLen)) {
                                break; // not adjacent to the run: copy it first
                            }
                            if (runLen == 0) {
                                runBuf = log.bufs[headBuf];
                                runSlot = log.recPos;
                                runSrc = srcIndex;
                                runCopy = headBuf * SB + log.recPos;
                            }
                            reserveFull(b, old, headBuf);
                            runLen++;
                            b++;
                            continue;
                        }
                    }
                    if (runLen > 0) {
                        break; // the slow path may wait (for room): the run's copy must not wait with it
                    }
                    int r = appendBlock(b, bits, src, srcIndex, s0, s1, merge, needRead, needGen, deadline);
                    if (r >= 0) {
                        needRead = r;
                        needGen = log.segGen[r / SB];
                        mustRead = true;
                        break;
                    }
                    needRead = -1;
                    b++;
                }
            } finally {
                log.lock.unlock();
                if (runLen > 0) {
                    // outside the lock; always, so that no copy flag stays set (the flusher waits for them)
                    try {
                        Runnable hook = beforeCopy;
                        if (hook != null) {
                            hook.run();
                        }
                        runBuf.put(runSlot * BS, src, runSrc, runLen * BS);
                        parts.flusher.crcs.take(runCopy, runLen); // while the blocks are hot
                    } finally {
                        for (int k = 0; k < runLen; k++) {
                            // publishes the data: a release store after the copy, read with a volatile
                            // (acquire) get; no full fence per block (128 of them per 512 KiB write)
                            log.copying.lazySet(runCopy + k, 0);
                        }
                    }
                    stats.blocksWritten.add(runLen);
                }
            }
            if (mustRead) {
                if (merge == null) {
                    merge = ByteBuffer.allocate(BS);
                }
                merge.clear();
                log.cache.read(log.locOffset(needRead), merge);
            }
        }
        stats.writesCached.increment();
        stats.busy.op(now);
    }

    /**
     * Reserves the next data slot of the open record for a full block (whose cached copy, if
     * any, is {@code old} and not in the open record): header entry, index, dirty count, touch —
     * everything appendBlock does but the copy, which the caller makes after releasing the lock
     * and then clears the slot's copy flag. Lock held; there is data room; never waits.
     */
    private void reserveFull(long block, int old, int headBuf) {
        ByteBuffer buf = log.bufs[headBuf];
        int slot = log.recPos;
        // a plain (release) store is enough: whoever reads the flag took the lock after this one
        // released it (readers, writers) or took the record off the queue under it (the flusher)
        log.copying.lazySet(headBuf * SB + slot, 1);
        parts.flusher.crcs.forget(headBuf * SB + slot);
        int loc = log.phys(log.headSid) * SB + slot;
        RecordHeader.putEntry(buf, log.recStart * BS, log.recEntries, block, Layout.FULL, 0, 1);
        log.openEntryOfData[log.recData] = log.recEntries;
        log.recEntries++;
        log.recData++;
        log.recPos++;
        if (old >= 0 && log.isDirty(old)) {
            log.dirty--;
        }
        log.map.put(block, loc, Layout.FULL, false);
        log.readCache.touch(block);
        log.dirty++;
        if (!log.hasDataRoom() && log.recStart < SB) {
            log.seal();
        }
    }

    /**
     * Appends one (possibly partial) block to the open record, or overwrites it in place when the
     * open record already holds it. Lock held. Returns -1 when done, or a location that must be
     * read from the cache device before the block can be merged (the caller reads it into
     * {@code merge} and calls again with {@code mergedLoc} = that location).
     */
    int appendBlock(long block, int bits, ByteBuffer src, int srcIndex, int s0, int s1, ByteBuffer merge,
            int mergedLoc, int mergedGen, long deadline) throws IOException {
        while (true) {
            int old = log.map.get(block);
            int n = (s1 - s0) << 9;
            if (old >= 0 && log.inOpenRecord(old)) {
                log.awaitCopied(old); // another writer's copy into the slot may still be in flight
                parts.flusher.crcs.forget(log.copySlot(old));
                ByteBuffer buf = log.bufferOf(old);
                buf.put((old % SB) * BS + (s0 << 9), src, srcIndex, n);
                log.readCache.touch(block);
                int nv = log.map.valid(old) | bits;
                log.map.setValid(old, nv);
                if (log.map.clean(old)) {
                    log.map.setClean(old, false);
                    log.dirty++;
                }
                int k = old % SB - log.recStart - 1;
                RecordHeader.putEntry(buf, log.recStart * BS, log.openEntryOfData[k], block, nv, 0, 1);
                stats.writeHits.increment();
                stats.blocksWritten.increment();
                return -1;
            }
            boolean partial = bits != Layout.FULL;
            boolean needOld = old >= 0 && partial && (log.map.valid(old) & ~bits) != 0;
            if (needOld && !log.inBuffer(old) && !(mergedLoc == old && mergedGen == log.segGen[old / SB])) {
                return old;
            }
            if (!log.hasDataRoom()) {
                parts.head.makeRoom(deadline);
                continue;
            }
            int headBuf = (int) Math.floorMod(log.headSid, (long) log.nb);
            ByteBuffer buf = log.bufs[headBuf];
            int at = log.recPos * BS;
            parts.flusher.crcs.forget(headBuf * SB + log.recPos);
            int nv = bits;
            if (needOld) {
                if (log.inBuffer(old)) {
                    log.awaitCopied(old);
                    buf.put(at, log.bufferOf(old), (old % SB) * BS, BS);
                } else {
                    buf.put(at, merge, 0, BS);
                }
                nv |= log.map.valid(old);
            }
            buf.put(at + (s0 << 9), src, srcIndex, n);
            int loc = log.phys(log.headSid) * SB + log.recPos;
            RecordHeader.putEntry(buf, log.recStart * BS, log.recEntries, block, nv, 0, 1);
            log.openEntryOfData[log.recData] = log.recEntries;
            log.recEntries++;
            log.recData++;
            log.recPos++;
            if (old >= 0 && log.isDirty(old)) {
                log.dirty--;
            }
            log.map.put(block, loc, nv, false);
            log.readCache.touch(block);
            log.dirty++;
            stats.blocksWritten.increment();
            if (!log.hasDataRoom() && log.recStart < SB) {
                log.seal();
            }
            return -1;
        }
    }

    // ------------------------------------------------------------------------------------------
    // discard, write zeroes

    public void discard(long offset, long length) throws IOException {
        Requests.check(log.size, offset, length);
        log.checkFailure();
        long a = (offset + BS - 1) & -BS;
        long b = (offset + length) & -BS;
        if (a < b) {
            // cached copies are dropped like a bypassed write's: a clean copy kept after the backing
            // device discarded the range would no longer equal it, and dropping it later (eviction,
            // a bypass) would change what the block reads without a write
            parts.bypass.bypass(a >>> Layout.BLOCK_SHIFT, b >>> Layout.BLOCK_SHIFT, true, () -> log.backing.discard(a, b - a));
        }
    }

    public void writeZeroes(long offset, long length, int flags) throws IOException {
        Requests.check(log.size, offset, length);
        log.checkFailure();
        if ((flags & BlockDevice.FAST_ZERO) != 0 && !log.backing.canFastZero()) {
            throw new FastZeroUnsupportedException(log.name);
        }
        long a = (offset + BS - 1) & -BS;
        long b = (offset + length) & -BS;
        if (length >= 64 * 1024 && a < b) {
            if (a > offset) {
                zeroCached(offset, a - offset);
            }
            int f = flags & (BlockDevice.NO_HOLE | BlockDevice.FAST_ZERO);
            parts.bypass.bypass(a >>> Layout.BLOCK_SHIFT, b >>> Layout.BLOCK_SHIFT, true, () -> log.backing.writeZeroes(a, b - a, f));
            if (b < offset + length) {
                zeroCached(b, offset + length - b);
            }
        } else if (length > 0) {
            zeroCached(offset, length);
        }
        if ((flags & BlockDevice.FUA) != 0) {
            parts.flush.flush();
        }
    }

    /** 64 KiB of zeroes, shared by every write-zeroes (only ever read: writeCached copies from it). */
    private final ByteBuffer zeroes = ByteBuffer.allocateDirect(64 * 1024).asReadOnlyBuffer();

    void zeroCached(long offset, long length) throws IOException {
        ByteBuffer z = zeroes.duplicate();
        for (long o = offset; o < offset + length; o += z.capacity()) {
            writeCached(o, z.clear().limit((int) Math.min(z.capacity(), offset + length - o)));
        }
    }
}
