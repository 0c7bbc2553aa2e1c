package dev.strata.cache.writecache.internal.io;

import dev.strata.api.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import dev.strata.cache.writecache.internal.index.FreeSlots;

/**
 * Writes, write-zeroes and discards.
 *
 * <ul>
 * <li>A block cached in a slot that is in no commit yet is overwritten in place; any other
 *     block takes a free slot (the older copy, if committed, is freed after the next commit).
 *     Free slots are taken from the cursor on, so a multi-block write lands in physically
 *     consecutive slots and goes to the cache device as one write; concurrent writers use
 *     cursors (lanes) a sixteenth of the cache apart. The index is walked once per request: the
 *     next block is looked for in the next slot first, and a run of uncached blocks is placed
 *     at once. A write whose every block is such an in-place hit does not take the state
 *     monitor at all ({@link InPlace}, the gate of {@link CacheState}).
 * <li>No free slot: an uncached block goes around to the backing device (the next flush is
 *     forwarded to it); a cached, committed block waits for room — the writer commits and
 *     writes a batch back itself, so it never waits for a thread that may not run.
 * <li>A partial block that is cached is read, merged and written under the state lock (a
 *     read-modify-write racing nothing); a partial block that is not cached goes around.
 * <li>Write-around mode (and the cleaner) sends whole blocks around; cached copies of them are
 *     dropped only after the backing write is durable.
 * <li>Write-zeroes and discard zero the backing device (FUA when cached copies are dropped, so
 *     that a crash can never uncover an older backing value) and drop the cached copies
 *     durably; discard over uncached blocks is passed down as a discard.
 * </ul>
 */
final class WritePath {
    private final CacheState state;
    private final InFlight inFlight;
    private final Committer committer;
    private final Writeback writeback;
    private final BlockDevice cache;
    private final BlockDevice backing;
    private final Failure failure;
    private final Stats counters;
    private final ExecutorService fuaPool;
    private final int bs;
    /** Blocks a writer that found no free slot writes back (the writeback_batch tunable). */
    volatile int batch = Tunables.DEFAULTS.writebackBatch();
    /** Consecutive slots of one write go to the cache device as one I/O (false: one per block, benchmarks only). */
    private final boolean contiguous;

    WritePath(CacheState state, InFlight inFlight, Committer committer, Writeback writeback, BlockDevice cache,
            BlockDevice backing, Failure failure, Stats counters, ExecutorService fuaPool, boolean contiguous) {
        this.contiguous = contiguous;
        this.state = state;
        this.inFlight = inFlight;
        this.committer = committer;
        this.writeback = writeback;
        this.cache = cache;
        this.backing = backing;
        this.failure = failure;
        this.counters = counters;
        this.fuaPool = fuaPool;
        this.bs = state.layout.blockSize();
        this.inPlace = new InPlace(state, inFlight, failure, counters, slotsBody, contiguous);
    }

    /** The data write of an entry {@link #writeBlocks} filled in (one object, not one per write). */
    private final InFlight.Body slotsBody = this::writeSlots;
    /** Overwrites whose every block is an in-place hit, without the state monitor. */
    final InPlace inPlace;

