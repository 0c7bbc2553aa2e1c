package dev.strata.cache.writeboost.internal.io;

import dev.strata.api.BlockDevice;
import dev.strata.api.CacheMode;
import dev.strata.api.CacheTarget;
import dev.strata.api.DeviceIOException;
import dev.strata.api.DeviceTimeoutException;
import dev.strata.api.FastZeroUnsupportedException;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Requests;
import dev.strata.api.Target;
import dev.strata.api.WritebackController;
import dev.strata.cache.support.buffer.Buffers;
import dev.strata.cache.support.commit.GroupCommit;
import dev.strata.cache.support.daemon.Daemon;
import dev.strata.cache.support.guard.SequentialRuns;
import dev.strata.cache.support.stats.BusyMeter;
import dev.strata.cache.support.stats.Counters;
import dev.strata.cache.support.stats.LatencyRecorder;
import dev.strata.cache.support.time.Clock;
import dev.strata.cache.support.time.Deadline;
import dev.strata.cache.support.writeback.ControllerBinding;
import dev.strata.cache.support.writeback.WritebackBatcher;
import dev.strata.cache.writeboost.internal.format.Crc;
import dev.strata.cache.writeboost.internal.format.FormatException;
import dev.strata.cache.writeboost.internal.format.Layout;
import dev.strata.cache.writeboost.internal.format.RecordHeader;
import dev.strata.cache.writeboost.internal.format.Superblock;
import dev.strata.cache.writeboost.internal.format.SuperblockRecord;
import dev.strata.cache.writeboost.internal.index.CacheMap;
import dev.strata.cache.writeboost.internal.recovery.Recovery;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The writeboost target: a log-structured write cache in front of a backing device.
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
 * {@code lock} takes neither of the others.</li>
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
public final class WriteboostCache implements CacheTarget {
    private static final Logger LOG = LoggerFactory.getLogger(WriteboostCache.class);
    static final int SB = Layout.SEGMENT_BLOCKS;
    static final int BS = Layout.BLOCK;

    /**
     * Construction options that are not runtime tunables (tests and benchmarks).
     * {@code backgroundReadCache}: the read-cache injector runs as a daemon (else tests call
     * {@link #injectorRunOnce()}).
     */
    public record Options(Clock clock, int buffers, boolean backgroundWriteback, boolean backgroundRecordUpdates,
            boolean backgroundSync, boolean sortedWriteback, boolean backgroundReadCache) {
        public static Options defaults() {
            return new Options(Clock.SYSTEM, 4, true, true, true, true, true);
        }

        public Options withBuffers(int n) {
            return new Options(clock, n, backgroundWriteback, backgroundRecordUpdates, backgroundSync, sortedWriteback,
                    backgroundReadCache);
        }

        public Options manual() {
            return new Options(clock, buffers, false, false, false, sortedWriteback, false);
        }

        public Options withClock(Clock c) {
            return new Options(c, buffers, backgroundWriteback, backgroundRecordUpdates, backgroundSync, sortedWriteback,
                    backgroundReadCache);
        }

        public Options unsorted() {
            return new Options(clock, buffers, backgroundWriteback, backgroundRecordUpdates, backgroundSync, false,
                    backgroundReadCache);
        }

        public Options withBackgroundWriteback(boolean on) {
            return new Options(clock, buffers, on, backgroundRecordUpdates, backgroundSync, sortedWriteback,
                    backgroundReadCache);
        }

        public Options withBackgroundReadCache(boolean on) {
            return new Options(clock, buffers, backgroundWriteback, backgroundRecordUpdates, backgroundSync,
                    sortedWriteback, on);
        }
    }

    /** A sealed record waiting for the flusher (or a segment-complete marker when {@code span == 0}). */
    private static final class Sealed {
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
    private final String name;
    private final BlockDevice backing;
    private final BlockDevice cache;
    private final Superblock sb;
    private final long uuidHash;
    private final int session;
    private final int nSeg;
    private final int nb;
    private final ByteBuffer ring;
    private final ByteBuffer[] bufs;
    private final CacheMap map;
    private final long[] segSid;
    private final long[] segLastId;
    private final int[] segLastCrc;
    private final int[] segGen;
    private final Options options;
    private final Clock clock;
    private final long size;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final ReentrantLock recordLock = new ReentrantLock();
    private volatile Tunables tunables;
    /** Incremented (under {@code lock}) with every signal of {@code changed}: the daemons' wake-up counter. */
    private volatile long events;

    // ---- log state (guarded by lock) ----
    private long headSid;
    private int recStart;
    private int recPos;
    private int recEntries;
    private int recData;
    private boolean recNeedsBackingFlush;
    private boolean backingFlushPending;
    private final int[] openEntryOfData = new int[Layout.MAX_DATA];
    private long nextRecordId;
    private long markerPushedFor = Long.MIN_VALUE;
    private final ArrayDeque<Sealed> queue = new ArrayDeque<>();
    private long lastSealedId;
    private long lastWrittenId;
    private long writtenEnd;
    private long completedSid;
    private long lwb;
    private long lwbAnchorId;
    private int lwbAnchorCrc;
    private long recordedLwb;
    private long reclaimSid;
    private long reclaimAnchorId;
    private int reclaimAnchorCrc;
    private long recordSeq;
    private long recordedDurable;
    private long recordWanted = Long.MIN_VALUE;
    private long dirty;
    private boolean forceWriteback;
    /** Writers waiting for writeback to free log space (not for a log buffer). */
    private int reclaimWaiters;
    private IOException failure;
    private final List<long[]> bypassRanges = new ArrayList<>();
    /**
     * One {@code {oldest, newest segment id}} per bypass whose range's cached copies were dropped from the
     * map but whose INVALIDATE entries are not yet logged: no superblock record may count such a
     * segment as written back (clean) unless it also counts it as reclaimed (see bypass()).
     */
    private final List<long[]> unloggedDrops = new ArrayList<>();
    private long[] wbBlocks = new long[0];
    private int wbCount;
    private long bypassCompleted;
    private boolean suspended;
    private boolean closed;

    // ---- flusher-owned ----
    private int lastHeaderCrc;
    /** Most queue entries (records and markers) one flusher write covers. */
    static final int MAX_BATCH = 64;
    /** The entries taken off the queue for the write in flight, in queue order, and their header CRCs. */
    private final Sealed[] batch = new Sealed[MAX_BATCH];
    private final int[] batchCrc = new int[MAX_BATCH];
    /**
     * Most bytes one flusher write covers: half the buffers (at least one segment), so that the
     * writers fill the other half while it is in flight (double buffering) instead of all of them
     * waiting for one write of every buffer.
     */
    private final int maxCoalesce;
    // ---- flush coordination ----
    private final AtomicLong lastFlushedId = new AtomicLong();
    private volatile long backingFlushedSeq;

    /** Sequential stream detection of writes (racy on purpose, see SequentialRuns). */
    private final SequentialRuns writeRuns = new SequentialRuns();

    // ---- counters ----
    // (in groups, each rendered where its keys have always been in status())
    private final Counters readCounters = new Counters();
    private final Counters.Counter readHits = readCounters.counter("read_hits");
    private final Counters.Counter readMisses = readCounters.counter("read_misses");
    private final Counters.Counter readPartial = readCounters.counter("read_partial_hits");
    private final Counters writeCounters = new Counters();
    private final Counters.Counter writeHits = writeCounters.counter("write_hits");
    private final Counters.Counter writesCached = writeCounters.counter("writes_cached");
    private final Counters.Counter blocksWritten = writeCounters.counter("blocks_written");
    private final Counters.Counter bypassed = writeCounters.counter("bypassed");
    private final Counters writebackCounters = new Counters();
    private final Counters.Counter writtenBackBlocks = writebackCounters.counter("written_back_blocks");
    private final Counters.Counter writebackBatches = writebackCounters.counter("writeback_batches");
    private final Counters.Counter writebackWrites = writebackCounters.counter("writeback_writes");
    private final Counters logCounters = new Counters();
    private final Counters.Counter flushes = logCounters.counter("flushes");
    private final Counters.Counter cacheFlushes = logCounters.counter("cache_flushes");
    private final Counters.Counter recordUpdates = logCounters.counter("record_updates");
    private final Counters.Counter segmentsWritten = logCounters.counter("segments_written");
    private final LatencyRecorder readLatency;
    private final LatencyRecorder writeLatency;
    private final LatencyRecorder flushLatency;
    private final GroupCommit groupCommit;
    private final ControllerBinding controller;
    private final BusyMeter busy;
    private volatile long wbRateBlocksPerSec;
    private volatile String lastWritebackError = "";
    private long lastRecordUpdateNanos;
    /** When the cache device last finished a flush (clock time); see DURABLE_MARK_QUIET_NANOS. */
    private volatile long lastCacheFlushNanos;
    /**
     * How long the log must stay quiet (no cache flush) after a flush before the record updater
     * writes the durable mark; short enough that a crash soon after a workload's final flush finds
     * it, long enough that a workload flushing continuously never pays for it.
     */
    static final long DURABLE_MARK_QUIET_NANOS = TimeUnit.SECONDS.toNanos(1);
    private long lastSyncNanos;
    private final Recovery.Result recovered;

    // ---- daemons ----
    private final Daemon flusher;
    private final Daemon writeback;
    private final Daemon recordUpdater;
    private final Daemon dataSync;
    private final Daemon injector;

    // ---- read caching: staging area and injector (guarded by lock, see ReadCacheInjector) ----
    private final ReadCacheInjector readCache = new ReadCacheInjector();
    private final Condition injectWake = lock.newCondition();

    // ------------------------------------------------------------------------------------------
    // opening

