package dev.strata.cache.writeboost.internal.io;

import dev.strata.cache.writeboost.internal.format.Layout;
import dev.strata.cache.writeboost.internal.format.RecordHeader;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The flusher task: writes sealed records to the cache device, coalescing consecutive ones into
 * one I/O, with up to {@code flushers} writes in flight.
 *
 * <h2>Writes in flight, completed in order</h2>
 * Several threads may run {@link #flusherRunOnce()} at once (the cache starts
 * {@code Options.flushers()} of them, three by default). Taking a batch off the queue, waiting for
 * its copies, the backing flush and sealing its headers (the chain of header CRCs) happen under
 * {@code prepare}, one batch at a time and in queue order, and give the batch a ticket; the write
 * itself runs outside every lock, so the next batch's CRCs are computed and its write issued while
 * the previous one is in flight (a single flusher left the cache device idle during each batch's
 * CRC pass, and a device is faster with two writes queued than one). A batch completes (its ids
 * and ends published under {@code lock}) only after the batch before it has completed (a batch
 * written first is left for the thread that completes its predecessor, which publishes both,
 * and its own thread goes on to the next write: the device keeps its writes queued): so
 * {@code lastWrittenId}, {@code writtenEnd} and {@code completedSid} advance exactly as with one
 * flusher, and a FLUSH never counts a record written while an earlier one is still in flight.
 * A flusher whose write has finished takes the next batch off the queue in the same hold of
 * {@code lock} as the completion, when {@code prepare} is free (one acquisition of the lock
 * every writer takes per request, instead of two, between one write of this thread and its next).
 * Records written out of order on the device are no new crash state: a volatile device cache may
 * persist them out of order anyway, and recovery ends the log at the first record missing from
 * the header chain. A failed write fails the cache; a later batch waiting for it then does not
 * complete either. Lock order: {@code prepare}, then {@code lock}.
 */
final class Flusher {
    static final int SB = Layout.SEGMENT_BLOCKS;
    static final int BS = Layout.BLOCK;
    private final Parts parts;
    private final LogState log;
    private final Stats stats;

    Flusher(Parts parts, int lastHeaderCrc) {
        this(parts, lastHeaderCrc, 1);
    }

    Flusher(Parts parts, int lastHeaderCrc, int flushers) {
        this.parts = parts;
        this.log = parts.log;
        this.stats = parts.stats;
        this.lastHeaderCrc = lastHeaderCrc;
        this.crcs = new BlockCrcs(log.bufs);
        // half the buffers (at least one segment) in flight in all, see maxCoalesce
        this.maxCoalesce = Math.max(1, log.nb / (2 * flushers)) * Layout.SEGMENT_SIZE;
        // per thread one batch in flight and one written but waiting for the one before it,
        // plus one being prepared: allocated once, reused
        int batches = 2 * flushers + 1;
        this.free = new ArrayBlockingQueue<>(batches);
        this.written = new Batch[batches];
        for (int i = 0; i < batches; i++) {
            free.add(new Batch());
        }
    }

    /** The writers' CRCs of the blocks they copied, from which {@link #seal} builds the records' data CRCs. */
    final BlockCrcs crcs;

    /** Most queue entries (records and markers) one flusher write covers. */
    static final int MAX_BATCH = 64;

    /** One flusher write: the entries taken off the queue, in queue order, and their header CRCs. */
    static final class Batch {
        final LogState.Sealed[] e = new LogState.Sealed[MAX_BATCH];
        final int[] crc = new int[MAX_BATCH];
        int n;
        int records;
        long ticket;
        long devStart;
        int memStart;
        int memEnd;
    }