    /**
     * Writes whole blocks {@code [block, block + count)} from {@code src} (position at the first
     * byte). Data writes to the cache of a FUA request are left in {@code fuaWrites} for the
     * caller's commit to wait for and release ({@code null} without FUA).
     */
    void writeBlocks(long block, int count, ByteBuffer src, int flags, boolean around, List<InFlight.Entry> fuaWrites)
            throws IOException {
        boolean fua = (flags & BlockDevice.FUA) != 0;
        if (around) {
            aroundDropping(block, count, src, flags);
            return;
        }
        if (!fua && inPlace.write(block, count, src)) {
            return;
        }
        int done = 0;
        while (done < count) {
            // the pieces go straight into a reused registry entry: nothing allocated per request
            InFlight.Entry e = inFlight.take(slotsBody);
            boolean handedOff = false;
            boolean blocked = false;
            boolean registered = false;
            boolean anyAround = false;
            int lane = -1;
            try {
                synchronized (state) {
                    failure.check();
                    // the current run: slots [runSlot, runSlot + runCount) (runSlot -1: around) from block runBlock
                    int runSlot = -1;
                    int runCount = 0;
                    long runBlock = 0;
                    int runSrc = 0;
                    int hint = -1; // the slot that held the previous block: the next one is often the next slot
                    long absentBelow = -1; // no block in [b, absentBelow) is cached (from the last ceiling walk)
                    int hitsUncommitted = 0;
                    int hitsCommitted = 0;
                    int allocated = 0;
                    while (done < count) {
                        long b = block + done;
                        int s;
                        if (hint >= 0 && state.index.holds(hint + 1, b)) {
                            s = hint + 1;
                        } else if (b < absentBelow) {
                            s = -1;
                        } else if ((s = state.index.hinted(b)) >= 0) {
                            absentBelow = -1;
                        } else {
                            int c = state.index.ceiling(b);
                            long cb = c < 0 ? Long.MAX_VALUE : state.index.block(c);
                            s = cb == b ? c : -1;
                            absentBelow = cb == b ? -1 : cb;
                        }
                        hint = s;
                        int slot;
                        int n = 1;
                        if (s >= 0 && state.reusable(s)) {
                            slot = s;
                            hitsUncommitted++;
                        } else {
                            if (lane < 0) {
                                lane = claimLane();
                            }
                            // uncached blocks up to the next cached one take consecutive free slots at once
                            int want = s >= 0 ? 1 : (int) Math.min(count - done, absentBelow - b);
                            long run = state.free.take(want, lane % FreeSlots.LANES);
                            if (run < 0) {
                                if (s >= 0) {
                                    blocked = true;
                                    break;
                                }
                                slot = -1;
                                counters.around(1);
                            } else {
                                slot = (int) (run >>> 32);
                                if (s >= 0) {
                                    state.place(slot, b, s);
                                    hitsCommitted++;
                                } else {
                                    n = (int) run;
                                    state.placeRun(slot, b, n);
                                    allocated += n;
                                }
                            }
                        }
                        for (int i = 0; i < n; i++) { // n > 1: a run of new slots, one piece unless per block
                            int sl = slot < 0 ? -1 : slot + i;
                            if (runCount > 0 && (sl < 0 ? runSlot < 0
                                    : contiguous && runSlot >= 0 && sl == runSlot + runCount)) {
                                runCount++;
                            } else {
                                if (runCount > 0) {
                                    e.addPiece(runSlot, runBlock, runCount, runSrc);
                                }
                                runSlot = sl;
                                runBlock = b + i;
                                runCount = 1;
                                runSrc = (done + i) * bs;
                            }
                        }
                        done += n;
                    }
                    if (runCount > 0) {
                        e.addPiece(runSlot, runBlock, runCount, runSrc);
                    }
                    // once per request, not per block: an add is a CAS on a shared line
                    if (hitsUncommitted > 0) {
                        counters.writeHitsUncommitted.add(hitsUncommitted);
                    }
                    if (hitsCommitted > 0) {
                        counters.writeHitsCommitted.add(hitsCommitted);
                    }
                    if (allocated > 0) {
                        counters.writesAllocated.add(allocated);
                    }
                    int lo = Integer.MAX_VALUE;
                    int hi = -1;
                    for (int i = 0; i < e.pieces; i++) {
                        if (e.slot[i] < 0) {
                            anyAround = true;
                        } else {
                            lo = Math.min(lo, e.slot[i]);
                            hi = Math.max(hi, e.slot[i] + e.count[i] - 1);
                        }
                    }
                    if (hi >= 0) {
                        // the caller's buffer itself when this thread does nothing else with it until
                        // the data write is done (its position and limit are restored); a view of it
                        // when the write runs on while this thread goes on (FUA, pieces around)
                        e.data = fua || anyAround ? src.duplicate() : src;
                        e.base = src.position();
                        inFlight.register(e, lo, hi);
                        registered = true;
                    }
                }
                if (registered) {
                    if (fua) {
                        fuaWrites.add(e);
                        handedOff = true;
                        if (fuaPool != null) {
                            // by ticket: the entry may be given back and reused before the pool gets to it
                            long ticket = e.ticket();
                            fuaPool.execute(() -> {
                                try {
                                    inFlight.await(e, ticket);
                                } catch (IOException ignored) {
                                    // the writer sees the failure when it waits for the write
                                }
                            });
                        }
                    } else {
                        inFlight.await(e);
                    }
                }
                if (anyAround) {
                    for (int i = 0; i < e.pieces; i++) {
                        if (e.slot[i] < 0) {
                            ByteBuffer part = src.slice(src.position() + e.srcOffset[i], e.count[i] * bs);
                            aroundWrite(e.block[i] * bs, part, fua ? BlockDevice.FUA : 0);
                            if (!fua) {
                                synchronized (state) {
                                    state.forwardFlush = true;
                                }
                            }
                        }
                    }
                }
            } finally {
                if (lane >= 0) {
                    releaseLane(lane);
                }
                if (!handedOff) {
                    inFlight.release(e);
                }
            }
            if (blocked) {
                counters.writesBlockedOnFreelist.increment();
                makeRoom();
            }
        }
    }