    /**
     * Opens (formatting a blank device, or any device when {@code format} is true and it does not
     * hold a valid writeboost cache for this backing device) and recovers a cache.
     *
     * @throws InvalidArgumentException for unusable devices; nothing has been written then
     */
    public static WriteboostCache open(String name, BlockDevice backing, BlockDevice cache, boolean format,
            Tunables tunables, Options options, Function<String, WritebackController> controllers)
            throws IOException {
        if (backing == cache) {
            throw new InvalidArgumentException("writeboost: backing and cache are the same device; use two devices");
        }
        if (cache.size() < Layout.MIN_CACHE_SIZE) {
            throw new InvalidArgumentException("writeboost: the cache device has " + cache.size() + " bytes; at least "
                    + Layout.MIN_CACHE_SIZE + " (17M) are needed");
        }
        if (backing.size() % BS != 0) {
            throw new InvalidArgumentException("writeboost: the backing device's size (" + backing.size()
                    + " bytes) is not a multiple of 4096");
        }
        if (options.buffers() < 2 || options.buffers() > 64) {
            throw new InvalidArgumentException("writeboost: buffers=" + options.buffers() + " is out of range; allowed 2 to 64");
        }
        ByteBuffer block = ByteBuffer.allocate(BS);
        cache.read(Layout.SUPERBLOCK_OFFSET, block);
        Superblock sb;
        SuperblockRecord rec = null;
        try {
            sb = Superblock.decode(block);
            if (sb.usedBytes() > cache.size()) {
                throw new FormatException(FormatException.Kind.CORRUPT, "the cache device's superblock describes "
                        + sb.usedBytes() + " bytes but the device has " + cache.size());
            }
            if (sb.backingSize() != backing.size()) {
                throw new FormatException(FormatException.Kind.FOREIGN, "the cache device belongs to a backing device of "
                        + sb.backingSize() + " bytes, not this one (" + backing.size() + " bytes)");
            }
            rec = readRecord(cache, sb.uuidHash());
            if (rec == null) {
                throw new FormatException(FormatException.Kind.CORRUPT, "both superblock record slots of the cache device are corrupt");
            }
        } catch (FormatException e) {
            if (e.kind() != FormatException.Kind.BLANK && !format) {
                throw new InvalidArgumentException("writeboost: " + e.getMessage()
                        + "; pass format=true to format it (its contents are lost)");
            }
            long segs = Math.min((cache.size() - Layout.FIRST_SEGMENT_OFFSET) / Layout.SEGMENT_SIZE,
                    Integer.MAX_VALUE / SB);
            sb = Superblock.create(segs, UUID.randomUUID(), backing.size(), System.currentTimeMillis());
            rec = SuperblockRecord.initial(sb.uuidHash());
            formatDevice(cache, sb, rec);
            LOG.info("{}: formatted the cache device: {} segments of 1 MiB", name, segs);
        }
        return new WriteboostCache(name, backing, cache, sb, rec, tunables, options, controllers);
    }

    private static SuperblockRecord readRecord(BlockDevice cache, long uuidHash) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(BS);
        cache.read(Layout.RECORD_SLOT_0, b);
        SuperblockRecord r0 = SuperblockRecord.decode(b, uuidHash);
        b.clear();
        cache.read(Layout.RECORD_SLOT_1, b);
        SuperblockRecord r1 = SuperblockRecord.decode(b, uuidHash);
        return SuperblockRecord.newer(r0, r1);
    }

    private static void formatDevice(BlockDevice cache, Superblock sb, SuperblockRecord rec) throws IOException {
        // record slots first, flushed, then the superblock: a stop half-way leaves no valid superblock
        cache.write(rec.slotOffset(), rec.encode(), 0);
        cache.write(Layout.RECORD_SLOT_1, ByteBuffer.allocate(BS), 0);
        cache.flush();
        cache.write(Layout.SUPERBLOCK_OFFSET, sb.encode(), 0);
        cache.flush();
    }

    private WriteboostCache(String name, BlockDevice backing, BlockDevice cache, Superblock sb, SuperblockRecord rec,
            Tunables tunables, Options options, Function<String, WritebackController> controllers) throws IOException {
        this.name = name;
        this.backing = backing;
        this.cache = cache;
        this.sb = sb;
        this.uuidHash = sb.uuidHash();
        this.session = ThreadLocalRandom.current().nextInt();
        this.nSeg = (int) sb.segmentCount();
        this.options = options;
        this.clock = options.clock();
        this.nb = options.buffers();
        this.tunables = tunables;
        this.size = backing.size();
        this.busy = new BusyMeter(clock);
        this.readLatency = new LatencyRecorder("read", clock);
        this.writeLatency = new LatencyRecorder("write", clock);
        this.flushLatency = new LatencyRecorder("flush", clock);
        this.groupCommit = new GroupCommit(name, clock);
        this.controller = ControllerBinding.withModulator(name, controllers);
        this.batcher = new WritebackBatcher(BS, MAX_RUN, options.sortedWriteback());
        int locations = nSeg * SB;
        this.map = new CacheMap(locations, nSeg * Layout.MAX_DATA);
        this.segSid = new long[nSeg];
        Arrays.fill(segSid, -1);
        this.segLastId = new long[nSeg];
        this.segLastCrc = new int[nSeg];
        this.segGen = new int[nSeg];
        // the buffers are consecutive slices of one ring, so the buffers of consecutive segments are
        // consecutive in memory (except where the ring wraps) and the flusher can write records
        // from several of them with one I/O (see flusherRunOnce)
        this.ring = Buffers.aligned(nb * Layout.SEGMENT_SIZE);
        this.bufs = new ByteBuffer[nb];
        this.maxCoalesce = Math.max(1, nb / 2) * Layout.SEGMENT_SIZE;
        for (int i = 0; i < nb; i++) {
            bufs[i] = ring.slice(i * Layout.SEGMENT_SIZE, Layout.SEGMENT_SIZE).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        }
        // recovery
        Recovery.Result r = Recovery.run(cache, sb, rec, new Recovery.Sink() {
            @Override
            public void data(int loc, long block, int valid, boolean clean) {
                if (block < 0 || block >= size / BS) {
                    return;
                }
                map.put(block, loc, valid, clean);
            }

            @Override
            public void invalidate(long block, long length) {
                invalidateInMap(block, Math.min(block + length, size / BS));
            }

            @Override
            public void record(long segmentId, int phys, long recordId, int headerCrc, boolean dirtyRegion) {
                segSid[phys] = segmentId;
                segLastId[phys] = recordId;
                segLastCrc[phys] = headerCrc;
            }
        });
        this.recovered = r;
        lwb = rec.writtenBackSegment();
        lwbAnchorId = rec.writtenBackLastRecordId();
        lwbAnchorCrc = rec.writtenBackLastCrc();
        recordedLwb = lwb;
        reclaimSid = rec.reclaimedSegment();
        reclaimAnchorId = rec.reclaimedLastRecordId();
        reclaimAnchorCrc = rec.reclaimedLastCrc();
        recordSeq = rec.sequence();
        recordedDurable = r.lastRecordId(); // nothing new to record until something is written
        long dirtyCount = 0;
        for (int p = 0; p < nSeg; p++) {
            if (segSid[p] >= 0 && segSid[p] > lwb) {
                dirtyCount += map.dirtyIn(p * SB + 1, p * SB + SB);
            }
        }
        dirty = dirtyCount;
        nextRecordId = r.lastRecordId() + 1;
        lastSealedId = r.lastRecordId();
        lastWrittenId = r.lastRecordId();
        lastHeaderCrc = r.lastHeaderCrc();
        lastFlushedId.set(r.lastRecordId());
        // position the head at the next record's place
        long nextSid = r.nextSegment();
        int nextStart = r.nextStart();
        writtenEnd = nextSid * SB + nextStart;
        if (nextStart == 0) {
            // the next record starts a fresh segment: make the previous one the (complete) head
            headSid = nextSid - 1;
            recStart = SB;
            recPos = SB;
            completedSid = nextSid - 1;
            markerPushedFor = headSid;
        } else {
            headSid = nextSid;
            completedSid = nextSid - 1;
            startRecordAt(nextStart);
        }
        lastRecordUpdateNanos = clock.nanoTime();
        lastSyncNanos = lastRecordUpdateNanos;
        cache.flush(); // what recovery read is what later records will claim as durable
        // the backing device may hold writes that are not durable yet (of a killed process, of the
        // stack that used it before): the first record (which may copy such data as CLEAN entries)
        // flushes it first
        backingFlushPending = true;
        String dev = name == null ? "writeboost" : name;
        flusher = new Daemon("strata-writeboost-" + dev + "-flusher", this::flusherRunOnce, lock, changed, 1000, () -> events);
        writeback = new Daemon("strata-writeboost-" + dev + "-writeback", this::writebackRunOnce, lock, changed, 100, () -> events);
        recordUpdater = new Daemon("strata-writeboost-" + dev + "-record", this::recordUpdaterRunOnce, lock, changed, 1000, () -> events);
        dataSync = new Daemon("strata-writeboost-" + dev + "-sync", this::syncRunOnce, lock, changed, 1000, () -> events);
        LOG.info("{}: recovered {} log records ({} dirty blocks, {} cached blocks; log ended by {}; {} bytes read)",
                dev, r.dirtyRecords(), dirty, map.size(), r.truncatedBy(), r.bytesRead());
        // read caching: the injector daemon, and the staging area if read caching is on
        injector = new Daemon("strata-writeboost-" + dev + "-readcache", this::injectorRunOnce, lock, injectWake, 1000);
        activateReadCache();
        startDaemons();
    }

    private void startDaemons() {
        flusher.start();
        if (options.backgroundWriteback()) {
            writeback.start();
        }
        if (options.backgroundRecordUpdates()) {
            recordUpdater.start();
        }
        if (options.backgroundSync()) {
            dataSync.start();
        }
        if (options.backgroundReadCache()) {
            injector.start();
        }
    }

