package dev.strata.cache.writeboost.internal.io;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceIOException;
import dev.strata.api.DeviceTimeoutException;
import dev.strata.cache.support.buffer.Buffers;
import dev.strata.cache.support.commit.GroupCommit;
import dev.strata.cache.support.time.Clock;
import dev.strata.cache.support.time.Deadline;
import dev.strata.cache.support.tunables.TunableCell;
import dev.strata.cache.writeboost.internal.format.Layout;
import dev.strata.cache.writeboost.internal.format.RecordHeader;
import dev.strata.cache.writeboost.internal.format.Superblock;
import dev.strata.cache.writeboost.internal.index.CacheMap;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The log's shared state: geometry, the in-memory buffers, the index, the progress ids and the
 * small operations on them that every part uses (seal, pad, map edits, waiting for an id). The
 * parts of the cache ({@link Parts}) all work on this one object; its locking and order rules
 * are written here, once.
 *
 * <h2>The log</h2>
 * Writes are copied into the open record of the head segment's in-memory buffer and
 * acknowledged. A record is sealed when it is full, on FLUSH/FUA, or by the periodic sync; the
 * flusher writes sealed records to the cache device in order, header and data together, records
 * that are consecutive on the device and in the buffer ring coalesced into one I/O. Segments are numbered by a monotonically increasing segment id ({@code sid}); a
 * segment's slot on the device is {@code sid % segmentCount}; its buffer is {@code sid % buffers}.
 * Progress is a handful of monotonically increasing ids:
 * <pre>
 *   reclaimSid  &lt;=  recordedLwb  &lt;=  lwb  &lt;  ...  completedSid  &lt;=  headSid
 *   (may be reused)  (on disk)     (written back)       (all records written)  (being filled)
 *   lastFlushedId  &lt;=  lastWrittenId  &lt;=  lastSealedId  &lt;  nextRecordId
 * </pre>
 *
 * <h2>Locking rules</h2>
 * <ul>
 * <li>{@code lock} guards all of the state above, the {@link CacheMap}, the sealed queue, the
 * per-segment arrays and the in-flight bypass and writeback sets. Nothing does device I/O while
 * holding it; only memory copies to and from the buffers happen under it.</li>
 * <li>{@code recordLock} serialises superblock record updates; the group commit's seat ({@link GroupCommit})
 * serialises device flushes. Order: recordLock, then the seat, then lock. A thread holding
 * {@code lock} takes neither of the others. The flusher threads' own {@code prepare} lock (taking
 * and sealing batches in log order, see {@link Flusher}) is taken before {@code lock}, never
 * while holding it.</li>
 * <li>Sealed parts of a buffer are immutable until the buffer is recycled; the open record is
 * changed only under {@code lock}. Buffers are only accessed with absolute indices.</li>
 * <li>A cache location read from the device is valid only if its segment's generation
 * ({@code segGen}) is unchanged after the read (reuse bumps it first).</li>
 * <li>Every wait has a deadline ({@code io_timeout_ms}) and ends in {@link DeviceTimeoutException}.</li>
 * </ul>
 *
 * <h2>Order rules on disk</h2>
 * Data and header of a record are written and waited for, then the cache device is flushed, and
 * only then is anything written that refers to them (a later header's durable id, the superblock
 * record). Written-back data is flushed on the backing device before a segment counts as written
 * back. A record that invalidates cached blocks (after a bypass write) is written only after the
 * bypassed data is flushed on the backing device. No location is rewritten before its segment is
 * written back and a durable superblock record says it is reclaimed. A superblock record never
 * counts a segment as written back and warm (not reclaimed) while a copy a bypass dropped from it
 * has no INVALIDATE entry written yet ({@code unloggedDrops}).
 *
 * <h2>Bypass and writeback</h2>
 * Writeback waits for (or stops its batch before) a dirty block of a registered bypass range; so
 * a registered bypass must not wait for writeback while such a block is in the map. It waits only
 * for writeback in flight before its backing I/O, and drops the range's copies from the map right
 * after it, before it waits for log space for their INVALIDATE entries.
 */
final class LogState {
    private static final Logger LOG = LoggerFactory.getLogger(LogState.class);
    static final int SB = Layout.SEGMENT_BLOCKS;
    static final int BS = Layout.BLOCK;


