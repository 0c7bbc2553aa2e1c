package dev.strata.cache.writecache.internal.io;

import dev.strata.api.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;

/**
 * Writes, write-zeroes and discards.
 *
 * <ul>
 * <li>A block cached in a slot that is in no commit yet is overwritten in place; any other
 *     block takes a free slot (the older copy, if committed, is freed after the next commit).
 *     Free slots are taken from the cursor on, so a multi-block write lands in physically
 *     consecutive slots and goes to the cache device as one write.
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
    }

    /** A piece of a write: {@code count} blocks of the source at {@code srcOffset}, to slots from {@code slot} (-1: around). */
    private record Piece(int slot, long block, int count, int srcOffset) {
    }

    /**
     * Writes whole blocks {@code [block, block + count)} from {@code src} (position at the first
     * byte). Data writes to the cache of a FUA request are left in {@code fuaWrites} for the
     * caller's commit to wait for.
     */
    void writeBlocks(long block, int count, ByteBuffer src, int flags, boolean around, List<InFlight.Write> fuaWrites)
            throws IOException {
        boolean fua = (flags & BlockDevice.FUA) != 0;
        if (around) {
            aroundDropping(block, count, src, flags);
            return;
        }
        int done = 0;
        while (done < count) {
            List<Piece> pieces = new ArrayList<>();
            boolean blocked = false;
            InFlight.Write write = null;
            synchronized (state) {
                failure.check();
                Piece cur = null;
                for (; done < count; done++) {
                    long b = block + done;
                    int s = state.index.find(b);
                    int slot;
                    if (s >= 0 && state.reusable(s)) {
                        slot = s;
                        counters.writeHitsUncommitted.increment();
                    } else {
                        long run = state.free.take(1);
                        if (run < 0) {
                            if (s >= 0) {
                                blocked = true;
                                break;
                            }
                            slot = -1;
                            counters.around(1);
                        } else {
                            slot = (int) (run >>> 32);
                            state.place(slot, b, s);
                            if (s >= 0) {
                                counters.writeHitsCommitted.increment();
                            } else {
                                counters.writesAllocated.increment();
                            }
                        }
                    }
                    if (cur != null && (slot < 0 ? cur.slot < 0 : contiguous && cur.slot >= 0 && slot == cur.slot + cur.count)) {
                        cur = new Piece(cur.slot, cur.block, cur.count + 1, cur.srcOffset);
                        pieces.set(pieces.size() - 1, cur);
                    } else {
                        cur = new Piece(slot, b, 1, done * bs);
                        pieces.add(cur);
                    }
                }
                List<Piece> cached = pieces;
                int lo = Integer.MAX_VALUE;
                int hi = -1;
                for (Piece p : pieces) {
                    if (p.slot < 0) {
                        cached = null; // some went around: filter (rare; no copy on the common path)
                    } else {
                        lo = Math.min(lo, p.slot);
                        hi = Math.max(hi, p.slot + p.count - 1);
                    }
                }
                if (cached == null) {
                    cached = new ArrayList<>();
                    for (Piece p : pieces) {
                        if (p.slot >= 0) {
                            cached.add(p);
                        }
                    }
                }
                if (!cached.isEmpty()) {
                    List<Piece> mine = cached;
                    ByteBuffer data = src.duplicate();
                    int base = src.position();
                    write = inFlight.register(() -> writeSlots(mine, data, base), lo, hi);
                }
            }
            for (Piece p : pieces) {
                if (p.slot < 0) {
                    ByteBuffer part = src.slice(src.position() + p.srcOffset, p.count * bs);
                    aroundWrite(p.block * bs, part, fua ? BlockDevice.FUA : 0);
                    if (!fua) {
                        synchronized (state) {
                            state.forwardFlush = true;
                        }
                    }
                }
            }
            if (write != null) {
                if (fua) {
                    if (fuaPool != null) {
                        fuaPool.execute(write.task());
                    }
                    fuaWrites.add(write);
                } else {
                    InFlight.await(write);
                }
            }
            if (blocked) {
                counters.writesBlockedOnFreelist.increment();
                makeRoom();
            }
        }
    }

    private void writeSlots(List<Piece> pieces, ByteBuffer data, int base) throws IOException {
        try {
            for (Piece p : pieces) {
                cache.write(state.layout.slotOffset(p.slot), data.slice(base + p.srcOffset, p.count * bs), 0);
            }
        } catch (IOException | RuntimeException e) {
            failure.set(e);
            throw e;
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
                        InFlight.awaitAll(inFlight.overlapping(s, s));
                        ByteBuffer merged = ByteBuffer.allocate(bs);
                        try {
                            cache.read(state.layout.slotOffset(s), merged);
                            merged.put(inBlock, src, src.position(), src.remaining());
                            cache.write(state.layout.slotOffset(target), merged.clear(), 0);
                        } catch (IOException | RuntimeException e) {
                            failure.set(e);
                            throw e;
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
