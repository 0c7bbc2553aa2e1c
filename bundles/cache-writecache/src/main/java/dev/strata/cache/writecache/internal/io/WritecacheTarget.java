package dev.strata.cache.writecache.internal.io;

import dev.strata.api.BlockDevice;
import dev.strata.api.CacheMode;
import dev.strata.api.CacheTarget.Actions;
import dev.strata.api.CacheTarget;
import dev.strata.api.FastZeroUnsupportedException;
import dev.strata.api.InvalidArgumentException;
import dev.strata.cache.support.writeback.ControllerBinding;
import dev.strata.api.Requests;
import dev.strata.cache.writecache.internal.format.Superblock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The {@code writecache} target: a block cache with a sorted index (dm-writecache, SSD mode).
 * Reads and the target's lifecycle live here; writes in {@link WritePath}, commits and removals
 * in {@link Committer}, writeback in {@link Writeback}, opening and formatting in
 * {@code recovery.Recovery}.
 *
 * <h2>Locking</h2>
 * <ul>
 * <li>the state monitor ({@code synchronized (state)}) guards everything in {@link CacheState};
 *     it is held for index updates, and during a partial-block read-modify-write;
 * <li>the slot lock: readers of cache slots hold it shared from resolving a slot until its data
 *     is read; freeing a slot takes it exclusive, so no slot is reused under a reader;
 * <li>{@link Committer#lock}: one metadata writer at a time (commit, removal); a writeback batch
 *     takes it only to choose its blocks and to remove them afterwards, never across its backing
 *     I/O (see {@link Writeback});
 * <li>the writeback batch lock, inside {@link Writeback}: one batch at a time.
 * </ul>
 * Order: writeback batch lock → committer lock → slot lock → state monitor. Waiting for an in-flight data write is
 * allowed under any of them (data writes take none).
 */
public final class WritecacheTarget implements CacheTarget {
    public static final String TYPE = "writecache";

    private final String name;
    private final BlockDevice backing;
    private final BlockDevice cache;
    private final CacheState state;
    private final int bs;
    private final InFlight inFlight = new InFlight();
    /** Each reading thread's pieces of a read, reused (per target: a target may read another one's device). */
    private final ThreadLocal<ReadPieces> readPieces = ThreadLocal.withInitial(ReadPieces::new);
    private final ReentrantReadWriteLock slotLock = new ReentrantReadWriteLock();
    private final Stats counters;
    private final Failure failure;
    private final Committer committer;
    private final Writeback writeback;
    private final WritePath writes;
    private final ExecutorService fuaPool;
    private final Background background;
    private volatile Tunables tunables;
    /** The mode, and a switch to writearound waiting for the dirty blocks to be written back. */
    private final ModeSwitch modes = new ModeSwitch(this::dirtyBlocks);
    /** Writes go around: write-around mode, or on the way to it while dirty blocks drain, or the cleaner. */
    private volatile boolean goAround;
    private volatile boolean closed;

    /** Builds the target over recovered state; see {@code recovery.Recovery}. */
    public WritecacheTarget(String name, BlockDevice backing, BlockDevice cache, Superblock sb, StateLoader loader,
            Tunables tunables, Options options) throws IOException {
        this.name = name;
        this.backing = backing;
        this.cache = cache;
        this.bs = sb.blockSize();
        this.counters = new Stats(options.clock());
        this.state = new CacheState(sb.layout(), sb.seqCount(), options.clock());
        this.failure = new Failure(name + " (cache device)");
        this.tunables = tunables;
        this.goAround = tunables.cleaner();
        loader.load(new StateAccess(state));
        // the recovered blocks' ages (for max_age) count from now
        state.noteSnapshot(state.current - 1);
        this.committer = new Committer(state, inFlight, slotLock, cache, backing, failure, counters,
                options.commitOrder(), sb);
        this.writeback = new Writeback(state, committer, cache, backing, counters, !options.unsortedWriteback());
        this.fuaPool = options.lazyFuaData() ? null : Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "strata-writecache-" + name + "-fua");
            t.setDaemon(true);
            return t;
        });
        this.writes = new WritePath(state, inFlight, committer, writeback, cache, backing, failure, counters, fuaPool,
                !options.oneIoPerBlock());
        writes.batch = tunables.writebackBatch();
        // entries the recovery dropped (uncommitted leftovers, older duplicates) are rewritten as
        // FREE before any I/O: a later commit must not make them valid again
        committer.commit();
        this.background = new Background(name, state, committer, writeback, counters, () -> this.tunables,
                () -> closed, options.clock(), options.controllers(), options.background());
        background.start();
    }

    /** What {@code recovery.Recovery} fills in before the target starts. */
    @FunctionalInterface
    public interface StateLoader {
        void load(StateAccess state) throws IOException;
    }

    // ---- BlockDevice -------------------------------------------------------------------------

    @Override
    public long size() {
        return backing.size();
    }

    @Override
    public int blockSize() {
        return bs;
    }

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        int len = dst.remaining();
        Requests.check(this, offset, len);
        if (len == 0) {
            return;
        }
        failure.check();
        // every foreground request counts for the controllers' idle time and request rate
        // (CacheLoad.idleMillis), not only those that reach the backing device
        long started = counters.readLatency.start();
        counters.busy.op(started); // the same clock read: one less per request
        ReadPieces pieces = readPieces.get();
        pieces.count = 0;
        int base = dst.position();
        int limit = dst.limit();
        boolean done = false;
        slotLock.readLock().lock();
        try {
            long upTo = -1; // the last data write registered when the slots were resolved (-1: no hit)
            synchronized (state) {
                long p = offset;
                long end = offset + len;
                while (p < end) {
                    long block = p / bs;
                    int in = (int) (p % bs);
                    int n = (int) Math.min(bs - in, end - p);
                    int s = state.index.find(block);
                    counters.reads.increment();
                    if (s >= 0) {
                        counters.readHits.increment();
                        if (upTo < 0) {
                            upTo = inFlight.lastTicket();
                        }
                    }
                    pieces.add(p, n, s, s < 0 ? -1 : state.layout.slotOffset(s) + in);
                    p += n;
                }
            }
            // a slot whose data write is still in flight is read once it has landed (or this thread runs it)
            for (int i = 0; upTo >= 0 && i < pieces.count; i++) {
                if (pieces.slotOffset[i] >= 0) {
                    inFlight.awaitOverlapping(pieces.firstSlot[i], pieces.lastSlot[i], upTo);
                }
            }
            // into the caller's buffer itself, a piece at a time through its limit (no view per piece)
            for (int i = 0; i < pieces.count; i++) {
                int from = base + (int) (pieces.offset[i] - offset);
                dst.limit(limit).position(from).limit(from + pieces.length[i]);
                if (pieces.slotOffset[i] < 0) {
                    counters.busy.begin();
                    try {
                        backing.read(pieces.offset[i], dst);
                    } finally {
                        counters.busy.end();
                    }
                } else {
                    cache.read(pieces.slotOffset[i], dst);
                }
            }
            failure.check();
            done = true;
            counters.readLatency.recordSince(started);
        } finally {
            slotLock.readLock().unlock();
            dst.limit(limit).position(done ? limit : base);
        }
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        int len = src.remaining();
        Requests.check(this, offset, len);
        if (len == 0) {
            return;
        }
        failure.check();
        long started = counters.writeLatency.start();
        counters.busy.op(started); // the same clock read: one less per request
        boolean around = goAround;
        List<InFlight.Entry> fuaWrites = (flags & FUA) != 0 ? new ArrayList<>() : null;
        try {
            long p = offset;
            long end = offset + len;
            while (p < end) {
                long block = p / bs;
                int in = (int) (p % bs);
                ByteBuffer part;
                if (in != 0 || end - p < bs) {
                    int n = (int) Math.min(bs - in, end - p);
                    part = src.slice(src.position() + (int) (p - offset), n);
                    counters.writes.increment();
                    writes.writePartial(block, in, part, flags);
                    p += n;
                } else {
                    int count = (int) ((end - p) / bs);
                    // the whole request in whole blocks (the common case): the buffer itself, no view
                    part = p == offset && (long) count * bs == len ? src
                            : src.slice(src.position() + (int) (p - offset), count * bs);
                    counters.writes.add(count);
                    writes.writeBlocks(block, count, part, flags, around, fuaWrites);
                    p += (long) count * bs;
                }
            }
            if ((flags & FUA) != 0) {
                // FUA writes commit before they are acknowledged (dm-writecache's SSD mode does not)
                committer.commit();
                for (InFlight.Entry e : fuaWrites) {
                    inFlight.await(e);
                }
            }
        } finally {
            if (fuaWrites != null) {
                // one not finished (a failure on the way) stays registered for the next commit
                for (InFlight.Entry e : fuaWrites) {
                    inFlight.release(e);
                }
            }
        }
        src.position(src.limit());
        counters.writeLatency.recordSince(started);
        maybeWake();
    }

    @Override
    public void flush() throws IOException {
        counters.flushes.increment();
        long started = counters.flushLatency.start();
        committer.commit();
        counters.flushLatency.recordSince(started);
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        Requests.check(this, offset, length);
        counters.discards.increment();
        long first = (offset + bs - 1) / bs;
        long last = (offset + length) / bs;
        // a discard is advisory: the partial blocks at its ends keep their data
        for (long b = first; b < last; b += Integer.MAX_VALUE / bs) {
            writes.zeroBlocks(b, (int) Math.min(last - b, Integer.MAX_VALUE / bs), 0, true);
        }
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws IOException {
        Requests.check(this, offset, length);
        if ((flags & FAST_ZERO) != 0) {
            throw new FastZeroUnsupportedException(name + ": zeroing through the cache is not faster than writing zeroes");
        }
        if (length == 0) {
            return;
        }
        long end = offset + length;
        long first = (offset + bs - 1) / bs;
        long last = end / bs;
        if (first > last) { // inside one block
            writes.writePartial(offset / bs, (int) (offset % bs), ByteBuffer.allocate((int) length), flags);
        } else {
            if (offset % bs != 0) {
                writes.writePartial(offset / bs, (int) (offset % bs), ByteBuffer.allocate((int) (first * bs - offset)), flags);
            }
            for (long b = first; b < last; b += Integer.MAX_VALUE / bs) {
                writes.zeroBlocks(b, (int) Math.min(last - b, Integer.MAX_VALUE / bs), flags, false);
            }
            if (end % bs != 0) {
                writes.writePartial(last, 0, ByteBuffer.allocate((int) (end - last * bs)), flags);
            }
        }
        if ((flags & FUA) != 0) {
            committer.commit();
        }
    }

    // ---- Target ------------------------------------------------------------------------------

    @Override
    public Map<String, String> status() {
        Map<String, String> m = new LinkedHashMap<>();
        long cached;
        long free;
        long underWb;
        long seq;
        synchronized (state) {
            cached = state.index.size();
            free = state.free.count();
            underWb = state.underWritebackCount();
            seq = state.durable;
        }
        m.put(Keys.MODE, modes.mode().label());
        CacheMode p = modes.pending();
        if (p != null) {
            m.put(Keys.MODE_PENDING, p.label());
        }
        m.put("error", failure.failed() ? "1" : "0");
        m.put(Keys.BLOCK_SIZE, Integer.toString(bs));
        m.put(Keys.CAPACITY_BLOCKS, Long.toString(state.slots()));
        m.put("free_blocks", Long.toString(free));
        m.put(Keys.CACHED_BLOCKS, Long.toString(cached));
        m.put(Keys.DIRTY_BLOCKS, Long.toString(cached));
        m.put("under_writeback", Long.toString(underWb));
        m.put("reads", Long.toString(counters.reads.sum()));
        m.put(Keys.READ_HITS, Long.toString(counters.readHits.sum()));
        m.put(Keys.READ_MISSES, Long.toString(counters.reads.sum() - counters.readHits.sum()));
        m.put("writes", Long.toString(counters.writes.sum()));
        long hu = counters.writeHitsUncommitted.sum();
        long hc = counters.writeHitsCommitted.sum();
        m.put(Keys.WRITE_HITS, Long.toString(hu + hc));
        m.put("write_hits_uncommitted", Long.toString(hu));
        m.put("write_hits_committed", Long.toString(hc));
        m.put(Keys.WRITE_MISSES, Long.toString(counters.writesAllocated.sum() + counters.writesAround.sum()));
        m.put("writes_around", Long.toString(counters.writesAround.sum()));
        m.put(Keys.BYPASSED, Long.toString(counters.writesAround.sum()));
        m.put("writes_allocated", Long.toString(counters.writesAllocated.sum()));
        m.put("writes_blocked_on_freelist", Long.toString(counters.writesBlockedOnFreelist.sum()));
        m.put("flushes", Long.toString(counters.flushes.sum()));
        m.put("flushes_forwarded", Long.toString(counters.flushesForwarded.sum()));
        m.put("discards", Long.toString(counters.discards.sum()));
        m.put("commits", Long.toString(counters.commits.sum()));
        m.put("seq_count", Long.toString(seq));
        m.put(Keys.WRITTEN_BACK_BLOCKS, Long.toString(counters.writtenBack.sum()));
        m.put(Keys.WRITEBACK_RATE, Long.toString(counters.writebackRate.perSecond()));
        m.put(Keys.WRITEBACK_ERROR, Long.toString(counters.writebackErrors.sum()));
        m.put("writeback_batches", Long.toString(counters.writebackBatches.sum()));
        counters.renderLatencies(m);
        background.status(m);
        m.putAll(tunables.asMap());
        return m;
    }

    @Override
    public void message(String key, String value) throws IOException {
        messageWithNote(key, value);
    }

    /** {@code mode writearound} with dirty blocks left is accepted, pending: the note says so. */
    @Override
    public String messageWithNote(String key, String value) throws IOException {
        if ("mode".equals(key)) {
            String note = modes.message(CacheMode.parse(value));
            goAround = tunables.cleaner() || modes.around();
            return note;
        }
        switch (key) {
            case "flush", "writeback" -> {
                try {
                    writebackAll((d, w) -> { });
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new java.io.InterruptedIOException(name + ": writeback interrupted");
                }
            }
            case "commit" -> committer.commit();
            case Actions.INVALIDATE -> invalidate(value);
            default -> {
                if (ControllerBinding.isSetting(key)) {
                    // the controller's own tunable: kept and passed on by the binding (docs/daemons.md)
                    Tunables t = tunables;
                    background.binding().set("writecache", t.controller(), t.controllerTunables(), key, value);
                    background.controllerSettingChanged();
                    return null;
                }
                if (!Tunables.KEYS.contains(key)) {
                    throw new InvalidArgumentException("writecache: no tunable or action '" + key + "'; tunables: "
                            + String.join(", ", Tunables.KEYS) + ", writeback.<controller tunable>; actions: flush, commit, mode, invalidate");
                }
                Tunables t = tunables.with(key, value);
                tunables = t;
                writes.batch = t.writebackBatch();
                goAround = t.cleaner() || modes.around();
                maybeWake();
            }
        }
        return null;
    }

    /**
     * {@code invalidate=all}: every block a writecache holds is dirty (a written-back slot is freed
     * durably at once, {@link Committer#forgetDurably}), so a clean writecache holds no copy at all
     * and there is nothing to drop; while blocks are dirty it is refused, as the contract says.
     */
    private void invalidate(String value) {
        if (!Actions.ALL.equals(value == null ? "" : value.trim())) {
            throw new InvalidArgumentException("writecache: invalidate takes 'all' (invalidate=all)");
        }
        long dirty = cachedBlocks();
        if (dirty != 0) {
            throw new InvalidArgumentException("writecache: " + dirty + " blocks are dirty; write them back first "
                    + "(cache:writeback), then invalidate");
        }
    }

    @Override
    public void suspend() throws IOException {
        background.stop();
        committer.commit();
    }

    @Override
    public void resume() {
        if (!closed) {
            background.start();
        }
    }

    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        background.close();
        try {
            committer.commit();
        } finally {
            writeback.close();
            if (fuaPool != null) {
                fuaPool.shutdown();
                // not interruptible (like the daemon's stop): a close from a cancelled command has
                // the interrupt set, and a FUA write still running must end before the device is
                // given to anyone else
                boolean interrupted = false;
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (!fuaPool.isTerminated() && System.nanoTime() < deadline) {
                    try {
                        fuaPool.awaitTermination(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    // ---- CacheTarget -------------------------------------------------------------------------

    /** {@code cache:mode} stores the new mode under this key; {@code message("mode", …)} sets it (restored at start). */
    @Override
    public String modeTunable() {
        return "mode";
    }

    @Override
    public CacheMode mode() {
        return modes.mode();
    }

    @Override
    public Set<CacheMode> supportedModes() {
        return EnumSet.of(CacheMode.WRITEBACK, CacheMode.WRITEAROUND);
    }

    @Override
    public void setMode(CacheMode m) throws IOException {
        try {
            modes.set(m);
        } finally {
            goAround = tunables.cleaner() || modes.around();
        }
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
    public BlockDevice cacheDeviceForCheck() {
        return cache;
    }

    @Override
    public int cacheBlockSize() {
        return bs;
    }

    @Override
    public long capacityBlocks() {
        return state.slots();
    }

    @Override
    public long cachedBlocks() {
        synchronized (state) {
            return state.index.size();
        }
    }

    /** Every cached block is dirty: a written-back block leaves the cache (reads are not promoted). */
    @Override
    public long dirtyBlocks() {
        return cachedBlocks();
    }

    /**
     * Every dirty block, in backing order, batch after batch. {@code progress} counts only the
     * blocks of batches that completed (written, flushed, freed durably) and is called once more
     * however this ends — a Ctrl-C between batches or during one (that batch counts nothing; its
     * blocks stay dirty), a failure — so that the caller's report uses this count and the dirty
     * count of the same moment.
     */
    @Override
    public void writebackAll(WritebackProgress progress) throws IOException, InterruptedException {
        long[] done = new long[1];
        long lastReport = System.nanoTime();
        try {
            while (true) {
                committer.commit();
                long at = 0;
                long before = done[0];
                while (at >= 0) {
                    if (Thread.interrupted()) {
                        throw new InterruptedException("writeback interrupted; " + dirtyBlocks() + " blocks stay dirty");
                    }
                    at = writeback.inOrder(at, tunables.writebackBatch(), done);
                    if (System.nanoTime() - lastReport > 1_000_000_000L) {
                        progress.update(dirtyBlocks(), done[0]);
                        lastReport = System.nanoTime();
                    }
                }
                if (dirtyBlocks() == 0 || done[0] == before) {
                    break;
                }
            }
        } finally {
            progress.update(dirtyBlocks(), done[0]);
        }
    }

    // ---- background --------------------------------------------------------------------------

    private void maybeWake() {
        background.maybeWake();
    }

    /**
     * One round of background work (see {@link Background#runRound()}); tests call it with the
     * daemon off. Returns whether there is more to do now.
     */
    public boolean backgroundOnce() throws IOException {
        return background.runRound();
    }

    /** Writes back up to {@code max} of the oldest committed blocks (tests drive writeback with it). */
    public int writebackOldest(int max) throws IOException {
        return writeback.oldest(max);
    }

    /** Tests only: see {@link InPlace#inPlaceProbe}. */
    void inPlaceProbe(Runnable probe) {
        writes.inPlace.inPlaceProbe = probe;
    }

    /** Tests only: see {@link InPlace#optimisticProbe}. */
    void optimisticProbe(Runnable probe) {
        writes.inPlace.optimisticProbe = probe;
    }
}