    /** A sealed record waiting for the flusher (or a segment-complete marker when {@code span == 0}). */
    static final class Sealed {
        final long id;
        final long sid;
        final int start;
        final int span;
        final int entries;
        final int data;
        final boolean pad;
        final boolean needsBackingFlush;

        Sealed(long id, long sid, int start, int span, int entries, int data, boolean pad, boolean needsBackingFlush) {
            this.id = id;
            this.sid = sid;
            this.start = start;
            this.span = span;
            this.entries = entries;
            this.data = data;
            this.pad = pad;
            this.needsBackingFlush = needsBackingFlush;
        }

        boolean marker() {
            return span == 0;
        }
    }

    // ---- immutable ----
    final String name;
    final BlockDevice backing;
    final BlockDevice cache;
    final Superblock sb;
    final long uuidHash;
    final int session;
    final int nSeg;
    final int nb;
    final ByteBuffer ring;
    final ByteBuffer[] bufs;
    final CacheMap map;
    final long[] segSid;
    final long[] segLastId;
    final int[] segLastCrc;
    final int[] segGen;
    final Clock clock;
    final long size;

    final ReentrantLock lock = new ReentrantLock();
    final Condition changed = lock.newCondition();
    /** The tunables in effect: one immutable value, swapped atomically by {@code message}. */
    final TunableCell<Tunables> tunableCell;

    /** The tunables in effect (one consistent set; read without a lock). */
    Tunables tunables() {
        return tunableCell.get();
    }
    /** Incremented (under {@code lock}) with every signal of {@code changed}: the daemons' wake-up counter. */
    volatile long events;
    /**
     * The flushers' own wake-up: signalled (one waiter) when a record or marker is queued, the only
     * thing a flusher waits for. With one condition for everything, each record sealed and each
     * batch written woke every daemon (writeback, record updater, data sync, both flushers) and
     * every waiting writer: ~4 signals per 1 MiB segment, 3 of 5 daemons woken for nothing each time.
     */
    final Condition queued = lock.newCondition();
    /** Incremented (under {@code lock}) with every signal of {@code queued}: the flushers' wake-up counter. */
    volatile long queuedEvents;

    // ---- log state (guarded by lock) ----
    long headSid;
    int recStart;
    int recPos;
    int recEntries;
    int recData;
    boolean recNeedsBackingFlush;
    boolean backingFlushPending;
    final int[] openEntryOfData = new int[Layout.MAX_DATA];
    long nextRecordId;
    long markerPushedFor = Long.MIN_VALUE;
    final ArrayDeque<Sealed> queue = new ArrayDeque<>();
    long lastSealedId;
    long lastWrittenId;
    long writtenEnd;
    long completedSid;
    long lwb;
    long lwbAnchorId;
    int lwbAnchorCrc;
    long recordedLwb;
    long reclaimSid;
    long reclaimAnchorId;
    int reclaimAnchorCrc;
    long recordSeq;
    long recordedDurable;
    long recordWanted = Long.MIN_VALUE;
    long dirty;
    boolean forceWriteback;
    /** Writers waiting for writeback to free log space (not for a log buffer). */
    int reclaimWaiters;
    IOException failure;
    final List<long[]> bypassRanges = new ArrayList<>();
    /**
     * One {@code {oldest, newest segment id}} per bypass whose range's cached copies were dropped from the
     * map but whose INVALIDATE entries are not yet logged: no superblock record may count such a
     * segment as written back (clean) unless it also counts it as reclaimed (see bypass()).
     */
    final List<long[]> unloggedDrops = new ArrayList<>();
    long[] wbBlocks = new long[0];
    int wbCount;
    long bypassCompleted;
    boolean suspended;
    boolean closed;
    // ---- flush coordination ----
    final AtomicLong lastFlushedId = new AtomicLong();
    volatile long backingFlushedSeq;
    /** When the cache device last finished a flush (clock time); see DURABLE_MARK_QUIET_NANOS. */
    volatile long lastCacheFlushNanos;
    /**
     * Set while the daemons stop (suspend, close): writeback abandons its batch before its next
     * backing write instead of finishing it. Safe: nothing counts as written back until a batch
     * has completed and the backing device has been flushed, so the blocks stay dirty in the log.
     */
    volatile boolean stopWriteback;
    /**
     * Counts cancelled {@code writebackAll} calls (Ctrl-C of {@code cache:writeback} and the commands
     * that drain), incremented under {@code lock}. A batch collected before a cancel abandons itself
     * at its next backing write, before its backing flush, and at its completion (under the lock),
     * so the cancel reports at once without waiting for the backing writes in flight, and its
     * report stays exact: the batch counts as written back only if it completed before the cancel.
     */
    volatile long writebackCancels;
    /**
     * Copies in flight into the buffers, one flag per buffer slot ({@code buffer * SB + slot}): a
     * full-block write reserves its slot, index entry and header entry under {@code lock} and
     * copies its data after releasing it (the copy is the longest part of a write, and the lock
     * is every writer's, reader's and daemon's). Until the flag is cleared (a volatile write after
     * the copy) nothing may read or overwrite that slot: readers and writers that find the block
     * in a buffer wait for it ({@link #awaitCopied}), and the flusher does not write a record with
     * a copy in flight. The copier never takes a lock, so waiting with {@code lock} held is safe.
     */
    final AtomicIntegerArray copying;
    /** How often something had to wait for a copy in flight (tests and curiosity). */
    final java.util.concurrent.atomic.LongAdder copyWaits = new java.util.concurrent.atomic.LongAdder();