    private final ArrayBlockingQueue<Batch> free;
    /**
     * Batches written whose predecessor has not completed yet, by {@code ticket % length}
     * (guarded by {@code log.lock}): the thread that completes the predecessor completes them
     * too, so a flusher whose write finished first goes on to the next write at once instead
     * of waiting (it waited for a fifth of the run, leaving the device one write).
     */
    private final Batch[] written;
    /** Serialises taking batches and sealing their headers (guards lastHeaderCrc and nextTicket). */
    private final ReentrantLock prepare = new ReentrantLock();
    int lastHeaderCrc;
    private long nextTicket = 1;
    /** The ticket of the last completed batch (guarded by {@code log.lock}). */
    private long completedTicket;
    /** Acquisitions of {@code log.lock} by the flushers, and batches completed (guarded by it; for tests). */
    private long lockHolds;
    private long batchesCompleted;
    /**
     * Most bytes one flusher write covers: half the buffers (at least one segment) divided among
     * the writes in flight, so that the writers fill the other half meanwhile (double buffering)
     * instead of all of them waiting for one write of every buffer.
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
     * {@code MAX_BATCH} queue entries and {@code maxCoalesce} bytes). Headers are sealed in record order
     * before the write, exactly as they would be one by one (the chain of header CRCs, the durable
     * id known at the time); the backing device is flushed first if any of them needs it. When the
     * write has completed, and the batch before it has, the entries complete in queue order, as if
     * written one by one; on an error none of them (nor any later batch) completes and the cache
     * fails. The entries are taken off the queue before the write; only the flusher ever removes
     * entries, and nothing else reads the queue.
     */
    public boolean flusherRunOnce() throws IOException {
        Batch b = free.poll();
        if (b == null) {
            b = awaitFreeBatch();
        }
        boolean sealed = false;
        prepare.lock();
        try {
            if (!take(b)) {
                return false;
            }
            ticketAndSeal(b);
            sealed = true;
        } catch (IOException e) {
            log.fail(e);
            throw e;
        } finally {
            prepare.unlock();
            if (!sealed) {
                recycle(b);
            }
        }
        for (int chained = 1; b != null; chained++) {
            b = writeAndComplete(b, chained < MAX_CHAIN);
        }
        return true;
    }

    /** Most batches one {@link #flusherRunOnce()} writes one after the other (see writeAndComplete). */
    static final int MAX_CHAIN = 64;

    /** Gives a batch just taken its ticket and seals it. Prepare held. */
    private void ticketAndSeal(Batch b) throws IOException {
        // the ticket before anything that may fail: a batch that fails leaves a gap no
        // later batch completes past
        b.ticket = nextTicket++;
        if (b.records > 0) {
            seal(b);
        }
    }

    /**
     * Writes a sealed batch and completes it. When this thread can prepare the next batch at once
     * ({@code prepare} free, a batch free), the next records are taken off the queue in the same
     * hold of {@code lock} as this completion, then sealed: returns that batch, to be written next
     * by this thread, else null. Taking them with a lock acquisition of its own queued the flusher
     * behind the writers the completion had just woken (a tenth to a third of a millisecond per
     * batch on two busy cores, while the device had one write in flight).
     */
    private Batch writeAndComplete(Batch b, boolean chain) throws IOException {
        Batch next = null;
        boolean preparing = false;
        boolean handedOver = false;
        boolean done = false;
        try {
            if (b.records > 0) {
                log.cache.write(b.devStart, log.ring.duplicate().limit(b.memEnd).position(b.memStart), 0);
            }
            if (chain && prepare.tryLock()) {
                preparing = true; // lock order: prepare before lock
                next = free.poll();
            }
            boolean took = false;
            log.lock.lock();
            try {
                lockHolds++;
                handedOver = completeLocked(b);
                took = next != null && takeLocked(next);
            } finally {
                log.lock.unlock();
            }
            if (next != null && !took) {
                recycle(next);
                next = null;
            }
            if (next != null) {
                ticketAndSeal(next);
            }
            done = true;
            return next;
        } catch (IOException e) {
            log.fail(e);
            throw e;
        } finally {
            if (preparing) {
                prepare.unlock();
            }
            if (!done && next != null) {
                recycle(next);
            }
            if (!handedOver) {
                recycle(b);
            }
        }
    }

    private void recycle(Batch b) {
        Arrays.fill(b.e, 0, b.n, null);
        b.n = 0;
        free.add(b);
    }

    /** Waits until a batch is free (every one is in flight or written and waiting for its predecessor). */
    private Batch awaitFreeBatch() throws IOException {
        log.lock.lock();
        try {
            lockHolds++;
            long deadline = log.deadline();
            Batch b;
            while ((b = free.poll()) == null) {
                log.checkFailure();
                log.await(deadline, "a log write to complete");
            }
            return b;
        } finally {
            log.lock.unlock();
        }
    }

    /** Takes the oldest sealed records (and markers) off the queue into {@code b}; false if there is none. Prepare held. */
    private boolean take(Batch b) {
        log.lock.lock();
        try {
            lockHolds++;
            return takeLocked(b);
        } finally {
            log.lock.unlock();
        }
    }

