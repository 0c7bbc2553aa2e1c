package dev.strata.cache.writeboost.internal.io;

import dev.strata.cache.writeboost.internal.format.Crc;
import dev.strata.cache.writeboost.internal.format.Layout;
import dev.strata.cache.writeboost.internal.format.RecordHeader;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;

/** The flusher task: writes sealed records to the cache device, coalescing consecutive ones into one I/O. */
final class Flusher {
    static final int SB = Layout.SEGMENT_BLOCKS;
    static final int BS = Layout.BLOCK;
    private final Parts parts;
    private final LogState log;
    private final Stats stats;

    Flusher(Parts parts, int lastHeaderCrc) {
        this.parts = parts;
        this.log = parts.log;
        this.stats = parts.stats;
        this.lastHeaderCrc = lastHeaderCrc;
        // half the buffers (at least one segment) per write, see maxCoalesce
        this.maxCoalesce = Math.max(1, log.nb / 2) * Layout.SEGMENT_SIZE;
    }


    // ---- flusher-owned ----
    int lastHeaderCrc;
    /** Most queue entries (records and markers) one flusher write covers. */
    static final int MAX_BATCH = 64;
    /** The entries taken off the queue for the write in flight, in queue order, and their header CRCs. */
    final LogState.Sealed[] batch = new LogState.Sealed[MAX_BATCH];
    final int[] batchCrc = new int[MAX_BATCH];
    /**
     * Most bytes one flusher write covers: half the buffers (at least one segment), so that the
     * writers fill the other half while it is in flight (double buffering) instead of all of them
     * waiting for one write of every buffer.
     */
    final int maxCoalesce;

    // ------------------------------------------------------------------------------------------
    // flusher

    /**
     * Writes the oldest sealed records to the cache device. Returns false when there is none.
     *
     * <p>Records that lie back to back both on the device and in the buffer ring (consecutive
     * records of a segment, the last record of a segment and the first of the next one, as long as
     * neither the segment area nor the ring wraps) are written with one I/O (coalescing; at most
     * {@code MAX_BATCH} queue entries and half the buffers, see {@code maxCoalesce}). Headers are sealed in record order
     * before the write, exactly as they would be one by one (the chain of header CRCs, the durable
     * id known at the time); the backing device is flushed first if any of them needs it. When the
     * write has completed, the entries complete in queue order, as if written one by one; on an
     * error none of them completes and the cache fails. The entries are taken off the queue
     * before the write; only the flusher ever removes entries, and nothing else reads the queue.
     */
    public boolean flusherRunOnce() throws IOException {
        int n = 0;
        boolean backingFlush = false;
        long devStart = 0;
        long devEnd = 0;
        int memStart = 0;
        int memEnd = 0;
        log.lock.lock();
        try {
            if (log.failure != null) {
                return false;
            }
            LogState.Sealed s = log.queue.peek();
            if (s == null) {
                return false;
            }
            if (s.marker()) {
                log.queue.poll();
                log.completedSid = Math.max(log.completedSid, s.sid);
                log.writtenEnd = Math.max(log.writtenEnd, (s.sid + 1) * SB);
                log.signal();
                return true;
            }
            while (s != null && n < MAX_BATCH) {
                if (!s.marker()) {
                    long dev = log.segOffset(log.phys(s.sid)) + (long) s.start * BS;
                    int mem = (int) Math.floorMod(s.sid, (long) log.nb) * Layout.SEGMENT_SIZE + s.start * BS;
                    int len = s.pad ? BS : (1 + s.data) * BS;
                    if (n == 0) {
                        devStart = dev;
                        memStart = mem;
                    } else if (dev != devEnd || mem != memEnd || mem + len - memStart > maxCoalesce) {
                        break;
                    }
                    devEnd = dev + len;
                    memEnd = mem + len;
                    backingFlush |= s.needsBackingFlush;
                }
                batch[n++] = log.queue.poll();
                s = log.queue.peek();
            }
        } finally {
            log.lock.unlock();
        }
        try {
            // the records' data must be complete: writers copy into reserved slots after releasing
            // the lock (see LogState.copying). Waited for here, without the lock: a sealed
            // record gets no new reservations, so its flags only clear; waiting with the lock held
            // stalled every writer behind a copier the scheduler had descheduled
            for (int i = 0; i < n; i++) {
                LogState.Sealed s = batch[i];
                if (!s.marker()) {
                    int copies = (int) Math.floorMod(s.sid, (long) log.nb) * SB;
                    for (int k = s.start + 1; k <= s.start + s.data; k++) {
                        log.awaitCopy(copies + k);
                    }
                }
            }
            if (backingFlush) {
                log.backing.flush();
            }
            int prevCrc = lastHeaderCrc;
            for (int i = 0; i < n; i++) {
                LogState.Sealed s = batch[i];
                if (s.marker()) {
                    continue;
                }
                ByteBuffer buf = log.bufs[(int) Math.floorMod(s.sid, (long) log.nb)];
                int base = s.start * BS;
                int dataCrc = s.data > 0 ? Crc.of(buf, base + BS, s.data * BS) : 0;
                prevCrc = RecordHeader.seal(buf, base, s.pad ? RecordHeader.FLAG_PAD : 0, s.entries, s.data, s.id,
                        s.sid, log.lastFlushedId.get(), prevCrc, dataCrc, s.span, s.start, log.session, log.uuidHash);
                batchCrc[i] = prevCrc;
            }
            log.cache.write(devStart, log.ring.duplicate().limit(memEnd).position(memStart), 0);
            lastHeaderCrc = prevCrc;
            log.lock.lock();
            try {
                for (int i = 0; i < n; i++) {
                    LogState.Sealed s = batch[i];
                    if (s.marker()) {
                        log.completedSid = Math.max(log.completedSid, s.sid);
                        log.writtenEnd = Math.max(log.writtenEnd, (s.sid + 1) * SB);
                        continue;
                    }
                    log.lastWrittenId = s.id;
                    if (log.segSid[log.phys(s.sid)] == s.sid) {
                        log.segLastCrc[log.phys(s.sid)] = batchCrc[i];
                    }
                    log.writtenEnd = Math.max(log.writtenEnd, s.sid * SB + s.start + s.span);
                    if (s.start + s.span >= SB - 1) {
                        stats.segmentsWritten.increment();
                    }
                }
                log.signal();
            } finally {
                log.lock.unlock();
            }
            return true;
        } catch (IOException e) {
            log.fail(e);
            throw e;
        } finally {
            Arrays.fill(batch, 0, n, null);
        }
    }
}
