package dev.strata.cache.writeboost.internal.io;

import dev.strata.api.BlockDevice;
import dev.strata.api.CacheMode;
import dev.strata.api.CacheTarget;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.WritebackController;
import dev.strata.cache.support.time.Clock;
import dev.strata.cache.writeboost.internal.format.Layout;
import dev.strata.cache.writeboost.internal.format.Superblock;
import dev.strata.cache.writeboost.internal.format.SuperblockRecord;
import dev.strata.cache.writeboost.internal.recovery.Recovery;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The writeboost target: a log-structured write cache in front of a backing device. This class is
 * the facade: it builds the parts (each with one job, all on one {@link LogState}, whose comment
 * holds the log's locking and order rules), has {@link Daemons} run their tasks, and answers the
 * {@link CacheTarget} contract by delegating.
 * <ul>
 * <li>{@link WritePath}, {@link Bypass}, {@link ReadPath}: client I/O;</li>
 * <li>{@link LogHead}: room in the open record, the next segment;</li>
 * <li>{@link LogFlush}: FLUSH/FUA with group commit;</li>
 * <li>tasks with {@code runOnce()}: {@link Flusher}, {@link Writeback}, {@link RecordUpdater},
 * {@link DataSync}, {@link Injector}, run as threads by {@link Daemons};</li>
 * <li>{@link CacheOpener}: device checks, format, recovery; {@link Stats}: counters and latencies.</li>
 * </ul>
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
            boolean backgroundSync, boolean sortedWriteback, boolean backgroundReadCache, int flushers) {
        /**
         * Flusher threads by default: three log writes in flight (see {@link Flusher}). With two,
         * a flusher waiting for a CPU after its write completed (8 writers on 2 cores) left the
         * device one write short; three read 0.98 of the cache file's sequential rate in the
         * in-process bench against 0.94 with two (docs/benchmarks.md, eleventh session).
         */
        public static final int FLUSHERS = 3;

        /** {@code buffers} chosen by the cache's size at open ({@code CacheOpener.autoBuffers}). */
        public static final int AUTO_BUFFERS = 0;

        public static Options defaults() {
            return new Options(Clock.SYSTEM, AUTO_BUFFERS, true, true, true, true, true, FLUSHERS);
        }

        public Options withBuffers(int n) {
            return new Options(clock, n, backgroundWriteback, backgroundRecordUpdates, backgroundSync, sortedWriteback,
                    backgroundReadCache, flushers);
        }

        public Options manual() {
            return new Options(clock, buffers, false, false, false, sortedWriteback, false, flushers);
        }

        public Options withClock(Clock c) {
            return new Options(c, buffers, backgroundWriteback, backgroundRecordUpdates, backgroundSync, sortedWriteback,
                    backgroundReadCache, flushers);
        }

        public Options unsorted() {
            return new Options(clock, buffers, backgroundWriteback, backgroundRecordUpdates, backgroundSync, false,
                    backgroundReadCache, flushers);
        }

        public Options withBackgroundWriteback(boolean on) {
            return new Options(clock, buffers, on, backgroundRecordUpdates, backgroundSync, sortedWriteback,
                    backgroundReadCache, flushers);
        }

        public Options withBackgroundReadCache(boolean on) {
            return new Options(clock, buffers, backgroundWriteback, backgroundRecordUpdates, backgroundSync,
                    sortedWriteback, on, flushers);
        }

        /** {@code n} flusher threads, so at most {@code n} log writes in flight (1: one at a time). */
        public Options withFlushers(int n) {
            return new Options(clock, buffers, backgroundWriteback, backgroundRecordUpdates, backgroundSync,
                    sortedWriteback, backgroundReadCache, n);
        }
    }

    final Parts parts = new Parts();
    private final LogState log;
    private final Stats stats;
    private final Options options;
    private final Recovery.Result recovered;

    /** The threads running the tasks. */
    private final Daemons daemons;
    private final Messages messages;

    /**
     * Opens (formatting a blank device, or any device when {@code format} is true and it does not
     * hold a valid writeboost cache for this backing device) and recovers a cache.
     *
     * @throws InvalidArgumentException for unusable devices; nothing has been written then
     */
    public static WriteboostCache open(String name, BlockDevice backing, BlockDevice cache, boolean format,
            Tunables tunables, Options options, Function<String, WritebackController> controllers)
            throws IOException {
        return CacheOpener.open(name, backing, cache, format, tunables, options, controllers, null);
    }

    /**
     * As {@link #open(String, BlockDevice, BlockDevice, boolean, Tunables, Options, Function)}, for a
     * backing device with an identity ({@code TargetContext.lowerDeviceId}): a cache formatted over
     * another backing device is refused unless {@code format} is true; a new cache records it.
     */
    public static WriteboostCache open(String name, BlockDevice backing, BlockDevice cache, boolean format,
            Tunables tunables, Options options, Function<String, WritebackController> controllers,
            String backingIdentity) throws IOException {
        return CacheOpener.open(name, backing, cache, format, tunables, options, controllers, backingIdentity);
    }

    WriteboostCache(String name, BlockDevice backing, BlockDevice cache, Superblock sb, SuperblockRecord rec,
            Tunables tunables, Options options, Function<String, WritebackController> controllers) throws IOException {
        this.options = options;
        this.log = new LogState(name, backing, cache, sb, options.buffers(), options.clock(), tunables);
        this.stats = new Stats(options.clock());
        parts.log = log;
        parts.stats = stats;
        Recovery.Result r = CacheOpener.recover(log, rec);
        this.recovered = r;
        parts.head = new LogHead(parts);
        parts.flush = new LogFlush(parts);
        parts.write = new WritePath(parts);
        parts.bypass = new Bypass(parts);
        parts.read = new ReadPath(parts);
        parts.flusher = new Flusher(parts, r.lastHeaderCrc(), Math.max(1, options.flushers()));
        parts.writeback = new Writeback(parts, controllers, options.sortedWriteback());
        parts.record = new RecordUpdater(parts);
        parts.sync = new DataSync(parts);
        parts.injector = new Injector(parts);
        this.messages = new Messages(parts);
        String dev = name == null ? "writeboost" : name;
        parts.daemons = new Daemons(parts, dev, options);
        this.daemons = parts.daemons;
        LOG.info("{}: recovered {} log records ({} dirty blocks, {} cached blocks; log ended by {}; {} bytes read)",
                dev, r.dirtyRecords(), log.dirty, log.map.size(), r.truncatedBy(), r.bytesRead());
        parts.injector.activateReadCache(); // the staging area, if read caching is on
        daemons.start();
    }

    // ------------------------------------------------------------------------------------------
    // Target: client I/O goes to the parts

    @Override
    public String type() {
        return "writeboost";
    }

    @Override
    public long size() {
        return log.size;
    }

    @Override
    public int blockSize() {
        return BS;
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        parts.write.write(offset, src, flags);
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        parts.read.read(offset, dst);
    }

    @Override
    public void flush() throws IOException {
        parts.flush.flush();
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        parts.write.discard(offset, length);
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws IOException {
        parts.write.writeZeroes(offset, length, flags);
    }

    @Override
    public boolean canFastZero() {
        return log.backing.canFastZero();
    }

    // ------------------------------------------------------------------------------------------
    // the tasks, one step each (tests drive them with the daemons off)

    /** One step of the flusher (see {@link Flusher}); false when there was nothing to write. */
    public boolean flusherRunOnce() throws IOException {
        return parts.flusher.flusherRunOnce();
    }

    /** One writeback batch (see {@link Writeback}); false when there was nothing to do. */
    public boolean writebackRunOnce() throws IOException {
        return parts.writeback.writebackRunOnce();
    }

    /** One step of the record updater (see {@link RecordUpdater}). */
    public boolean recordUpdaterRunOnce() throws IOException {
        return parts.record.recordUpdaterRunOnce();
    }

    /** Writes a superblock record now (see {@link RecordUpdater#updateRecord}). */
    public boolean updateRecord(long requiredReclaim) throws IOException {
        return parts.record.updateRecord(requiredReclaim);
    }

    /** One step of the periodic data sync (see {@link DataSync}). */
    public boolean syncRunOnce() throws IOException {
        return parts.sync.syncRunOnce();
    }

    /** One batch of the read-cache injector (see {@link Injector}). */
    public boolean injectorRunOnce() throws IOException {
        return parts.injector.injectorRunOnce();
    }

    /** Writers waiting for writeback to free log space now (a seam for tests). */
    int reclaimWaiters() {
        log.lock.lock();
        try {
            return log.reclaimWaiters;
        } finally {
            log.lock.unlock();
        }
    }

    /** The id of the last record written to the cache device (a seam for tests). */
    long lastWrittenId() {
        log.lock.lock();
        try {
            return log.lastWrittenId;
        } finally {
            log.lock.unlock();
        }
    }

    /** The number of log buffers (a seam for tests). */
    int buffers() {
        return log.nb;
    }

    /** The daemons' wake-up counter: one per signal of the log's condition (a seam for tests). */
    long events() {
        return log.events;
    }

    /** The flushers' wake-up counter: one per record or marker queued (a seam for tests). */
    long queuedEvents() {
        return log.queuedEvents;
    }

    /** Sets the hook run between a write's reservation and its copy (a seam for tests). */
    void beforeCopy(Runnable hook) {
        parts.write.beforeCopy = hook;
    }

    /** Sets the hook a writeback batch runs between its urgency and its collection (a seam for tests). */
    void beforeCollect(java.util.function.Consumer<Boolean> hook) {
        parts.writeback.beforeCollect = hook;
    }

    /** How often a reader, writer or the flusher waited for a copy in flight (a seam for tests). */
    long copyWaits() {
        return log.copyWaits.sum();
    }

    /** Whether the daemons are being stopped (writeback abandons its batch); a seam for tests. */
    boolean writebackStopRequested() {
        return log.stopWriteback;
    }

    @Override
    public void writebackAll(WritebackProgress progress) throws IOException, InterruptedException {
        parts.writeback.writebackAll(progress, daemons.writeback());
    }

    @Override
    public long cachedBlocks() {
        log.lock.lock();
        try {
            return log.map.size();
        } finally {
            log.lock.unlock();
        }
    }

    @Override
    public long dirtyBlocks() {
        log.lock.lock();
        try {
            return log.dirty;
        } finally {
            log.lock.unlock();
        }
    }

    /** Names of the threads this target runs (for tests). */
    public List<String> runningDaemons() {
        return daemons.running();
    }

    @Override
    public Map<String, String> status() {
        return StatusKeys.render(parts, mode().label());
    }

    @Override
    public String toString() {
        return "writeboost(" + log.name + ")";
    }

    // ------------------------------------------------------------------------------------------
    // lifecycle, tunables, status

    @Override
    public void message(String key, String value) throws IOException {
        messages.apply(key, value);
    }

    /**
     * Makes the on-disk cache empty (the cache must be clean): the head segment is closed and
     * written back, and a superblock record marks everything reclaimed, so that nothing is
     * replayed from the cache device later. Used before the cache is detached (with write_around
     * on, so that nothing new is cached).
     */
    public void invalidateAll() throws IOException {
        parts.writeback.invalidateAll();
    }

    /** Writes back everything now; returns when no block is dirty (at some moment). */
    public void writebackAll() throws IOException {
        parts.writeback.drain(Long.MIN_VALUE);
    }

    @Override
    public void suspend() throws IOException {
        log.lock.lock();
        try {
            if (log.suspended || log.closed) {
                return;
            }
        } finally {
            log.lock.unlock();
        }
        IOException err = null;
        parts.injector.stopInjector(); // nothing enters the log after the flush below
        try {
            parts.flush.flush();
            if (log.tunables().writesToBacking()) {
                // a cache being drained (cache:detach, a swap to another policy) is suspended or
                // closed with client I/O quiesced: sub-block writes are still cached in the
                // modes that send writes to the backing device, so whatever arrived since the last
                // writeback=all / invalidate=all must reach the backing device now, and nothing
                // may stay warm in the log (writethrough's clean copies included: a detached
                // backing device changes without the cache seeing it)
                writebackAll();
                invalidateAll();
            }
        } catch (IOException e) {
            err = e;
        }
        daemons.stop(false);
        if (err == null) {
            try {
                parts.record.updateRecord(Long.MIN_VALUE);
            } catch (IOException e) {
                err = e;
            }
        }
        daemons.stopFlushers();
        log.lock.lock();
        try {
            log.suspended = true;
        } finally {
            log.lock.unlock();
        }
        if (err != null) {
            throw err;
        }
    }

    @Override
    public void resume() throws IOException {
        log.lock.lock();
        try {
            if (!log.suspended || log.closed) {
                return;
            }
            log.suspended = false;
        } finally {
            log.lock.unlock();
        }
        daemons.start();
    }

    @Override
    public void close() throws IOException {
        IOException err = null;
        try {
            suspend();
        } catch (IOException e) {
            err = e;
        } finally {
            daemons.stop(true);
            parts.writeback.controller.close();
            parts.writeback.batcher.close();
            log.lock.lock();
            try {
                log.closed = true;
                log.signal();
            } finally {
                log.lock.unlock();
            }
        }
        if (err != null) {
            throw err;
        }
    }

    /** The tunables in effect. */
    public Tunables tunables() {
        return log.tunables();
    }

    /** What recovery found when the cache was opened. */
    public Recovery.Result recovered() {
        return recovered;
    }

    /** Heap bytes of the index and per-location arrays (for the bytes-per-block figure). */
    public long indexHeapBytes() {
        return log.map.heapBytes();
    }

    // ---- the cache API ----

    private static final Set<CacheMode> MODES = Set.of(CacheMode.values());

    @Override
    public CacheMode mode() {
        return log.tunables().mode();
    }

    @Override
    public Set<CacheMode> supportedModes() {
        return MODES;
    }

    /**
     * Sets the mode (the {@code cache_mode} tunable; {@code write_around} is cleared, its older
     * spelling). A mode that cannot hold dirty data is set at once — it already keeps new
     * full-block writes out of the log — and then refused while blocks are dirty, as the contract
     * says; the caller drains and calls again.
     */
    @Override
    public void setMode(CacheMode mode) throws IOException {
        message(Tunables.CACHE_MODE, mode.label());
        if (!mode.holdsDirtyData()) {
            long dirty = dirtyBlocks();
            if (dirty > 0) {
                throw new InvalidArgumentException("writeboost: " + dirty + " blocks are dirty; write them back "
                        + "(writeback=all) before the mode is " + mode.label());
            }
        }
    }

    @Override
    public String modeTunable() {
        return Tunables.CACHE_MODE;
    }

    @Override
    public String authoritativeDeviceArgument() {
        return "backing";
    }

    @Override
    public String cacheDeviceArgument() {
        return "cache";
    }

    /** The metadata area and the segments after the reclaimed one (see {@link MovableCacheDevice}). */
    @Override
    public long[] liveCacheExtents() {
        return MovableCacheDevice.liveExtents(log);
    }

    @Override
    public boolean moveCacheDevice(BlockDevice copy) throws IOException {
        return MovableCacheDevice.move(log, copy);
    }

    @Override
    public BlockDevice cacheDeviceForCheck() {
        return log.cache;
    }

    @Override
    public int cacheBlockSize() {
        return BS;
    }

    @Override
    public long capacityBlocks() {
        return (long) log.nSeg * Layout.MAX_DATA;
    }
}