    private void stopDaemons(boolean alsoFlusher) {
        stopInjector();
        dataSync.stop();
        recordUpdater.stop();
        writeback.stop();
        if (alsoFlusher) {
            flusher.stop();
        }
    }

    // ------------------------------------------------------------------------------------------
    // geometry helpers

    private long segOffset(int phys) {
        return Layout.FIRST_SEGMENT_OFFSET + (long) phys * Layout.SEGMENT_SIZE;
    }

    private long locOffset(int loc) {
        return Layout.FIRST_SEGMENT_OFFSET + (long) loc * BS;
    }

    private int phys(long sid) {
        return (int) Math.floorMod(sid, (long) nSeg);
    }

    private boolean isDirty(int loc) {
        return !map.clean(loc) && segSid[loc / SB] > lwb;
    }

    private boolean inBuffer(int loc) {
        long sid = segSid[loc / SB];
        return sid * SB + (loc % SB) >= writtenEnd;
    }

    private ByteBuffer bufferOf(int loc) {
        return bufs[(int) Math.floorMod(segSid[loc / SB], (long) nb)];
    }

    private boolean inOpenRecord(int loc) {
        return loc / SB == phys(headSid) && segSid[loc / SB] == headSid && recStart < SB && loc % SB > recStart
                && loc % SB < recPos;
    }

    // ------------------------------------------------------------------------------------------
    // Target