    LogState(String name, BlockDevice backing, BlockDevice cache, Superblock sb, int buffers, Clock clock,
            Tunables tunables) {
        this.name = name;
        this.backing = backing;
        this.cache = cache;
        this.sb = sb;
        this.uuidHash = sb.uuidHash();
        this.session = ThreadLocalRandom.current().nextInt();
        this.nSeg = (int) sb.segmentCount();
        this.clock = clock;
        this.nb = buffers;
        this.tunableCell = new TunableCell<>(tunables);
        this.size = backing.size();
        this.map = new CacheMap(nSeg * SB, nSeg * Layout.MAX_DATA);
        this.segSid = new long[nSeg];
        Arrays.fill(segSid, -1);
        this.segLastId = new long[nSeg];
        this.segLastCrc = new int[nSeg];
        this.segGen = new int[nSeg];
        // the buffers are consecutive slices of one ring, so the buffers of consecutive segments are
        // consecutive in memory (except where the ring wraps) and the flusher can write records
        // from several of them with one I/O (see Flusher)
        this.ring = Buffers.aligned(nb * Layout.SEGMENT_SIZE);
        this.bufs = new ByteBuffer[nb];
        this.copying = new AtomicIntegerArray(nb * SB);
        for (int i = 0; i < nb; i++) {
            bufs[i] = ring.slice(i * Layout.SEGMENT_SIZE, Layout.SEGMENT_SIZE).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        }
    }

    /** The copy flag index of buffered location {@code loc}. */
    int copySlot(int loc) {
        return (int) Math.floorMod(segSid[loc / SB], (long) nb) * SB + loc % SB;
    }

