package dev.strata.cache.readcache.internal.io;

import dev.strata.api.BlockDevice;
import dev.strata.api.CacheMode;
import dev.strata.api.CacheTarget;
import dev.strata.api.DeviceIOException;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.ReadCachePolicy;
import dev.strata.api.Requests;
import dev.strata.cache.readcache.internal.format.Layout;
import dev.strata.cache.support.guard.SequentialRuns;
import dev.strata.cache.support.tunables.TunableCell;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * {@code readcache}: a clean-only read cache. Writes go to the origin; read misses are promoted
 * into cache slots when the bound policy admits them. Built by {@link Opener}.
 *
 * <h2>On-disk ordering: why a cached copy is never stale, also after a crash</h2>
 * The disk rule is that after a crash every block reads its last durable value or one written
 * since — and, once read, keeps reading that value until it is written again. A cached copy must
 * therefore never be valid on the cache device while the origin may hold (or come to hold, when
 * its volatile cache is destaged at a power cut) other data for the block. Five rules:
 * <ol>
 * <li><b>Invalidate ahead.</b> A write, write-zeroes or discard first drops the cached copies it
 * overlaps from memory, then rewrites their metadata blocks with FUA, and only when those writes
 * have completed sends its data to the origin. So the invalidation is durable before the origin
 * has even seen the new data — before any FLUSH covering the write, and before a FUA write is
 * acknowledged. (Invalidating lazily, at the next flush, would not do: a power cut after the
 * origin destaged the new data but before the flush leaves a valid entry over old data.) A copy
 * that was never written valid (no DISK flag) needs no metadata write.
 * <li><b>Data before entry.</b> A promotion writes the slot's data and flushes the cache device
 * (a flush shared by a read's promotions and concurrent ones: {@link Promoter}) before it writes the entry
 * that makes it valid (FUA): a valid durable entry always has durable data.
 * <li><b>Source durable before entry.</b> An entry is written valid only when the origin data it
 * copied is durable ({@link Stamps#sourceDurable}); a copy of data written since the origin's last
 * flush stays VOLATILE — served from the cache, never recorded — until a flush has made its source
 * durable. Otherwise a crash could drop the origin's copy and leave the cache's.
 * <li><b>Entry invalid before new data.</b> A slot whose entry may be valid on the device is
 * rewritten invalid (FUA) before new data goes into it; metadata writes of one block are
 * serialised, so the device never holds an older encoding over a newer one ({@link MetadataWriter}).
 * <li><b>Written copies ({@code write_promote=on}) after the origin write, recorded after its
 * flush.</b> A write keeps copies of the blocks it wrote whole only once its origin write has
 * completed (and while it still counts as in flight), installed VOLATILE and UNSYNCED; a flush
 * records one only after the origin's flush made the write durable (its stamp is at most the
 * flush's start) and then a cache-device flush made the copy's data durable. So a mapping never
 * becomes durable before the origin holds its data durably, and a FUA write is recorded by the
 * next flush like any other ({@link WritePromoter}).
 * </ol>
 * A promotion racing a write of the same block never installs the older data, nor does a write
 * whose copy another write of the block overlapped: {@link Stamps}.
 * The crash model, crash replay and the power cut at every step check all five
 * ({@code ReadcacheCrashModelTest}, {@code ReadcacheCrashReplayTest}, with {@code write_promote}
 * on and off; {@code WritePromoteRaceTest}, {@code PromotionRaceTest}).
 *
 * <h2>Locking</h2>
 * All memory state is in {@link CacheState}, under its monitor; no I/O is done under it. Metadata
 * writes hold their block's stripe lock in {@link MetadataWriter} (never taken under the state
 * monitor). Client I/O runs concurrently otherwise.
 */
public final class ReadCache implements CacheTarget {
    private final String name;
    private final BlockDevice origin;
    private final BlockDevice cache;
    private final Layout layout;
    private final int bs;
    final CacheState state;
    private final MetadataWriter meta;
    private final PromotionCommit dataCommit;
    private final Promoter promoter;
    final Meters meters;
    private final PolicyBinding binding;
    private final WritePromoter writePromoter;
    private final SequentialRuns runs = new SequentialRuns();
    private final SequentialRuns writeRuns = new SequentialRuns();
    /** Held from a flush's {@code flushDone} to its {@code synced}: see {@link #recordDurable(CacheState.Durable)}. */
    private final java.util.concurrent.locks.ReentrantLock recording = new java.util.concurrent.locks.ReentrantLock();
    private final Recovery.Found found;
    private final TunableCell<Tunables> tunables;
    private volatile CacheMode mode = CacheMode.WRITEAROUND;
    private volatile String promotionError;
    private volatile boolean closed;

    ReadCache(String name, BlockDevice origin, BlockDevice cache, Layout layout, CacheState state, MetadataWriter meta,
            Meters meters, Tunables tunables, PolicyBinding binding, Recovery.Found found) {
        this.name = name;
        this.origin = origin;
        this.cache = cache;
        this.layout = layout;
        this.bs = layout.blockSize();
        this.state = state;
        this.meta = meta;
        this.dataCommit = new PromotionCommit(name, cache, meters::now);
        this.promoter = new Promoter(cache, layout, state, meta, meters, dataCommit, this::cacheWriteFailed);
        this.writePromoter = new WritePromoter(cache, layout, state, meta, meters, dataCommit, this::cacheWriteFailed);
        this.meters = meters;
        this.tunables = new TunableCell<>(tunables);
        this.binding = binding;
        this.found = found;
    }

    @Override
    public String type() {
        return "readcache";
    }

    @Override
    public long size() {
        return origin.size();
    }

    @Override
    public int blockSize() {
        return origin.blockSize();
    }

    // ---- reads ----

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        int len = dst.remaining();
        Requests.check(this, offset, len);
        if (len == 0) {
            return;
        }
        long t0 = meters.now();
        long first = offset / bs;
        int n = (int) ((offset + len - 1) / bs - first + 1);
        long cutoff = tunables.get().sequentialCutoff();
        boolean sequential = cutoff > 0 && runs.extend(offset, len) > cutoff;
        boolean promote = mode == CacheMode.WRITEAROUND && promotionError == null && !sequential;
        if (mode == CacheMode.PASSTHROUGH) {
            origin.read(offset, dst);
            meters.bypassed.add(n);
            return;
        }
        if (sequential) {
            meters.bypassed.add(n);
        }
        // A block the read covers only in part (a 4 KiB read in a 64 KiB block) is promotable too:
        // its miss reads the whole aligned block from the origin in one request (dm-cache's fill),
        // so a block_size above the request size caches the neighbours of a hot block. Not a
        // block past the origin's end (the origin need not be a multiple of block_size).
        boolean[] promotable = new boolean[n];
        long originSize = promote ? origin.size() : 0;
        for (int i = 0; i < n; i++) {
            long bStart = (first + i) * bs;
            promotable[i] = promote && bStart + bs <= originSize;
        }
        CacheState.Plan plan = state.plan(first, n, promotable);
        meters.read(plan.hits, plan.misses);
        meters.rejections.add(plan.rejections);
        meters.evictions.add(plan.evictions);
        int base = dst.position();
        int unpinned = 0;
        ByteBuffer[] fills = null; // whole blocks read for partly covered promotions, by index
        Readahead ahead = promote ? Readahead.plan(state, tunables.get().readahead(), bs, first, n, originSize, plan) : null;
        try {
            if (ahead != null) {
                ahead.read(origin);
                meters.readaheads.increment();
            }
            int i = 0;
            while (i < n) {
                int code = plan.codes[i];
                if (code >= 0) {
                    readHit(offset, len, base, dst, first + i, code);
                    state.unpin(code);
                    unpinned = i + 1;
                    i++;
                    continue;
                }
                if (code < CacheState.Plan.MISS && partial(offset, len, first + i)) {
                    fills = fill(offset, len, base, dst, first + i, i, n, fills, ahead);
                    unpinned = i + 1;
                    i++;
                    continue;
                }
                int j = i;
                while (j < n && plan.codes[j] < 0 && !(plan.codes[j] < CacheState.Plan.MISS && partial(offset, len, first + j))) {
                    j++;
                }
                long from = Math.max(offset, (first + i) * bs);
                long to = Math.min(offset + len, (first + j) * bs);
                fromOrigin(from, dst.slice(base + (int) (from - offset), (int) (to - from)), ahead);
                unpinned = j;
                i = j;
            }
        } catch (IOException | RuntimeException e) {
            for (int i = unpinned; i < n; i++) {
                if (plan.codes[i] >= 0) {
                    state.unpin(plan.codes[i]);
                }
            }
            for (int i = 0; i < n; i++) {
                if (plan.codes[i] < CacheState.Plan.MISS) {
                    state.abandon(CacheState.Plan.promoteSlot(plan.codes[i]), first + i);
                    meters.promotionsAbandoned.increment();
                }
            }
            if (ahead != null) {
                ahead.abandon(state, meters);
            }
            throw e;
        }
        int promotions = plan.promotions + (ahead != null ? ahead.plan.promotions : 0);
        if (promotions > 0) {
            long[] blocks = new long[promotions];
            int[] slots = new int[promotions];
            ByteBuffer[] data = new ByteBuffer[promotions];
            int k = 0;
            for (int i = 0; i < n; i++) {
                if (plan.codes[i] < CacheState.Plan.MISS) {
                    long b = first + i;
                    blocks[k] = b;
                    slots[k] = CacheState.Plan.promoteSlot(plan.codes[i]);
                    data[k++] = fills != null && fills[i] != null ? fills[i].clear() : dst.slice(base + (int) (b * bs - offset), bs);
                }
            }
            if (ahead != null) {
                meters.readaheadBlocks.add(ahead.plan.promotions);
                k = ahead.addTo(blocks, slots, data, k);
            }
            promoter.promote(blocks, slots, data, k, plan.snap);
        }
        dst.position(base + len);
        meters.readLatency.recordSince(t0);
    }

    private boolean partial(long offset, int len, long block) {
        return block * bs < offset || (block + 1) * bs > offset + len;
    }

    /**
     * Reads all of {@code block} (index {@code i} of the read's {@code n}) from the origin, serves the
     * read's part of it, and keeps the whole block in {@code fills[i]} for its promotion.
     */
    private ByteBuffer[] fill(long offset, int len, int base, ByteBuffer dst, long block, int i, int n, ByteBuffer[] fills,
            Readahead ahead) throws IOException {
        ByteBuffer[] f = fills != null ? fills : new ByteBuffer[n];
        ByteBuffer whole = ByteBuffer.allocate(bs);
        fromOrigin(block * bs, whole, ahead);
        long from = Math.max(offset, block * bs);
        long to = Math.min(offset + len, (block + 1) * bs);
        dst.put(base + (int) (from - offset), whole, (int) (from - block * bs), (int) (to - from));
        f[i] = whole;
        return f;
    }

    /** The origin's bytes at {@code from} into {@code dst}: from the readahead's extent when there is one (it covers the read). */
    private void fromOrigin(long from, ByteBuffer dst, Readahead ahead) throws IOException {
        if (ahead != null) {
            ahead.copy(from, dst);
        } else {
            origin.read(from, dst);
        }
    }

    /** Serves the part of {@code block} inside the read from its slot; a cache read error falls back to the origin. */
    private void readHit(long offset, int len, int base, ByteBuffer dst, long block, int slot) throws IOException {
        long from = Math.max(offset, block * bs);
        long to = Math.min(offset + len, (block + 1) * bs);
        ByteBuffer part = dst.slice(base + (int) (from - offset), (int) (to - from));
        try {
            cache.read(layout.slotOffset(slot) + (from - block * bs), part);
        } catch (IOException e) {
            meters.cacheReadErrors.increment();
            origin.read(from, dst.slice(base + (int) (from - offset), (int) (to - from)));
        }
    }

    private void cacheWriteFailed(Exception e) {
        meters.cacheWriteErrors.increment();
        if (promotionError == null) {
            promotionError = "disabled after a cache device write error: " + e.getMessage();
        }
    }

    // ---- writes ----

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        int len = src.remaining();
        Requests.check(this, offset, len);
        long t0 = meters.now();
        ByteBuffer copy = promotesWrite(offset, len) ? src.duplicate() : null;
        changing(offset, len, () -> origin.write(offset, src, flags), copy);
        meters.writeLatency.recordSince(t0);
    }

    /**
     * Whether a write of {@code len} bytes at {@code offset} keeps its data cached: {@code
     * write_promote} on, promotion on, at least one whole block and at most {@link
     * Stamps#RANGE_MAX} blocks, and not part of a sequential stream past {@code sequential_cutoff}
     * (a large copy would push the read hot set out, as a scan would).
     */
    private boolean promotesWrite(long offset, int len) {
        Tunables t = tunables.get();
        if (!t.writePromote() || mode != CacheMode.WRITEAROUND || promotionError != null || len < bs
                || len / bs > Stamps.RANGE_MAX) {
            return false;
        }
        long cutoff = t.sequentialCutoff();
        if (cutoff > 0 && writeRuns.extend(offset, len) > cutoff) {
            meters.bypassed.add(len / bs);
            return false;
        }
        return true;
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws IOException {
        Requests.check(this, offset, length);
        changing(offset, length, () -> origin.writeZeroes(offset, length, flags), null);
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        Requests.check(this, offset, length);
        changing(offset, length, () -> origin.discard(offset, length), null);
    }

    @Override
    public boolean canFastZero() {
        return origin.canFastZero();
    }

    private interface OriginOp {
        void run() throws IOException;
    }

    /**
     * Rule 1 of the ordering: invalidate ahead (durably), then change the origin; then, with
     * {@code written} (the write's data, {@code write_promote}), keep copies of its whole blocks
     * while the write still counts as in flight ({@link WritePromoter}).
     */
    private void changing(long offset, long length, OriginOp op, ByteBuffer written) throws IOException {
        if (length == 0) {
            op.run();
            return;
        }
        long first = offset / bs;
        long n = (offset + length - 1) / bs - first + 1;
        long[] out = new long[2];
        int[] blocks = state.beginWrite(first, n, out);
        long ticket = meta.changed();
        try {
            meters.invalidations.add(out[0]);
            try {
                meters.metadataWrites.add(meta.writeAllCovering(blocks, ticket));
            } catch (IOException | RuntimeException e) {
                cacheWriteFailed(e);
                throw new DeviceIOException(name, offset, "the cache device could not record the invalidation of the "
                        + "cached copy, so the write was not done: " + e.getMessage(), e);
            }
            op.run();
            if (written != null) {
                writePromoter.promote(offset, written, out[1]);
            }
        } finally {
            state.endWrite(first, n);
        }
    }

    @Override
    public void flush() throws IOException {
        long s = state.flushStart();
        origin.flush();
        recordAfterOriginFlush(s, false);
    }

    private void recordAfterOriginFlush(long s, boolean all) {
        recording.lock();
        try {
            recordDurable(state.flushDone(s, all));
        } finally {
            recording.unlock();
        }
    }

    /**
     * Writes the entries a completed origin flush made recordable. Written copies (UNSYNCED) are
     * recorded only after a cache-device flush made their data durable (rule 2); if it fails,
     * they stay unrecorded (cold after a crash, never stale) and promotion is disabled.
     * Runs under {@code recording}, so no other flush raises the origin's durable point between
     * this flush's {@code flushDone} and its {@code synced}: otherwise a copy written into the
     * same slot by a newer write of the same block after this flush's cache-device flush began
     * could pass {@code synced}'s durability check on the other flush's point and be recorded
     * before its data is durable on the cache device.
     */
    private void recordDurable(CacheState.Durable d) {
        recordDurable(d.metaBlocks());
        if (d.unsyncedSlots().length == 0) {
            return;
        }
        try {
            dataCommit.durableUpTo(dataCommit.lastTicket());
        } catch (IOException | RuntimeException e) {
            cacheWriteFailed(e);
            return;
        }
        recordDurable(state.synced(d.unsyncedSlots(), d.unsyncedKeys()));
    }

    private void recordDurable(int[] blocks) {
        long ticket = meta.changed();
        try {
            meters.metadataWrites.add(meta.writeAllCovering(blocks, ticket));
        } catch (IOException | RuntimeException e) {
            cacheWriteFailed(e); // the entries stay unrecorded: the blocks are cold after a crash, never stale
        }
    }

    @Override
    public void suspend() throws IOException {
        long s = state.flushStart();
        origin.flush();
        recordAfterOriginFlush(s, true);
    }

    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            suspend();
        } finally {
            binding.release(this);
        }
    }

    // ---- management ----

    @Override
    public void message(String key, String value) throws IOException {
        switch (key) {
            case "policy" -> binding.switchTo(this, value == null ? "" : value.trim(), tunables.get().policy());
            case Tunables.SEQUENTIAL_CUTOFF, Tunables.WRITE_PROMOTE, Tunables.READAHEAD -> tunables.update(t -> t.withOwn(key, value == null ? "" : value));
            case "mode" -> setMode(CacheMode.parse(value));
            case CacheTarget.Actions.INVALIDATE -> {
                if (!CacheTarget.Actions.ALL.equals(value == null ? "" : value.trim())) {
                    throw new InvalidArgumentException("readcache: invalidate takes 'all' (invalidate=all)");
                }
                // as a write over the whole origin that writes nothing: every copy dropped durably
                // (rule 1), and a promotion racing with it is not installed (its stamps changed)
                changing(0, size(), () -> { }, null);
            }
            default -> {
                if (!state.setPolicyTunable(key, value)) {
                    throw new InvalidArgumentException("readcache: no tunable '" + key + "'; tunables: policy, mode, "
                            + "sequential_cutoff, write_promote, readahead, invalidate=all and those of the policy ('" + binding.wanted() + "')");
                }
                tunables.update(t -> t.withPolicy(key, value));
            }
        }
    }

    /** {@code cache:mode} stores the new mode under this key; {@code message("mode", …)} sets it (restored at start). */
    @Override
    public String modeTunable() {
        return "mode";
    }

    @Override
    public CacheMode mode() {
        return mode;
    }

    @Override
    public Set<CacheMode> supportedModes() {
        return EnumSet.of(CacheMode.WRITEAROUND, CacheMode.PASSTHROUGH);
    }

    @Override
    public void setMode(CacheMode m) {
        if (!supportedModes().contains(m)) {
            throw new InvalidArgumentException("readcache: mode " + m.label()
                    + " is not supported; use writearound (reads cached, writes invalidate) or passthrough");
        }
        mode = m;
    }

    @Override
    public String authoritativeDeviceArgument() {
        return "origin";
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
        return layout.slots();
    }

    @Override
    public long cachedBlocks() {
        return state.cachedBlocks();
    }

    @Override
    public long dirtyBlocks() {
        return 0;
    }

    @Override
    public void writebackAll(WritebackProgress progress) {
        progress.update(0, 0); // clean-only: nothing to write back
    }

    @Override
    public Map<String, String> status() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(Keys.MODE, mode.label());
        m.put(Keys.BLOCK_SIZE, Integer.toString(bs));
        m.put(Keys.CAPACITY_BLOCKS, Long.toString(layout.slots()));
        m.put(Keys.CACHED_BLOCKS, Long.toString(state.cachedBlocks()));
        m.put(Keys.DIRTY_BLOCKS, "0");
        meters.putAll(m);
        m.put("policy", binding.wanted());
        m.put("policy_bound", Boolean.toString(state.policyBound()));
        String err = promotionError;
        m.put("promotion", err != null ? err : !state.policyBound() ? "paused: no policy '" + binding.wanted() + "' installed"
                : mode == CacheMode.PASSTHROUGH ? "off (passthrough)" : "on");
        m.put("recovered_blocks", Long.toString(found.valid()));
        m.put("recovered_dropped", Long.toString(found.dropped()));
        long slots = layout.slots();
        m.put("promotion_flushes", Long.toString(dataCommit.flushes()));
        m.put("heap_bytes_per_block", String.format(java.util.Locale.ROOT, "%.1f", (double) state.heapBytes() / slots));
        m.putAll(tunables.get().own().asMap());
        tunables.get().policy().forEach((k, v) -> m.put("policy." + k, v));
        state.policyStatus().forEach((k, v) -> m.put("policy." + k, v));
        return m;
    }

    public String name() {
        return name;
    }

    /** A policy service appeared: bind it if it is the one wanted and none is bound. */
    public void policyArrived(String policyName, ReadCachePolicy p) throws IOException {
        binding.arrived(this, policyName, p, tunables.get().policy());
    }

    /** A policy service is going away: pause promotion if it is the bound one. */
    public void policyGone(ReadCachePolicy p) throws IOException {
        binding.gone(this, p);
    }

    /** For tests and the binding: binds {@code p} (or none). */
    void bind(ReadCachePolicy p, Map<String, String> policyTunables) throws IOException {
        try {
            state.bind(p, policyTunables, 10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("readcache " + name + ": interrupted while switching policy");
        }
    }

    @Override
    public String toString() {
        return "readcache(" + name + ")";
    }
}