    @Override
    public String type() {
        return "writeboost";
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public int blockSize() {
        return BS;
    }

    private void checkFailure() throws IOException {
        IOException f = failure;
        if (f != null) {
            throw new DeviceIOException(name, -1, "the cache device failed earlier: " + f.getMessage(), f);
        }
        if (closed) {
            throw new DeviceIOException(name, -1, "the writeboost target is closed");
        }
    }

    private long deadline() {
        return Deadline.at(clock, tunables.ioTimeoutMillis(), TimeUnit.MILLISECONDS);
    }

    /** Waits on {@code changed} (lock held) until the deadline; throws on timeout, failure or interrupt. */
    private void await(long deadline, String what) throws IOException {
        Deadline.await(changed, clock, deadline, name, what);
        if (failure != null) {
            checkFailure();
        }
    }

    /** Wakes everything waiting on {@code changed}. Lock held. */
    private void signal() {
        events++;
        changed.signalAll();
    }

    private void fail(IOException e) {
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

    // ------------------------------------------------------------------------------------------
    // write path

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        int len = src.remaining();
        Requests.check(size, offset, len);
        checkFailure();
        long t0 = clock.nanoTime();
        if (len > 0) {
            Tunables t = tunables;
            boolean bypass = t.writeAround() || (t.bypassThreshold() > 0 && len >= t.bypassThreshold())
                    || sequential(offset, len, t.sequentialCutoff());
            long a = (offset + BS - 1) & -BS;
            long b = (offset + len) & -BS;
            if (bypass && a < b) {
                int base = src.position();
                if (a > offset) {
                    writeCached(offset, src.duplicate().limit(base + (int) (a - offset)));
                }
                ByteBuffer mid = src.duplicate().position(base + (int) (a - offset)).limit(base + (int) (b - offset));
                bypass(a >>> Layout.BLOCK_SHIFT, b >>> Layout.BLOCK_SHIFT, true, () -> backing.write(a, mid, 0));
                if (b < offset + len) {
                    writeCached(b, src.duplicate().position(base + (int) (b - offset)));
                }
                src.position(src.limit());
            } else {
                writeCached(offset, src);
                src.position(src.limit());
            }
        }
        if ((flags & FUA) != 0) {
            flush();
        }
        writeLatency.recordSince(t0);
    }

    /** Whether this write makes its sequential stream longer than {@code cutoff} bytes (0: never). */
    private boolean sequential(long offset, int len, long cutoff) {
        return cutoff > 0 && writeRuns.extend(offset, len) > cutoff;
    }

    /** An I/O on the backing device. */
    @FunctionalInterface
    private interface BackingOp {
        void run() throws IOException;
    }

    /**
     * Runs {@code op} on backing blocks {@code [from, to)} directly. While it runs, writeback
     * does not touch those blocks; it waits for writeback already writing them. Afterwards, if
     * {@code invalidate}, the cached copies are dropped and the drop is logged (in a record
     * written only after the backing device is flushed).
     */
    private void bypass(long from, long to, boolean invalidate, BackingOp op) throws IOException {
        long[] range = {from, to};
        long deadline = deadline();
        // log order: every write acknowledged before this one is durable before it reaches the
        // backing device, and every record sealed after it flushes the backing device first, so
        // that a crash leaves a prefix of the acknowledged writes
        flushLog(deadline);
        while (true) {
            if (invalidate) {
                // a clean copy claims to equal the backing device, and recovery keeps written-back
                // blocks warm: its drop must be durable before the backing device can change
                dropCleanCopies(from, to, deadline);
            }
            lock.lock();
            try {
                checkFailure();
                bypassRanges.add(range);
                while (writebackOverlaps(from, to)) {
                    try {
                        await(deadline, "writeback of the blocks being bypassed");
                    } catch (IOException e) {
                        bypassRanges.remove(range);
                        signal();
                        throw e;
                    }
                }
                // writeback that just finished may have made copies in the range clean: drop
                // those durably too (not while the range is registered: that may wait for log
                // space, and writeback would wait for the range)
                if (!invalidate || cleanCopies(from, to).length == 0) {
                    break;
                }
                bypassRanges.remove(range);
                signal();
            } finally {
                lock.unlock();
            }
        }
        boolean ok = false;
        busy.begin();
        try {
            op.run();
            ok = true;
        } finally {
            busy.end();
            lock.lock();
            try {
                // staged read-cache copies of the range read before this point are stale (even
                // if the op failed: it may have changed part of the range)
                readCache.touchRange(from, to);
                // even a failed op may have left data in the backing device's volatile cache, and
                // a read may copy it into the log as a CLEAN entry: flush it before later records
                backingFlushPending = true;
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
                        if (dropStale(from, to, drop)) {
                            unloggedDrops.add(drop);
                        } else {
                            drop = null;
                        }
                        invalidateLogged(from, to, drop != null, deadline);
                        // on failure (above) it stays: updateRecord forgets it once its segment is reclaimed
                        if (drop != null) {
                            unloggedDrops.remove(drop);
                        }
                    }
                    bypassCompleted++;
                    bypassed.increment();
                }
            } finally {
                bypassRanges.remove(range);
                signal();
                lock.unlock();
            }
        }
    }

    /** Backing blocks in {@code [from, to)} that have a clean cached copy. Lock held. */
    private long[] cleanCopies(long from, long to) {
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

    /**
     * Drops the clean cached copies of {@code [from, to)}, logs an INVALIDATE entry for each and
     * makes them durable (a flush) before returning: the backing device still equals those copies,
     * so nothing is lost if the drop survives a crash without the write that follows.
     */
    private void dropCleanCopies(long from, long to, long deadline) throws IOException {
        boolean logged = false;
        lock.lock();
        try {
            checkFailure();
            for (long b : cleanCopies(from, to)) {
                while (!hasEntryRoom()) {
                    makeRoom(deadline);
                }
                int loc = map.get(b);
                if (loc < 0 || isDirty(loc)) {
                    continue;
                }
                map.remove(b);
                ByteBuffer buf = bufs[(int) Math.floorMod(headSid, (long) nb)];
                RecordHeader.putEntry(buf, recStart * BS, recEntries, b, 0, RecordHeader.ENTRY_INVALIDATE, 1);
                recEntries++;
                logged = true;
            }
        } finally {
            lock.unlock();
        }
        if (logged) {
            flushLog(deadline);
        }
    }

    private boolean writebackOverlaps(long from, long to) {
        if (wbCount == 0) {
            return false;
        }
        int i = Arrays.binarySearch(wbBlocks, 0, wbCount, from);
        if (i < 0) {
            i = -i - 1;
        }
        return i < wbCount && wbBlocks[i] < to;
    }

    /** The oldest segment id in {@link #unloggedDrops}, or {@link Long#MAX_VALUE}. Lock held. */
    private long oldestUnloggedDrop() {
        long m = Long.MAX_VALUE;
        for (int i = 0; i < unloggedDrops.size(); i++) {
            m = Math.min(m, unloggedDrops.get(i)[0]);
        }
        return m;
    }

    private boolean bypassOverlaps(long block) {
        for (int i = 0; i < bypassRanges.size(); i++) {
            long[] r = bypassRanges.get(i);
            if (block >= r[0] && block < r[1]) {
                return true;
            }
        }
        return false;
    }

    /** Drops cached copies of {@code [from, to)}; returns how many were dropped. Lock held. */
    private long invalidateInMap(long from, long to) {
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
    private boolean dropStale(long from, long to, long[] span) {
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

    private static void widen(long[] span, long sid) {
        span[0] = Math.min(span[0], sid);
        span[1] = Math.max(span[1], sid);
    }

    /**
     * Drops cached copies of {@code [from, to)} and logs INVALIDATE entries for them (for every
     * chunk if {@code always}: copies dropped earlier by dropStale). Lock held.
     */
    private void invalidateLogged(long from, long to, boolean always, long deadline) throws IOException {
        for (long c = from; c < to; c += RecordHeader.MAX_INVALIDATE_LENGTH) {
            long e = Math.min(to, c + RecordHeader.MAX_INVALIDATE_LENGTH);
            // room first: making room may wait (releasing the lock), and the entry must follow
            // every data entry of these blocks logged before the drop, and precede every later one
            while (!hasEntryRoom()) {
                makeRoom(deadline);
            }
            if (invalidateInMap(c, e) > 0 || always) {
                ByteBuffer buf = bufs[(int) Math.floorMod(headSid, (long) nb)];
                RecordHeader.putEntry(buf, recStart * BS, recEntries, c, 0, RecordHeader.ENTRY_INVALIDATE, (int) (e - c));
                recEntries++;
                recNeedsBackingFlush = true;
            }
        }
    }

    private boolean hasEntryRoom() {
        return recStart < SB && recEntries < RecordHeader.MAX_ENTRIES;
    }

    private boolean hasDataRoom() {
        return recStart < SB && recPos < SB && recData < Layout.MAX_DATA && recEntries < RecordHeader.MAX_ENTRIES;
    }

    /** Copies a write into the log. */
    private void writeCached(long offset, ByteBuffer src) throws IOException {
        int len = src.remaining();
        if (len == 0) {
            return;
        }
        long end = offset + len;
        long first = offset >>> Layout.BLOCK_SHIFT;
        long last = (end - 1) >>> Layout.BLOCK_SHIFT;
        int srcBase = src.position();
        long deadline = deadline();
        ByteBuffer merge = null; // 4 KiB, for merging a partial block with its copy on the cache device
        int needRead = -1;
        int needGen = 0;
        long b = first;
        while (b <= last) {
            lock.lock();
            try {
                checkFailure();
                // as many blocks as fit; stop only to read a block that a partial write must merge with
                while (b <= last) {
                    int s0 = b == first ? (int) ((offset & (BS - 1)) >>> 9) : 0;
                    int s1 = b == last ? (int) ((((end - 1) & (BS - 1)) >>> 9) + 1) : Layout.SECTORS_PER_BLOCK;
                    int bits = ((1 << (s1 - s0)) - 1) << s0;
                    int srcIndex = srcBase + (int) ((b << Layout.BLOCK_SHIFT) + (s0 << 9) - offset);
                    int r = appendBlock(b, bits, src, srcIndex, s0, s1, merge, needRead, needGen, deadline);
                    if (r >= 0) {
                        needRead = r;
                        needGen = segGen[r / SB];
                        break;
                    }
                    needRead = -1;
                    b++;
                }
            } finally {
                lock.unlock();
            }
            if (b <= last) {
                if (merge == null) {
                    merge = ByteBuffer.allocate(BS);
                }
                merge.clear();
                cache.read(locOffset(needRead), merge);
            }
        }
        writesCached.increment();
        busy.op();
    }

    /**
     * Appends one (possibly partial) block to the open record, or overwrites it in place when the
     * open record already holds it. Lock held. Returns -1 when done, or a location that must be
     * read from the cache device before the block can be merged (the caller reads it into
     * {@code merge} and calls again with {@code mergedLoc} = that location).
     */
    private int appendBlock(long block, int bits, ByteBuffer src, int srcIndex, int s0, int s1, ByteBuffer merge,
            int mergedLoc, int mergedGen, long deadline) throws IOException {
        while (true) {
            int old = map.get(block);
            int n = (s1 - s0) << 9;
            if (old >= 0 && inOpenRecord(old)) {
                ByteBuffer buf = bufferOf(old);
                buf.put((old % SB) * BS + (s0 << 9), src, srcIndex, n);
                readCache.touch(block);
                int nv = map.valid(old) | bits;
                map.setValid(old, nv);
                if (map.clean(old)) {
                    map.setClean(old, false);
                    dirty++;
                }
                int k = old % SB - recStart - 1;
                RecordHeader.putEntry(buf, recStart * BS, openEntryOfData[k], block, nv, 0, 1);
                writeHits.increment();
                blocksWritten.increment();
                return -1;
            }
            boolean partial = bits != Layout.FULL;
            boolean needOld = old >= 0 && partial && (map.valid(old) & ~bits) != 0;
            if (needOld && !inBuffer(old) && !(mergedLoc == old && mergedGen == segGen[old / SB])) {
                return old;
            }
            if (!hasDataRoom()) {
                makeRoom(deadline);
                continue;
            }
            ByteBuffer buf = bufs[(int) Math.floorMod(headSid, (long) nb)];
            int at = recPos * BS;
            int nv = bits;
            if (needOld) {
                if (inBuffer(old)) {
                    buf.put(at, bufferOf(old), (old % SB) * BS, BS);
                } else {
                    buf.put(at, merge, 0, BS);
                }
                nv |= map.valid(old);
            }
            buf.put(at + (s0 << 9), src, srcIndex, n);
            int loc = phys(headSid) * SB + recPos;
            RecordHeader.putEntry(buf, recStart * BS, recEntries, block, nv, 0, 1);
            openEntryOfData[recData] = recEntries;
            recEntries++;
            recData++;
            recPos++;
            if (old >= 0 && isDirty(old)) {
                dirty--;
            }
            map.put(block, loc, nv, false);
            readCache.touch(block);
            dirty++;
            blocksWritten.increment();
            if (!hasDataRoom() && recStart < SB) {
                seal();
            }
            return -1;
        }
    }

    /** Seals a full open record or moves to the next segment. Lock held; may wait. */
    private void makeRoom(long deadline) throws IOException {
        if (recStart < SB && (recPos >= SB || recData >= Layout.MAX_DATA || recEntries >= RecordHeader.MAX_ENTRIES)) {
            seal();
        }
        if (recStart >= SB) {
            advance(deadline);
        }
    }

    private void startRecordAt(int start) {
        recStart = start;
        recPos = start + 1;
        recEntries = 0;
        recData = 0;
        recNeedsBackingFlush = false;
        RecordHeader.clear(bufs[(int) Math.floorMod(headSid, (long) nb)], start * BS);
    }

    /** Seals the open record (if it has entries) for the flusher. Lock held. */
    private void seal() {
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
        signal();
    }

    /** Closes the head segment: seals the open record and pads the rest. Lock held. */
    private void pad() {
        seal();
        if (recStart < SB) {
            Sealed s = new Sealed(nextRecordId++, headSid, recStart, SB - recStart, 0, 0, true, backingFlushPending);
            backingFlushPending = false;
            queue.add(s);
            lastSealedId = s.id;
            segLastId[phys(headSid)] = s.id;
            recStart = SB;
            recPos = SB;
            recEntries = 0;
            recData = 0;
        }
        pushMarker();
    }

    private void pushMarker() {
        if (markerPushedFor != headSid) {
            queue.add(new Sealed(-1, headSid, 0, 0, 0, 0, false, false));
            markerPushedFor = headSid;
            signal();
        }
    }

    /** Moves the head to the next segment, reclaiming its slot. Lock held; may wait. */
    private void advance(long deadline) throws IOException {
        pushMarker();
        long next = headSid + 1;
        boolean waitingForReclaim = false;
        try {
            while (true) {
                checkFailure();
                boolean bufferFree = completedSid >= next - nb;
                long needReclaim = next - nSeg;
                if (bufferFree && needReclaim <= reclaimSid) {
                    break;
                }
                if (needReclaim > reclaimSid && needReclaim <= lwb) {
                    // written back, but no durable record says so yet: write one ourselves
                    recordWanted = Math.max(recordWanted, needReclaim);
                    lock.unlock();
                    try {
                        updateRecord(needReclaim);
                    } finally {
                        lock.lock();
                    }
                    continue;
                }
                if (needReclaim > lwb) {
                    // the log is full: writeback becomes urgent whatever writeback_threshold says.
                    // Waiting only for a log buffer is the cache device's pace and must not count
                    // (signalled once, when this writer starts waiting: a signal at every wake-up
                    // made waiting writers wake each other, and every daemon, in a busy loop)
                    if (!waitingForReclaim) {
                        waitingForReclaim = true;
                        reclaimWaiters++;
                        signal();
                    }
                } else if (waitingForReclaim) {
                    waitingForReclaim = false;
                    reclaimWaiters--;
                }
                await(deadline, needReclaim > lwb ? "writeback to free log space" : "a free log buffer");
            }
        } finally {
            if (waitingForReclaim) {
                reclaimWaiters--;
            }
        }
        if (headSid != next - 1) {
            return; // someone else advanced while we waited
        }
        int p = phys(next);
        segGen[p]++;
        for (int b = 0; b < SB; b++) {
            map.removeLocation(p * SB + b);
        }
        segSid[p] = next;
        segLastId[p] = 0;
        segLastCrc[p] = 0;
        headSid = next;
        startRecordAt(0);
    }

    // ------------------------------------------------------------------------------------------
    // read-cache injector

    private final ReadCacheInjector.Log cleanAppender = this::appendClean;

    /**
     * Appends a batch of staged read misses to the log as clean entries (see
     * {@link ReadCacheInjector}). Never waits for log space: when the head segment is full and the
     * next one is not free yet, the blocks stay staged for a later try. Returns false when there
     * was nothing to do.
     */
    public boolean injectorRunOnce() throws IOException {
        lock.lock();
        try {
            if (failure != null || closed) {
                readCache.clear();
                return false;
            }
            return readCache.inject(cleanAppender, 64);
        } finally {
            lock.unlock();
        }
    }

    /** One staged block into the open record as a CLEAN entry. Lock held; never waits. */
    private ReadCacheInjector.Outcome appendClean(long block, ByteBuffer src, int srcIndex) throws IOException {
        Tunables t = tunables;
        // a cached copy is at least as new; a bypass in flight changes the backing device (and
        // relies on no clean copy of its range entering the index meanwhile)
        if (t.readCacheThreshold() == 0 || t.writeAround() || failure != null || block >= size / BS
                || map.get(block) >= 0 || bypassOverlaps(block)) {
            return ReadCacheInjector.Outcome.DROPPED;
        }
        if (!hasDataRoom()) {
            if (recStart < SB) {
                seal();
            }
            if (recStart >= SB) {
                if (!canAdvanceNow()) {
                    return ReadCacheInjector.Outcome.NO_ROOM;
                }
                advance(deadline()); // does not wait (checked above)
            }
            if (!hasDataRoom()) {
                return ReadCacheInjector.Outcome.NO_ROOM;
            }
        }
        ByteBuffer buf = bufs[(int) Math.floorMod(headSid, (long) nb)];
        buf.put(recPos * BS, src, srcIndex, BS);
        int loc = phys(headSid) * SB + recPos;
        RecordHeader.putEntry(buf, recStart * BS, recEntries, block, Layout.FULL, RecordHeader.ENTRY_CLEAN, 1);
        openEntryOfData[recData] = recEntries;
        recEntries++;
        recData++;
        recPos++;
        map.put(block, loc, Layout.FULL, true);
        if (!hasDataRoom() && recStart < SB) {
            seal();
        }
        return ReadCacheInjector.Outcome.INJECTED;
    }

    /**
     * Whether the head can move to the next segment without waiting (a free buffer, a reclaimed
     * slot). If the slot is written back but not yet recorded as reclaimed, asks the record
     * updater for a record. Lock held.
     */
    private boolean canAdvanceNow() {
        pushMarker();
        long next = headSid + 1;
        long needReclaim = next - nSeg;
        if (completedSid < next - nb) {
            return false;
        }
        if (needReclaim <= reclaimSid) {
            return true;
        }
        if (needReclaim <= lwb && recordWanted < needReclaim) {
            recordWanted = needReclaim;
            signal();
        }
        return false;
    }

    /** Allocates the staging area (once) when read caching is on. */
    private void activateReadCache() {
        if (tunables.readCacheThreshold() > 0) {
            lock.lock();
            try {
                readCache.activate();
            } finally {
                lock.unlock();
            }
        }
    }

    /** Stops the injector and forgets what it had staged (suspend, close). */
    private void stopInjector() {
        injector.stop();
        lock.lock();
        try {
            readCache.clear();
        } finally {
            lock.unlock();
        }
    }

    // ------------------------------------------------------------------------------------------
    // flusher

    /**
     * Writes the oldest sealed records to the cache device. Returns false when there is none.
     *
     * <p>Records that lie back to back both on the device and in the buffer ring (consecutive
     * records of a segment, the last record of a segment and the first of the next one, as long as
     * neither the segment area nor the ring wraps) are written with one I/O (coalescing; at most
     * {@link #MAX_BATCH} queue entries and half the buffers, see {@link #maxCoalesce}). Headers are sealed in record order
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
        lock.lock();
        try {
            if (failure != null) {
                return false;
            }
            Sealed s = queue.peek();
            if (s == null) {
                return false;
            }
            if (s.marker()) {
                queue.poll();
                completedSid = Math.max(completedSid, s.sid);
                writtenEnd = Math.max(writtenEnd, (s.sid + 1) * SB);
                signal();
                return true;
            }
            while (s != null && n < MAX_BATCH) {
                if (!s.marker()) {
                    long dev = segOffset(phys(s.sid)) + (long) s.start * BS;
                    int mem = (int) Math.floorMod(s.sid, (long) nb) * Layout.SEGMENT_SIZE + s.start * BS;
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
                batch[n++] = queue.poll();
                s = queue.peek();
            }
        } finally {
            lock.unlock();
        }
        try {
            if (backingFlush) {
                backing.flush();
            }
            int prevCrc = lastHeaderCrc;
            for (int i = 0; i < n; i++) {
                Sealed s = batch[i];
                if (s.marker()) {
                    continue;
                }
                ByteBuffer buf = bufs[(int) Math.floorMod(s.sid, (long) nb)];
                int base = s.start * BS;
                int dataCrc = s.data > 0 ? Crc.of(buf, base + BS, s.data * BS) : 0;
                prevCrc = RecordHeader.seal(buf, base, s.pad ? RecordHeader.FLAG_PAD : 0, s.entries, s.data, s.id,
                        s.sid, lastFlushedId.get(), prevCrc, dataCrc, s.span, s.start, session, uuidHash);
                batchCrc[i] = prevCrc;
            }
            cache.write(devStart, ring.duplicate().limit(memEnd).position(memStart), 0);
            lastHeaderCrc = prevCrc;
            lock.lock();
            try {
                for (int i = 0; i < n; i++) {
                    Sealed s = batch[i];
                    if (s.marker()) {
                        completedSid = Math.max(completedSid, s.sid);
                        writtenEnd = Math.max(writtenEnd, (s.sid + 1) * SB);
                        continue;
                    }
                    lastWrittenId = s.id;
                    if (segSid[phys(s.sid)] == s.sid) {
                        segLastCrc[phys(s.sid)] = batchCrc[i];
                    }
                    writtenEnd = Math.max(writtenEnd, s.sid * SB + s.start + s.span);
                    if (s.start + s.span >= SB - 1) {
                        segmentsWritten.increment();
                    }
                }
                signal();
            } finally {
                lock.unlock();
            }
            return true;
        } catch (IOException e) {
            fail(e);
            throw e;
        } finally {
            Arrays.fill(batch, 0, n, null);
        }
    }

    // ------------------------------------------------------------------------------------------
    // flush

    @Override
    public void flush() throws IOException {
        checkFailure();
        long t0 = clock.nanoTime();
        long target;
        long bypassSeq;
        long deadline = deadline();
        lock.lock();
        try {
            seal();
            target = lastSealedId;
            bypassSeq = bypassCompleted;
            while (lastWrittenId < target) {
                checkFailure();
                await(deadline, "the log to be written");
            }
        } finally {
            lock.unlock();
        }
        groupFlush(target, bypassSeq, deadline);
        flushes.increment();
        flushLatency.recordSince(t0);
    }

    /** Seals the open record and makes the log durable on the cache device (not the backing device). */
    private void flushLog(long deadline) throws IOException {
        long target;
        lock.lock();
        try {
            checkFailure();
            seal();
            target = lastSealedId;
            while (lastWrittenId < target) {
                await(deadline, "the log to be written");
            }
        } finally {
            lock.unlock();
        }
        if (lastFlushedId.get() < target) {
            groupFlush(target, Long.MIN_VALUE, deadline);
        }
    }

    private void groupFlush(long target, long bypassSeq, long deadline) throws IOException {
        if (lastFlushedId.get() >= target && backingFlushedSeq >= bypassSeq) {
            return;
        }
        groupCommit.commit(() -> lastFlushedId.get() >= target && backingFlushedSeq >= bypassSeq, () -> {
            long b;
            lock.lock();
            try {
                b = bypassCompleted;
            } finally {
                lock.unlock();
            }
            flushCacheDevice();
            if (bypassSeq != Long.MIN_VALUE && b > backingFlushedSeq) {
                backing.flush();
                backingFlushedSeq = b;
            }
        }, deadline);
    }

    /** Flushes the cache device; every record written before is durable afterwards. */
    private void flushCacheDevice() throws IOException {
        long w;
        lock.lock();
        try {
            w = lastWrittenId;
        } finally {
            lock.unlock();
        }
        try {
            cache.flush();
        } catch (IOException e) {
            fail(e);
            throw e;
        }
        cacheFlushes.increment();
        lastFlushedId.accumulateAndGet(w, Math::max);
        lastCacheFlushNanos = clock.nanoTime();
    }

    // ------------------------------------------------------------------------------------------
    // read path

    private static final byte MISS = 0;
    private static final byte DEV = 1;
    private static final byte DEVP = 2;
    private static final byte BUF = 3;
    private static final byte BUFP = 4;

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        int len = dst.remaining();
        Requests.check(size, offset, len);
        checkFailure();
        if (len == 0) {
            return;
        }
        long t0 = clock.nanoTime();
        long end = offset + len;
        long first = offset >>> Layout.BLOCK_SHIFT;
        int n = (int) (((end - 1) >>> Layout.BLOCK_SHIFT) - first + 1);
        byte[] kind = new byte[n];
        int[] locs = new int[n];
        int[] gens = new int[n];
        int[] vbits = new int[n];
        byte[][] partials = null;
        int base = dst.position();
        Tunables rt = tunables;
        boolean stage = readCache.wants(offset, len, rt.readCacheThreshold(), rt.writeAround());
        long snap = 0;
        for (int attempt = 0;; attempt++) {
            boolean anyDevice = false;
            boolean anyBacking = false;
            lock.lock();
            try {
                checkFailure();
                if (attempt == 0 && stage) {
                    // before any backing read: a write that lands after this stamp voids the staged copy
                    snap = readCache.snapshot();
                }
                for (int i = 0; i < n; i++) {
                    long b = first + i;
                    int s0 = i == 0 ? (int) ((offset & (BS - 1)) >>> 9) : 0;
                    int s1 = i == n - 1 ? (int) ((((end - 1) & (BS - 1)) >>> 9) + 1) : Layout.SECTORS_PER_BLOCK;
                    int need = ((1 << (s1 - s0)) - 1) << s0;
                    int loc = map.get(b);
                    if (loc < 0) {
                        kind[i] = MISS;
                        anyBacking = true;
                        continue;
                    }
                    int bits = map.valid(loc);
                    boolean full = (need & ~bits) == 0;
                    locs[i] = loc;
                    vbits[i] = bits;
                    if (inBuffer(loc)) {
                        ByteBuffer buf = bufferOf(loc);
                        if (full) {
                            kind[i] = BUF;
                            dst.put(base + dstIndex(b, s0, offset), buf, (loc % SB) * BS + (s0 << 9), (s1 - s0) << 9);
                        } else {
                            kind[i] = BUFP;
                            anyBacking = true;
                            if (partials == null) {
                                partials = new byte[n][];
                            }
                            byte[] p = partials[i] == null ? new byte[BS] : partials[i];
                            partials[i] = p;
                            buf.get((loc % SB) * BS, p, 0, BS);
                        }
                    } else {
                        kind[i] = full ? DEV : DEVP;
                        gens[i] = segGen[loc / SB];
                        anyDevice = true;
                        if (!full) {
                            anyBacking = true;
                        }
                    }
                }
            } finally {
                lock.unlock();
            }
            // backing runs: blocks that need the backing device at all
            if (anyBacking) {
                int i = 0;
                while (i < n) {
                    if (kind[i] == MISS || kind[i] == DEVP || kind[i] == BUFP) {
                        int j = i;
                        while (j + 1 < n && (kind[j + 1] == MISS || kind[j + 1] == DEVP || kind[j + 1] == BUFP)) {
                            j++;
                        }
                        long from = Math.max(offset, (first + i) << Layout.BLOCK_SHIFT);
                        long to = Math.min(end, (first + j + 1) << Layout.BLOCK_SHIFT);
                        busy.begin();
                        try {
                            backing.read(from, dst.duplicate().position(base + (int) (from - offset))
                                    .limit(base + (int) (to - offset)));
                        } finally {
                            busy.end();
                        }
                        i = j + 1;
                    } else {
                        i++;
                    }
                }
            }
            // cache device runs: consecutive locations
            ByteBuffer tmp = null;
            if (anyDevice) {
                int i = 0;
                while (i < n) {
                    if (kind[i] == DEV) {
                        int j = i;
                        while (j + 1 < n && kind[j + 1] == DEV && locs[j + 1] == locs[j] + 1
                                && locs[j + 1] / SB == locs[i] / SB) {
                            j++;
                        }
                        long from = Math.max(offset, (first + i) << Layout.BLOCK_SHIFT);
                        long to = Math.min(end, (first + j + 1) << Layout.BLOCK_SHIFT);
                        long devOff = locOffset(locs[i]) + (from - ((first + i) << Layout.BLOCK_SHIFT));
                        cache.read(devOff, dst.duplicate().position(base + (int) (from - offset))
                                .limit(base + (int) (to - offset)));
                        i = j + 1;
                    } else if (kind[i] == DEVP) {
                        if (tmp == null) {
                            tmp = ByteBuffer.allocate(BS);
                        }
                        tmp.clear();
                        cache.read(locOffset(locs[i]), tmp);
                        overlay(dst, base, offset, end, first + i, tmp, vbits[i]);
                        i++;
                    } else {
                        i++;
                    }
                }
            }
            if (partials != null) {
                for (int i = 0; i < n; i++) {
                    if (kind[i] == BUFP) {
                        overlay(dst, base, offset, end, first + i, ByteBuffer.wrap(partials[i]), vbits[i]);
                    }
                }
            }
            // validate: no location read from the device was reused meanwhile
            boolean ok = true;
            if (anyDevice) {
                lock.lock();
                try {
                    for (int i = 0; i < n && ok; i++) {
                        if ((kind[i] == DEV || kind[i] == DEVP) && segGen[locs[i] / SB] != gens[i]) {
                            ok = false;
                        }
                    }
                } finally {
                    lock.unlock();
                }
            }
            if (ok) {
                break;
            }
            if (attempt > 1000) {
                throw new DeviceTimeoutException(name, offset, "read kept racing with log reuse");
            }
        }
        if (stage) {
            stageMisses(kind, first, n, offset, end, dst, base, snap);
        }
        for (int i = 0; i < n; i++) {
            switch (kind[i]) {
                case DEV, BUF -> readHits.increment();
                case MISS -> readMisses.increment();
                default -> readPartial.increment();
            }
        }
        dst.position(base + len);
        busy.op();
        readLatency.recordSince(t0);
    }

    /**
     * Read caching: stages the full blocks this read got from the backing device (kind MISS) for
     * the injector, with the stamp taken before the backing read.
     */
    private void stageMisses(byte[] kind, long first, int n, long offset, long end, ByteBuffer dst, int base, long snap) {
        boolean any = false;
        lock.lock();
        try {
            if (failure != null || closed || suspended) {
                return;
            }
            for (int i = 0; i < n; i++) {
                long bOff = (first + i) << Layout.BLOCK_SHIFT;
                if (kind[i] == MISS && bOff >= offset && bOff + BS <= end) {
                    any |= readCache.stage(first + i, dst, base + (int) (bOff - offset), snap);
                }
            }
            if (any) {
                injectWake.signal();
            }
        } finally {
            lock.unlock();
        }
    }

    private static int dstIndex(long block, int s0, long offset) {
        return (int) ((block << Layout.BLOCK_SHIFT) + (s0 << 9) - offset);
    }

    /** Copies the valid sectors of {@code block} (held in {@code src} from index 0) that the read covers. */
    private static void overlay(ByteBuffer dst, int base, long offset, long end, long block, ByteBuffer src, int bits) {
        long bOff = block << Layout.BLOCK_SHIFT;
        for (int s = 0; s < Layout.SECTORS_PER_BLOCK; s++) {
            if ((bits & (1 << s)) == 0) {
                continue;
            }
            long so = bOff + (s << 9);
            if (so < offset || so + 512 > end) {
                continue;
            }
            dst.put(base + (int) (so - offset), src, s << 9, 512);
        }
    }

    // ------------------------------------------------------------------------------------------
    // discard, write zeroes

    @Override
    public void discard(long offset, long length) throws IOException {
        Requests.check(size, offset, length);
        checkFailure();
        long a = (offset + BS - 1) & -BS;
        long b = (offset + length) & -BS;
        if (a < b) {
            // cached copies are dropped like a bypassed write's: a clean copy kept after the backing
            // device discarded the range would no longer equal it, and dropping it later (eviction,
            // a bypass) would change what the block reads without a write
            bypass(a >>> Layout.BLOCK_SHIFT, b >>> Layout.BLOCK_SHIFT, true, () -> backing.discard(a, b - a));
        }
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws IOException {
        Requests.check(size, offset, length);
        checkFailure();
        if ((flags & FAST_ZERO) != 0 && !backing.canFastZero()) {
            throw new FastZeroUnsupportedException(name);
        }
        long a = (offset + BS - 1) & -BS;
        long b = (offset + length) & -BS;
        if (length >= 64 * 1024 && a < b) {
            if (a > offset) {
                zeroCached(offset, a - offset);
            }
            int f = flags & (NO_HOLE | FAST_ZERO);
            bypass(a >>> Layout.BLOCK_SHIFT, b >>> Layout.BLOCK_SHIFT, true, () -> backing.writeZeroes(a, b - a, f));
            if (b < offset + length) {
                zeroCached(b, offset + length - b);
            }
        } else if (length > 0) {
            zeroCached(offset, length);
        }
        if ((flags & FUA) != 0) {
            flush();
        }
    }

    private void zeroCached(long offset, long length) throws IOException {
        ByteBuffer z = ByteBuffer.allocate((int) Math.min(length, 64 * 1024));
        for (long o = offset; o < offset + length; o += z.capacity()) {
            writeCached(o, z.clear().limit((int) Math.min(z.capacity(), offset + length - o)));
        }
    }

    @Override
    public boolean canFastZero() {
        return backing.canFastZero();
    }

    // ------------------------------------------------------------------------------------------
    // writeback

    /** Blocks per merged writeback write (1 MiB). */
    static final int MAX_RUN = 256;
    private final WritebackBatcher batcher;
    private final WritebackBatcher.Backing backingWriter = this::writeBacking;

    private void writeBacking(long offset, ByteBuffer src) throws IOException {
        backing.write(offset, src, 0);
    }
    private ByteBuffer wbData;
    private long[] wbKeys = new long[0];
    private int[] wbLocs = new int[0];
    private int[] wbValid = new int[0];
    private long wbLastNanos;

    /**
     * Writes back one batch of the oldest complete segments: dirty blocks sorted by backing
     * offset, adjacent ones merged into large writes, the backing device flushed, then the
     * segments counted as written back. Returns false when there was nothing to do (or the
     * controller said wait).
     */
    public boolean writebackRunOnce() throws IOException {
        Tunables t = tunables;
        boolean urgent;
        long deadline = deadline();
        lock.lock();
        try {
            if (failure != null || closed) {
                return false;
            }
            if (lwb >= completedSid) {
                if (forceWriteback) {
                    if (dirty > 0 && headSid > lwb && (recStart < SB ? recEntries > 0 || recStart > 0 : true)) {
                        pad();
                        return true;
                    }
                    if (dirty == 0) {
                        forceWriteback = false;
                    }
                }
                return false;
            }
            urgent = forceWriteback || reclaimWaiters > 0 || (headSid + 2L * nb - nSeg > lwb);
        } finally {
            lock.unlock();
        }
        int segs = t.maxBatchedWriteback();
        if (!urgent) {
            long[] sample = busy.sample();
            int allowance;
            lock.lock();
            long d;
            try {
                d = dirty;
            } finally {
                lock.unlock();
            }
            // one session per bound controller (ControllerBinding); writeboost's own threshold is
            // the modulator's tunable
            allowance = controller.decide(t.controller(), controllerTunables(t),
                    new WritebackController.CacheLoad(clock.nanoTime(), d, (long) nSeg * Layout.MAX_DATA, BS,
                            (int) sample[0], 0, sample[1], sample[2], segs * Layout.MAX_DATA)).blocks();
            if (allowance <= 0) {
                return false;
            }
            segs = (int) Math.max(1, Math.min(segs, (allowance + Layout.MAX_DATA - 1L) / Layout.MAX_DATA));
        }
        int capacity = segs * Layout.MAX_DATA;
        if (wbKeys.length < capacity) {
            wbKeys = new long[capacity];
            wbLocs = new int[capacity];
        }
        long from;
        long to;
        int count;
        lock.lock();
        try {
            collect:
            while (true) {
                from = lwb + 1;
                to = Math.min(completedSid, lwb + segs);
                count = 0;
                for (long sid = from; sid <= to; sid++) {
                    int p = phys(sid);
                    int segStart = count;
                    for (int b = 1; b < SB; b++) {
                        int loc = p * SB + b;
                        long owner = map.owner(loc);
                        if (owner >= 0 && !map.clean(loc)) {
                            if (bypassOverlaps(owner)) {
                                // a bypass is writing this block: write back the segments before
                                // this one, or wait for it if this is the oldest. A bypass waits
                                // only for its own backing I/O while the copies it found are in
                                // the map (it drops them before it waits for log space), so this
                                // wait ends; only a copy a concurrent cached write puts into its
                                // range later can make both wait (until io_timeout_ms), and that
                                // copy lives in a segment newer than the one the bypass waits for
                                if (sid > from) {
                                    to = sid - 1;
                                    count = segStart;
                                    break collect;
                                }
                                await(deadline, "a bypass write before writeback");
                                continue collect;
                            }
                            wbLocs[count] = loc;
                            wbKeys[count] = owner;
                            count++;
                        }
                    }
                }
                break;
            }
            if (wbBlocks.length < count) {
                wbBlocks = new long[Math.max(count, 16)];
            }
            System.arraycopy(wbKeys, 0, wbBlocks, 0, count);
            Arrays.sort(wbBlocks, 0, count);
            wbCount = count;
        } finally {
            lock.unlock();
        }
        // write back only what the cache device holds durably: otherwise a crash could leave the
        // backing device with writes that the recovered log no longer has (not a prefix)
        long lastOfBatch;
        lock.lock();
        try {
            lastOfBatch = segLastId[phys(to)];
        } finally {
            lock.unlock();
        }
        if (lastFlushedId.get() < lastOfBatch) {
            try {
                flushCacheDevice();
            } catch (IOException e) {
                lock.lock();
                try {
                    wbCount = 0;
                    signal();
                } finally {
                    lock.unlock();
                }
                throw e;
            }
        }
        if (wbData == null || wbData.capacity() < count * BS) {
            wbData = Buffers.aligned(Math.max(count, 64) * BS);
        }
        try {
            writeBack(count);
            backing.flush();
        } catch (IOException e) {
            lastWritebackError = e.getMessage();
            lock.lock();
            try {
                wbCount = 0;
                signal();
            } finally {
                lock.unlock();
            }
            throw e;
        }
        long now = clock.nanoTime();
        lock.lock();
        try {
            long still = 0;
            for (long sid = from; sid <= to; sid++) {
                int p = phys(sid);
                for (int b = 1; b < SB; b++) {
                    int loc = p * SB + b;
                    if (map.owner(loc) >= 0 && !map.clean(loc)) {
                        still++;
                    }
                }
            }
            dirty -= still;
            lwb = to;
            lwbAnchorId = segLastId[phys(to)];
            lwbAnchorCrc = segLastCrc[phys(to)];
            wbCount = 0;
            if (dirty == 0 && forceWriteback && lwb >= headSid) {
                forceWriteback = false;
            }
            signal();
        } finally {
            lock.unlock();
        }
        writtenBackBlocks.add(count);
        writebackBatches.increment();
        long span = now - wbLastNanos;
        if (wbLastNanos != 0 && span > 0) {
            wbRateBlocksPerSec = count * 1_000_000_000L / span;
        }
        wbLastNanos = now;
        lastWritebackError = "";
        return true;
    }

    private void writeBack(int count) throws IOException {
        // read the dirty blocks: runs of consecutive locations, into wbData[i * 4096]
        int i = 0;
        while (i < count) {
            int j = i;
            while (j + 1 < count && wbLocs[j + 1] == wbLocs[j] + 1 && wbLocs[j + 1] / SB == wbLocs[i] / SB) {
                j++;
            }
            cache.read(locOffset(wbLocs[i]), wbData.duplicate().position(i * BS).limit((j + 1) * BS));
            i = j + 1;
        }
        if (wbValid.length < count) {
            wbValid = new int[Math.max(count, 64)];
        }
        lock.lock();
        try {
            for (int k = 0; k < count; k++) {
                wbValid[k] = map.owner(wbLocs[k]) == wbKeys[k] ? map.valid(wbLocs[k]) : 0;
            }
        } finally {
            lock.unlock();
        }
        writebackWrites.add(batcher.write(count, wbKeys, wbValid, wbData, backingWriter));
    }

    private Tunables controllerTunablesOf;
    private Map<String, String> controllerTunables;

    /** The controller's tunables as set on this cache (writeback task only; cached per snapshot). */
    private Map<String, String> controllerTunables(Tunables t) {
        if (t != controllerTunablesOf) {
            controllerTunables = Map.of(Tunables.WRITEBACK_THRESHOLD, Integer.toString(t.writebackThreshold()));
            controllerTunablesOf = t;
        }
        return controllerTunables;
    }

    // ------------------------------------------------------------------------------------------
    // superblock record

    /** Writes the superblock record when it is due or a writer needs a segment reclaimed. */
    public boolean recordUpdaterRunOnce() throws IOException {
        Tunables t = tunables;
        long needed;
        boolean due;
        lock.lock();
        try {
            if (failure != null || closed) {
                return false;
            }
            needed = recordWanted > reclaimSid ? recordWanted : Long.MIN_VALUE;
            long now = clock.nanoTime();
            due = t.updateRecordInterval() > 0 && lwb > recordedLwb
                    && now - lastRecordUpdateNanos >= TimeUnit.SECONDS.toNanos(t.updateRecordInterval());
            // the durable mark: once the log has gone quiet after a flush, record how far it is
            // durable. Otherwise the last records flushed are referred to by no later header, and
            // recovery after a crash must read their data to check it (the whole log after a fill
            // ended by one flush); with the mark it reads headers only
            due |= recEntries == 0 && lastSealedId == lastWrittenId && lastWrittenId > recordedDurable
                    && lastFlushedId.get() >= lastWrittenId && now - lastCacheFlushNanos >= DURABLE_MARK_QUIET_NANOS;
        } finally {
            lock.unlock();
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
            if (!recordLock.tryLock(tunables.ioTimeoutMillis(), TimeUnit.MILLISECONDS)) {
                throw new DeviceTimeoutException(name, -1, "timed out waiting for a superblock record update");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DeviceIOException(name, -1, "interrupted");
        }
        try {
            // every record sealed so far (INVALIDATE entries of blocks in written-back segments
            // among them) is written before the record that keeps those segments warm
            long deadline = deadline();
            // segments holding copies dropped by a bypass whose INVALIDATE is not logged yet (or
            // was logged after the seal below) must not become clean in this record
            long unlogged;
            lock.lock();
            try {
                unlogged = oldestUnloggedDrop();
                seal();
                long sealed = lastSealedId;
                while (lastWrittenId < sealed) {
                    checkFailure();
                    await(deadline, "the log to be written before a superblock record");
                }
            } finally {
                lock.unlock();
            }
            SuperblockRecord r;
            long newLwb;
            long newReclaim;
            long rid;
            int rcrc;
            long anchorId;
            int anchorCrc;
            lock.lock();
            try {
                newLwb = lwb;
                long ahead = headSid + nb + 2L - nSeg;
                newReclaim = Math.max(reclaimSid, Math.min(lwb, Math.max(requiredReclaim, ahead)));
                unlogged = Math.min(unlogged, oldestUnloggedDrop());
                if (unlogged != Long.MAX_VALUE) {
                    newLwb = Math.min(newLwb, Math.max(newReclaim, unlogged - 1));
                }
                if (newLwb == recordedLwb && newReclaim == reclaimSid && lastWrittenId <= recordedDurable) {
                    return false;
                }
                rid = reclaimAnchorId;
                rcrc = reclaimAnchorCrc;
                if (newReclaim != reclaimSid) {
                    rid = segLastId[phys(newReclaim)];
                    rcrc = segLastCrc[phys(newReclaim)];
                }
                anchorId = lwbAnchorId;
                anchorCrc = lwbAnchorCrc;
                if (newLwb != lwb) {
                    // capped: anchor at the capped segment (complete, and not reused unless reclaimed)
                    anchorId = newLwb == newReclaim ? rid : segLastId[phys(newLwb)];
                    anchorCrc = newLwb == newReclaim ? rcrc : segLastCrc[phys(newLwb)];
                }
            } finally {
                lock.unlock();
            }
            flushCacheDevice();
            r = new SuperblockRecord(recordSeq + 1, newLwb, anchorId, anchorCrc, newReclaim, rid, rcrc, uuidHash,
                    lastFlushedId.get(), session);
            try {
                cache.write(r.slotOffset(), r.encode(), 0);
            } catch (IOException e) {
                fail(e);
                throw e;
            }
            flushCacheDevice();
            lock.lock();
            try {
                recordSeq = r.sequence();
                recordedDurable = r.durableId();
                recordedLwb = r.writtenBackSegment();
                reclaimSid = r.reclaimedSegment();
                reclaimAnchorId = r.reclaimedLastRecordId();
                reclaimAnchorCrc = r.reclaimedLastCrc();
                // a drop whose segment is reclaimed can no longer come back (left by a failed bypass)
                unloggedDrops.removeIf(d -> d[1] <= reclaimSid);
                lastRecordUpdateNanos = clock.nanoTime();
                signal();
            } finally {
                lock.unlock();
            }
            recordUpdates.increment();
            return true;
        } finally {
            recordLock.unlock();
        }
    }

    /** The periodic data sync: seals and flushes the log every {@code sync_data_interval} seconds. */
    public boolean syncRunOnce() throws IOException {
        Tunables t = tunables;
        if (t.syncDataInterval() <= 0) {
            return false;
        }
        long now = clock.nanoTime();
        boolean due;
        lock.lock();
        try {
            due = failure == null && !closed && now - lastSyncNanos >= TimeUnit.SECONDS.toNanos(t.syncDataInterval());
            if (due) {
                lastSyncNanos = now;
            }
        } finally {
            lock.unlock();
        }
        if (!due) {
            return false;
        }
        flush();
        return true;
    }

    // ------------------------------------------------------------------------------------------
    // lifecycle, tunables, status

    @Override
    public void message(String key, String value) throws IOException {
        switch (key) {
            case "writeback":
                if (!"all".equals(value)) {
                    throw new InvalidArgumentException("writeboost: writeback=" + value + " is not an action; use writeback=all");
                }
                lock.lock();
                try {
                    checkFailure();
                    forceWriteback = true;
                    signal();
                } finally {
                    lock.unlock();
                }
                return;
            case "invalidate":
                if (!"all".equals(value)) {
                    throw new InvalidArgumentException("writeboost: invalidate=" + value + " is not an action; use invalidate=all");
                }
                invalidateAll();
                return;
            default:
                tunables = tunables.with(key, value);
                lock.lock();
                try {
                    signal();
                } finally {
                    lock.unlock();
                }
                activateReadCache();
        }
    }

    /**
     * Makes the on-disk cache empty (the cache must be clean): the head segment is closed and
     * written back, and a superblock record marks everything reclaimed, so that nothing is
     * replayed from the cache device later. Used before the cache is detached (with write_around
     * on, so that nothing new is cached).
     */
    public void invalidateAll() throws IOException {
        long target;
        lock.lock();
        try {
            checkFailure();
            if (dirty > 0) {
                throw new InvalidArgumentException("writeboost: the cache still holds " + dirty
                        + " dirty blocks; write them back first (writeback=all)");
            }
            pad();
            target = headSid;
            forceWriteback = true;
            signal();
        } finally {
            lock.unlock();
        }
        drain(target);
        updateRecord(target);
    }

    /** Writes back everything now; returns when no block is dirty (at some moment). */
    public void writebackAll() throws IOException {
        drain(Long.MIN_VALUE);
    }

    /** Writes back until nothing is dirty and (if {@code segment} is given) that segment is written back. */
    private void drain(long segment) throws IOException {
        long deadline = deadline();
        lock.lock();
        try {
            forceWriteback = true;
            signal();
        } finally {
            lock.unlock();
        }
        while (true) {
            boolean daemon = writeback.running();
            lock.lock();
            try {
                checkFailure();
                if (dirty == 0 && lwb >= segment) {
                    return;
                }
                if (daemon) {
                    forceWriteback = true;
                    await(deadline, "writeback of all dirty blocks");
                    continue;
                }
            } finally {
                lock.unlock();
            }
            if (!writebackRunOnce()) {
                lock.lock();
                try {
                    forceWriteback = true;
                    await(deadline, "writeback of all dirty blocks");
                } finally {
                    lock.unlock();
                }
            }
        }
    }

    @Override
    public void suspend() throws IOException {
        lock.lock();
        try {
            if (suspended || closed) {
                return;
            }
        } finally {
            lock.unlock();
        }
        IOException err = null;
        stopInjector(); // nothing enters the log after the flush below
        try {
            flush();
            if (tunables.writeAround()) {
                // a cache being drained (cache:detach, a swap to another policy) is suspended or
                // closed with client I/O quiesced: sub-block writes are still cached under
                // write_around, so whatever arrived since the last writeback=all / invalidate=all
                // must reach the backing device now, and nothing may stay warm in the log
                writebackAll();
                invalidateAll();
            }
        } catch (IOException e) {
            err = e;
        }
        stopDaemons(false);
        if (err == null) {
            try {
                updateRecord(Long.MIN_VALUE);
            } catch (IOException e) {
                err = e;
            }
        }
        flusher.stop();
        lock.lock();
        try {
            suspended = true;
        } finally {
            lock.unlock();
        }
        if (err != null) {
            throw err;
        }
    }

    @Override
    public void resume() throws IOException {
        lock.lock();
        try {
            if (!suspended || closed) {
                return;
            }
            suspended = false;
        } finally {
            lock.unlock();
        }
        startDaemons();
    }

    @Override
    public void close() throws IOException {
        IOException err = null;
        try {
            suspend();
        } catch (IOException e) {
            err = e;
        } finally {
            stopDaemons(true);
            controller.close();
            lock.lock();
            try {
                closed = true;
                signal();
            } finally {
                lock.unlock();
            }
        }
        if (err != null) {
            throw err;
        }
    }

    /** The tunables in effect. */
    public Tunables tunables() {
        return tunables;
    }

    /** What recovery found when the cache was opened. */
    public Recovery.Result recovered() {
        return recovered;
    }

    /** Heap bytes of the index and per-location arrays (for the bytes-per-block figure). */
    public long indexHeapBytes() {
        return map.heapBytes();
    }

    // ---- the cache API ----

    private static final Set<CacheMode> MODES = Set.of(CacheMode.WRITEBACK, CacheMode.WRITEAROUND);

    @Override
    public CacheMode mode() {
        return tunables.writeAround() ? CacheMode.WRITEAROUND : CacheMode.WRITEBACK;
    }

    @Override
    public Set<CacheMode> supportedModes() {
        return MODES;
    }

    @Override
    public void setMode(CacheMode mode) throws IOException {
        if (!MODES.contains(mode)) {
            throw new InvalidArgumentException("writeboost: mode " + mode.label()
                    + " is not supported; use writeback or writearound");
        }
        message(Tunables.WRITE_AROUND, Boolean.toString(mode == CacheMode.WRITEAROUND));
    }

    @Override
    public String authoritativeDeviceArgument() {
        return "backing";
    }

    @Override
    public String cacheDeviceArgument() {
        return "cache";
    }

    @Override
    public int cacheBlockSize() {
        return BS;
    }

    @Override
    public long capacityBlocks() {
        return (long) nSeg * Layout.MAX_DATA;
    }

    @Override
    public void writebackAll(WritebackProgress progress) throws IOException, InterruptedException {
        long stall = TimeUnit.MILLISECONDS.toNanos(tunables.ioTimeoutMillis());
        long start = dirtyBlocks();
        long best = start;
        long lastProgress = System.nanoTime();
        long lastReport = 0;
        while (true) {
            if (Thread.interrupted()) {
                throw new InterruptedException(name + ": writeback cancelled");
            }
            boolean daemon = writeback.running();
            long d;
            lock.lock();
            try {
                checkFailure();
                d = dirty;
                if (d > 0) {
                    forceWriteback = true;
                    signal();
                }
            } finally {
                lock.unlock();
            }
            long now = System.nanoTime();
            if (d == 0 || now - lastReport >= 500_000_000L) {
                progress.update(d, Math.max(0, start - d));
                lastReport = now;
            }
            if (d == 0) {
                return;
            }
            if (d < best) {
                best = d;
                lastProgress = now;
            } else if (now - lastProgress > stall) {
                throw new DeviceTimeoutException(name, -1, "writeback made no progress for "
                        + tunables.ioTimeoutMillis() / 1000 + " s (" + d + " dirty blocks left)");
            }
            if (daemon || !writebackRunOnce()) {
                lock.lock();
                try {
                    changed.await(200, TimeUnit.MILLISECONDS);
                } finally {
                    lock.unlock();
                }
            }
        }
    }

    @Override
    public long cachedBlocks() {
        lock.lock();
        try {
            return map.size();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public long dirtyBlocks() {
        lock.lock();
        try {
            return dirty;
        } finally {
            lock.unlock();
        }
    }

    /** Names of the threads this target runs (for tests). */
    public List<String> runningDaemons() {
        List<String> l = new ArrayList<>();
        for (Daemon d : List.of(flusher, writeback, recordUpdater, dataSync, injector)) {
            if (d.running()) {
                l.add(d.name());
            }
        }
        return l;
    }

    @Override
    public Map<String, String> status() {
        Map<String, String> m = new LinkedHashMap<>();
        long lwbS;
        long head;
        long d;
        int cached;
        long used;
        String state;
        lock.lock();
        try {
            lwbS = lwb;
            head = headSid;
            d = dirty;
            cached = map.size();
            used = Math.max(0, Math.min(nSeg, head - reclaimSid));
            state = failure != null ? "failed" : closed ? "closed" : suspended ? "suspended" : "active";
        } finally {
            lock.unlock();
        }
        m.put("cache_state", state);
        readCounters.render(m);
        m.put("read_cache_staged", Long.toString(readCache.staged.sum()));
        m.put("read_cache_injected", Long.toString(readCache.injected.sum()));
        m.put("read_cache_cancelled", Long.toString(readCache.cancelled.sum()));
        m.put("read_cache_dropped", Long.toString(readCache.dropped.sum()));
        m.put("read_cache_sequential", Long.toString(readCache.sequential.sum()));
        writeCounters.render(m);
        m.put("dirty_blocks", Long.toString(d));
        m.put("cached_blocks", Integer.toString(cached));
        m.put("capacity_blocks", Long.toString((long) nSeg * Layout.MAX_DATA));
        m.put("segments_used", Long.toString(used));
        m.put("segments_total", Integer.toString(nSeg));
        m.put("head_segment", Long.toString(head));
        m.put("written_back_segment", Long.toString(lwbS));
        writebackCounters.render(m);
        m.put("writeback_rate_blocks_per_s", Long.toString(wbRateBlocksPerSec));
        m.put("writeback_error", lastWritebackError);
        logCounters.render(m);
        readLatency.render(m);
        writeLatency.render(m);
        flushLatency.render(m);
        m.putAll(tunables.asMap());
        m.putAll(controller.status());
        if (failure != null) {
            m.put("error", failure.getMessage());
        }
        return m;
    }

    @Override
    public String toString() {
        return "writeboost(" + name + ")";
    }
}