    /**
     * The allocation lanes ({@link dev.strata.cache.writecache.internal.index.FreeSlots#LANES})
     * whose writers are between allocating and the end of their data write, one bit each.
     */
    private final AtomicInteger lanesBusy = new AtomicInteger();

    /**
     * The lowest lane no other writer is using (a lone writer always gets lane 0), or, when all
     * are in use, a shared one; called under the state lock (which orders the claims, while
     * releases come without it).
     */
    private int claimLane() {
        while (true) {
            int busy = lanesBusy.get();
            int lane = Integer.numberOfTrailingZeros(~busy);
            if (lane >= FreeSlots.LANES) {
                return FreeSlots.LANES + (int) (Thread.currentThread().getId() % FreeSlots.LANES); // shared, not marked
            }
            if (lanesBusy.compareAndSet(busy, busy | (1 << lane))) {
                return lane;
            }
        }
    }

    private void releaseLane(int lane) {
        if (lane < FreeSlots.LANES) {
            int bit = 1 << lane;
            while (true) {
                int busy = lanesBusy.get();
                if (lanesBusy.compareAndSet(busy, busy & ~bit)) {
                    return;
                }
            }
        }
    }

    /** An entry's data write: its pieces that have slots, each one write to the cache device. */
    private void writeSlots(InFlight.Entry e) throws IOException {
        ByteBuffer d = e.data;
        int pos = d.position();
        int lim = d.limit();
        try {
            for (int i = 0; i < e.pieces; i++) {
                if (e.slot[i] >= 0) {
                    int from = e.base + e.srcOffset[i];
                    d.limit(d.capacity()).position(from).limit(from + e.count[i] * bs);
                    cache.write(state.layout.slotOffset(e.slot[i]), d, 0);
                }
            }
        } catch (IOException | RuntimeException x) {
            failure.set(x);
            throw x;
        } finally {
            d.limit(d.capacity()).position(pos).limit(lim);
        }
    }

    /** Frees slots for a writer that found none: commit what is written, then write back a batch. */
    void makeRoom() throws IOException {
        committer.commit();
        writeback.oldest(batch);
    }

    /**
     * Writes {@code src} into part of block {@code block} at {@code inBlock}: read-modify-write
     * of the cached copy, or around to the backing device when it is not cached.
     */
    void writePartial(long block, int inBlock, ByteBuffer src, int flags) throws IOException {
        boolean fua = (flags & BlockDevice.FUA) != 0;
        while (true) {
            boolean around;
            synchronized (state) {
                failure.check();
                int s = state.index.find(block);
                around = s < 0;
                if (s >= 0) {
                    int target = s;
                    if (!state.reusable(s)) {
                        long run = state.free.take(1);
                        target = run < 0 ? -1 : (int) (run >>> 32);
                    }
                    if (target >= 0) {
                        // an in-place write (no monitor) must not land in the slot between the read
                        // and the write of the merge below, or it would be lost: no other block
                        // is written in place meanwhile (one block's read and write, partial
                        // writes only)
                        long g = target == s ? state.gate.writeLock() : 0;
                        ByteBuffer merged = ByteBuffer.allocate(bs);
                        try {
                            inFlight.awaitOverlapping(s, s, Long.MAX_VALUE);
                            cache.read(state.layout.slotOffset(s), merged);
                            merged.put(inBlock, src, src.position(), src.remaining());
                            cache.write(state.layout.slotOffset(target), merged.clear(), 0);
                        } catch (IOException | RuntimeException e) {
                            failure.set(e);
                            throw e;
                        } finally {
                            if (g != 0) {
                                state.gate.unlockWrite(g);
                            }
                        }
                        if (target == s) {
                            counters.writeHitsUncommitted.increment();
                        } else {
                            state.place(target, block, s);
                            counters.writeHitsCommitted.increment();
                        }
                        return;
                    }
                    counters.writesBlockedOnFreelist.increment();
                } else {
                    counters.around(1);
                }
            }
            if (around) {
                aroundWrite(block * bs + inBlock, src.duplicate(), fua ? BlockDevice.FUA : 0);
                if (!fua) {
                    synchronized (state) {
                        state.forwardFlush = true;
                    }
                }
                return;
            }
            makeRoom();
        }
    }