    /** Waits (spinning: a copy takes microseconds and needs no lock) until no copy into buffer slot {@code index} is in flight. */
    void awaitCopy(int index) {
        if (copying.get(index) != 0) {
            copyWaits.increment();
        }
        for (int spins = 0; copying.get(index) != 0; spins++) {
            if (spins < 100) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }

    /** {@link #awaitCopy} for a location in a buffer (see {@link #inBuffer}). */
    void awaitCopied(int loc) {
        awaitCopy(copySlot(loc));
    }

    /**
     * Waits until every record up to {@code id} is written to the cache device (not yet flushed).
     * Lock held; throws on timeout, failure or interrupt.
     */
    void waitForWritten(long id, long deadline, String what) throws IOException {
        while (lastWrittenId < id) {
            checkFailure();
            await(deadline, what);
        }
    }

    // ---- read caching: staging area and injector (guarded by lock, see ReadCacheInjector) ----
    final ReadCacheInjector readCache = new ReadCacheInjector();
    final Condition injectWake = lock.newCondition();

    // ------------------------------------------------------------------------------------------
    // geometry helpers

    long segOffset(int phys) {
        return Layout.FIRST_SEGMENT_OFFSET + (long) phys * Layout.SEGMENT_SIZE;
    }

    long locOffset(int loc) {
        return Layout.FIRST_SEGMENT_OFFSET + (long) loc * BS;
    }

    int phys(long sid) {
        return (int) Math.floorMod(sid, (long) nSeg);
    }

    boolean isDirty(int loc) {
        return !map.clean(loc) && segSid[loc / SB] > lwb;
    }

    boolean inBuffer(int loc) {
        long sid = segSid[loc / SB];
        return sid * SB + (loc % SB) >= writtenEnd;
    }

    ByteBuffer bufferOf(int loc) {
        return bufs[(int) Math.floorMod(segSid[loc / SB], (long) nb)];
    }

    boolean inOpenRecord(int loc) {
        return loc / SB == phys(headSid) && segSid[loc / SB] == headSid && recStart < SB && loc % SB > recStart
                && loc % SB < recPos;
    }

    void checkFailure() throws IOException {
        IOException f = failure;
        if (f != null) {
            throw new DeviceIOException(name, -1, "the cache device failed earlier: " + f.getMessage(), f);
        }
        if (closed) {
            throw new DeviceIOException(name, -1, "the writeboost target is closed");
        }
    }

    long deadline() {
        return Deadline.at(clock, tunables().ioTimeoutMillis(), TimeUnit.MILLISECONDS);
    }

    /** The deadline of a request that started at clock time {@code now}. */
    long deadline(long now) {
        return now + TimeUnit.MILLISECONDS.toNanos(tunables().ioTimeoutMillis());
    }

    /** Waits on {@code changed} (lock held) until the deadline; throws on timeout, failure or interrupt. */
    void await(long deadline, String what) throws IOException {
        Deadline.await(changed, clock, deadline, name, what);
        if (failure != null) {
            checkFailure();
        }
    }

    /** Wakes everything waiting on {@code changed}. Lock held. */
    void signal() {
        events++;
        changed.signalAll();
    }

    /**
     * Wakes one waiting flusher: a record or marker was queued. One is enough: a flusher that is
     * running sees {@code queuedEvents} move and runs again before it waits (see Daemon), and a
     * second queued entry wakes a second waiting flusher. Nothing but the flushers waits for a
     * seal (FLUSH waits for {@code lastWrittenId}, writers for {@code completedSid}: both
     * signalled on {@code changed} by the flusher when a write completes). Lock held.
     */
    void signalQueued() {
        queuedEvents++;
        queued.signal();
    }

    void fail(IOException e) {
        lock.lock();
        try {
            if (failure == null) {
                failure = e;
                LOG.error("{}: cache device failed: {}", name, e.toString());
            }
            signal();
        } finally {
            lock.unlock();
        }
    }

    /** Backing blocks in {@code [from, to)} that have a clean cached copy. Lock held. */
    long[] cleanCopies(long from, long to) {
        if (map.size() == 0) {
            return new long[0];
        }
        long[] out = new long[8];
        int n = 0;
        if (to - from <= (long) nSeg * SB) {
            for (long b = from; b < to; b++) {
                int loc = map.get(b);
                if (loc >= 0 && !isDirty(loc)) {
                    if (n == out.length) {
                        out = Arrays.copyOf(out, n * 2);
                    }
                    out[n++] = b;
                }
            }
        } else {
            for (int loc = 0; loc < nSeg * SB; loc++) {
                long b = map.owner(loc);
                if (b >= from && b < to && !isDirty(loc)) {
                    if (n == out.length) {
                        out = Arrays.copyOf(out, n * 2);
                    }
                    out[n++] = b;
                }
            }
        }
        return Arrays.copyOf(out, n);
    }

    boolean writebackOverlaps(long from, long to) {
        if (wbCount == 0) {
            return false;
        }
        int i = Arrays.binarySearch(wbBlocks, 0, wbCount, from);
        if (i < 0) {
            i = -i - 1;
        }
        return i < wbCount && wbBlocks[i] < to;
    }

    /** The oldest segment id in {@code unloggedDrops}, or {@link Long#MAX_VALUE}. Lock held. */
    long oldestUnloggedDrop() {
        long m = Long.MAX_VALUE;
        for (int i = 0; i < unloggedDrops.size(); i++) {
            m = Math.min(m, unloggedDrops.get(i)[0]);
        }
        return m;
    }

    boolean bypassOverlaps(long block) {
        for (int i = 0; i < bypassRanges.size(); i++) {
            long[] r = bypassRanges.get(i);
            if (block >= r[0] && block < r[1]) {
                return true;
            }
        }
        return false;
    }

    /** Drops cached copies of {@code [from, to)}; returns how many were dropped. Lock held. */
    long invalidateInMap(long from, long to) {
        long dropped = 0;
        if (map.size() == 0) {
            return 0;
        }
        if (to - from <= (long) nSeg * SB) {
            for (long b = from; b < to; b++) {
                int loc = map.get(b);
                if (loc >= 0) {
                    if (isDirty(loc)) {
                        dirty--;
                    }
                    map.remove(b);
                    dropped++;
                }
            }
        } else {
            for (int loc = 0; loc < nSeg * SB; loc++) {
                long b = map.owner(loc);
                if (b >= from && b < to) {
                    if (isDirty(loc)) {
                        dirty--;
                    }
                    map.remove(b);
                    dropped++;
                }
            }
        }
        return dropped;
    }

    /**
     * Drops cached copies of {@code [from, to)} from the map without logging anything; widens
     * {@code span} ({oldest, newest} segment id) to the segments that held them. Returns whether
     * there were any. Lock held.
     */
    boolean dropStale(long from, long to, long[] span) {
        boolean any = false;
        if (map.size() == 0) {
            return false;
        }
        if (to - from <= (long) nSeg * SB) {
            for (long b = from; b < to; b++) {
                int loc = map.get(b);
                if (loc >= 0) {
                    widen(span, segSid[loc / SB]);
                    any = true;
                    if (isDirty(loc)) {
                        dirty--;
                    }
                    map.remove(b);
                }
            }
        } else {
            for (int loc = 0; loc < nSeg * SB; loc++) {
                long b = map.owner(loc);
                if (b >= from && b < to) {
                    widen(span, segSid[loc / SB]);
                    any = true;
                    if (isDirty(loc)) {
                        dirty--;
                    }
                    map.remove(b);
                }
            }
        }
        return any;
    }

    static void widen(long[] span, long sid) {
        span[0] = Math.min(span[0], sid);
        span[1] = Math.max(span[1], sid);
    }

    boolean hasEntryRoom() {
        return recStart < SB && recEntries < RecordHeader.MAX_ENTRIES;
    }

    boolean hasDataRoom() {
        return recStart < SB && recPos < SB && recData < Layout.MAX_DATA && recEntries < RecordHeader.MAX_ENTRIES;
    }

    void startRecordAt(int start) {
        recStart = start;
        recPos = start + 1;
        recEntries = 0;
        recData = 0;
        recNeedsBackingFlush = false;
        RecordHeader.clear(bufs[(int) Math.floorMod(headSid, (long) nb)], start * BS);
    }

    /** Seals the open record (if it has entries) for the flusher. Lock held. */
    void seal() {
        if (recStart >= SB || recEntries == 0) {
            return;
        }
        Sealed s = new Sealed(nextRecordId++, headSid, recStart, recPos - recStart, recEntries, recData, false,
                recNeedsBackingFlush || backingFlushPending);
        backingFlushPending = false;
        queue.add(s);
        lastSealedId = s.id;
        segLastId[phys(headSid)] = s.id;
        int next = RecordHeader.nextStart(recPos);
        if (next >= SB) {
            recStart = SB;
            recPos = SB;
            recEntries = 0;
            recData = 0;
            recNeedsBackingFlush = false;
        } else {
            startRecordAt(next);
        }
        signalQueued();
    }

    /** Closes the head segment: seals the open record and pads the rest. Lock held. */
    void pad() {
        seal();
        if (recStart < SB) {
            Sealed s = new Sealed(nextRecordId++, headSid, recStart, SB - recStart, 0, 0, true, backingFlushPending);
            backingFlushPending = false;
            queue.add(s);
            lastSealedId = s.id;
            segLastId[phys(headSid)] = s.id;
            signalQueued();
            recStart = SB;
            recPos = SB;
            recEntries = 0;
            recData = 0;
        }
        pushMarker();
    }

    void pushMarker() {
        if (markerPushedFor != headSid) {
            queue.add(new Sealed(-1, headSid, 0, 0, 0, 0, false, false));
            markerPushedFor = headSid;
            signalQueued();
        }
    }
}