    /** {@link #take} with {@code lock} held (and prepare). */
    private boolean takeLocked(Batch b) {
        long devEnd = 0;
        int n = 0;
        int records = 0;
        if (log.failure != null) {
            return false;
        }
        LogState.Sealed s = log.queue.peek();
        if (s == null) {
            return false;
        }
        while (s != null && n < MAX_BATCH) {
            if (!s.marker()) {
                long dev = log.segOffset(log.phys(s.sid)) + (long) s.start * BS;
                int mem = (int) Math.floorMod(s.sid, (long) log.nb) * Layout.SEGMENT_SIZE + s.start * BS;
                int len = s.pad ? BS : (1 + s.data) * BS;
                if (records == 0) {
                    if (n > 0) {
                        break; // markers first, alone: a segment's end completes without waiting for the next write
                    }
                    b.devStart = dev;
                    b.memStart = mem;
                } else if (dev != devEnd || mem != b.memEnd || mem + len - b.memStart > maxCoalesce) {
                    break;
                }
                devEnd = dev + len;
                b.memEnd = mem + len;
                records++;
            }
            b.e[n++] = log.queue.poll();
            s = log.queue.peek();
        }
        b.n = n;
        b.records = records;
        return true;
    }

    /**
     * Waits for the batch's copies, flushes the backing device if a record needs it, and seals the
     * headers in record order (the CRC chain, the durable id known now). Prepare held, not lock.
     */
    private void seal(Batch b) throws IOException {
        // the records' data must be complete: writers copy into reserved slots after releasing
        // the lock (see LogState.copying). Waited for here, without the lock: a sealed
        // record gets no new reservations, so its flags only clear; waiting with the lock held
        // stalled every writer behind a copier the scheduler had descheduled
        boolean backingFlush = false;
        for (int i = 0; i < b.n; i++) {
            LogState.Sealed s = b.e[i];
            if (!s.marker()) {
                backingFlush |= s.needsBackingFlush;
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
        for (int i = 0; i < b.n; i++) {
            LogState.Sealed s = b.e[i];
            if (s.marker()) {
                continue;
            }
            int bi = (int) Math.floorMod(s.sid, (long) log.nb);
            ByteBuffer buf = log.bufs[bi];
            int base = s.start * BS;
            int dataCrc = s.data > 0 ? crcs.dataCrc(bi * SB + s.start + 1, s.data) : 0;
            prevCrc = RecordHeader.seal(buf, base, s.pad ? RecordHeader.FLAG_PAD : 0, s.entries, s.data, s.id,
                    s.sid, log.lastFlushedId.get(), prevCrc, dataCrc, s.span, s.start, log.session, log.uuidHash);
            b.crc[i] = prevCrc;
        }
        lastHeaderCrc = prevCrc;
    }

    /**
     * Publishes a written batch if the batch before it has completed, and then every later one
     * already written; otherwise leaves it for the thread that completes its predecessor.
     * Returns true when the batch was left (it is recycled by whoever publishes it).
     */
    private boolean completeLocked(Batch b) throws IOException {
        if (log.failure != null) {
            log.checkFailure(); // an earlier batch failed: this one must not complete
        }
        if (completedTicket != b.ticket - 1) {
            written[(int) (b.ticket % written.length)] = b;
            return true;
        }
        Batch next = b;
        while (next != null) {
            publish(next);
            if (next != b) {
                recycle(next);
            }
            int slot = (int) ((completedTicket + 1) % written.length);
            next = written[slot];
            if (next != null) {
                written[slot] = null;
            }
        }
        log.signal();
        return false;
    }

    /** Counts a batch as written: its ids and ends, in queue order. Lock held. */
    private void publish(Batch b) {
        for (int i = 0; i < b.n; i++) {
            LogState.Sealed s = b.e[i];
            if (s.marker()) {
                log.completedSid = Math.max(log.completedSid, s.sid);
                log.writtenEnd = Math.max(log.writtenEnd, (s.sid + 1) * SB);
                continue;
            }
            log.lastWrittenId = s.id;
            if (log.segSid[log.phys(s.sid)] == s.sid) {
                log.segLastCrc[log.phys(s.sid)] = b.crc[i];
            }
            log.writtenEnd = Math.max(log.writtenEnd, s.sid * SB + s.start + s.span);
            if (s.start + s.span >= SB - 1) {
                stats.segmentsWritten.increment();
            }
        }
        completedTicket = b.ticket;
        batchesCompleted++;
    }

    /** {@code {acquisitions of log.lock by the flushers, batches completed}} so far (a seam for tests). */
    long[] lockHoldsAndBatches() {
        log.lock.lock();
        try {
            return new long[] {lockHolds, batchesCompleted};
        } finally {
            log.lock.unlock();
        }
    }
}