    /** Whole blocks around to the backing device; cached copies dropped once the data is durable there. */
    private void aroundDropping(long block, int count, ByteBuffer src, int flags) throws IOException {
        counters.around(count);
        dropAfter(block, count, flags, cachedAny -> aroundWrite(block * bs, src.slice(src.position(), count * bs),
                cachedAny ? flags | BlockDevice.FUA : flags));
    }

    /** Write-zeroes ({@code discard} false) or discard of whole blocks {@code [block, block + count)}. */
    void zeroBlocks(long block, int count, int flags, boolean discard) throws IOException {
        dropAfter(block, count, flags, cachedAny -> {
            if (cachedAny) {
                backing.writeZeroes(block * bs, (long) count * bs, (flags & BlockDevice.NO_HOLE) | BlockDevice.FUA);
            } else if (discard) {
                backing.discard(block * bs, (long) count * bs);
            } else {
                backing.writeZeroes(block * bs, (long) count * bs, flags & (BlockDevice.NO_HOLE | BlockDevice.FUA));
            }
        });
    }

    @FunctionalInterface
    private interface BackingOp {
        void run(boolean cachedAny) throws IOException;
    }

    /**
     * Runs {@code op} on the backing device (FUA when cached copies exist), then removes the
     * cached copies of the range durably. Until the removal is durable a crash finds the cached
     * copy — the value before the request — and after it the backing device holds the new value
     * durably, so no crash can uncover an older backing value.
     */
    private void dropAfter(long block, int count, int flags, BackingOp op) throws IOException {
        lockClearOfWriteback(block, count);
        try {
            int[] slots = new int[16];
            long[] blocks = new long[16];
            int n = 0;
            synchronized (state) {
                failure.check();
                long at = block;
                while (true) {
                    int s = state.index.ceiling(at);
                    if (s < 0 || state.index.block(s) >= block + count) {
                        break;
                    }
                    if (n == slots.length) {
                        slots = java.util.Arrays.copyOf(slots, n * 2);
                        blocks = java.util.Arrays.copyOf(blocks, n * 2);
                    }
                    slots[n] = s;
                    blocks[n++] = state.index.block(s);
                    at = state.index.block(s) + 1;
                }
            }
            op.run(n > 0);
            if (n > 0) {
                committer.forgetDurably(slots, blocks, n);
            } else if ((flags & BlockDevice.FUA) == 0) {
                synchronized (state) {
                    state.forwardFlush = true;
                }
            }
        } finally {
            committer.lock.unlock();
        }
    }

    /**
     * Takes the committer's lock once no writeback batch covers {@code [block, block + count)}:
     * a batch writes its blocks to the backing device without that lock, and an older copy it
     * writes back must not land after this request's backing write. Holding the lock, no batch
     * can start (a batch is chosen under it). Waits only for a batch over these blocks.
     */
    private void lockClearOfWriteback(long block, int count) throws IOException {
        while (true) {
            synchronized (state) {
                while (state.writebackCovers(block, count)) {
                    try {
                        state.wait();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new java.io.InterruptedIOException("interrupted waiting for the writeback of blocks "
                                + block + "+" + count);
                    }
                }
            }
            committer.lock.lock();
            synchronized (state) {
                if (!state.writebackCovers(block, count)) {
                    return;
                }
            }
            committer.lock.unlock();
        }
    }

    /** A foreground write to the backing device, timed by the busy meter the writeback controller paces on. */
    private void aroundWrite(long offset, ByteBuffer data, int flags) throws IOException {
        counters.busy.begin();
        try {
            backing.write(offset, data, flags);
        } finally {
            counters.busy.end();
        }
    }
}
