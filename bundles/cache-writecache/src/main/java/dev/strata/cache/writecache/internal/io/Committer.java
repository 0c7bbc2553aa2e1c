package dev.strata.cache.writecache.internal.io;

import dev.strata.api.BlockDevice;
import dev.strata.cache.writecache.internal.format.Layout;
import dev.strata.cache.writecache.internal.format.Superblock;
import dev.strata.cache.writecache.internal.index.SlotIndex;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The metadata I/O of the cache: commits, and the durable removal of entries. One at a time
 * ({@link #lock}): a later snapshot of a sector must never be overtaken by an earlier one.
 *
 * <h2>Commit order (dm-writecache SSD mode, with the 2020 fix)</h2>
 * <ol>
 * <li>under the state lock: encode the changed metadata sectors, note the in-flight registry's
 *     last ticket (every data write registered so far) and the older copies superseded, advance
 *     the in-memory seq_count;
 * <li>write the changed metadata;
 * <li><b>wait for every data write up to that ticket</b> (the metadata may name slots whose data
 *     is still on its way);
 * <li>flush the cache device;
 * <li>write the superblock with the next seq_count, FUA (durable);
 * <li>flush the backing device if writes went around to it (the 5.7 fix);
 * <li>free the slots of the older copies (their entries become FREE, written with the next metadata).
 * </ol>
 * Before 2020 the kernel waited for the data writes only after the flush, so a data write still
 * in flight at the flush could be lost while the superblock naming it survived.
 * {@link Options#commitOrder} can reproduce that order, for the test that proves the crash
 * model catches it; nothing else sets it.
 *
 * <p>Lock order: {@link #lock} → the slot lock (write) → the state monitor. Writeback takes
 * {@link #lock} only to choose a batch and to remove it afterwards, never across its backing
 * I/O: a slot it writes back is marked {@link CacheState#underWriteback} meanwhile, and a commit
 * or removal that forgets such a slot leaves its release to the end of the batch
 * ({@link CacheState#releaseOrDefer}).
 */
final class Committer {
    final ReentrantLock lock = new ReentrantLock();
    private final CacheState state;
    private final InFlight inFlight;
    private final ReadWriteLock slotLock;
    private final BlockDevice cache;
    private final BlockDevice backing;
    private final Failure failure;
    private final Stats counters;
    private final Options.CommitOrder order;
    private volatile Superblock superblock;
    /** forgetDurably's work arrays, reused (it runs under {@link #lock}). */
    private int[] forgotten = new int[0];
    private long[] gone = new long[0];

    Committer(CacheState state, InFlight inFlight, ReadWriteLock slotLock, BlockDevice cache, BlockDevice backing,
            Failure failure, Stats counters, Options.CommitOrder order, Superblock superblock) {
        this.state = state;
        this.inFlight = inFlight;
        this.slotLock = slotLock;
        this.cache = cache;
        this.backing = backing;
        this.failure = failure;
        this.counters = counters;
        this.order = order;
        this.superblock = superblock;
    }

    Superblock superblock() {
        return superblock;
    }

    /** Makes every write that completed before the call durable (FLUSH / FUA semantics). */
    void commit() throws IOException {
        lock.lock();
        try {
            commitLocked();
        } finally {
            lock.unlock();
        }
    }

    void commitLocked() throws IOException {
        failure.check();
        List<CacheState.SectorRun> runs;
        long writes;
        int[] superseded;
        boolean forward;
        long next;
        synchronized (state) {
            boolean needed = state.uncommitted > 0 || state.hasDirtySectors() || state.pendingCount() > 0;
            if (needed && state.current + 1 >= SlotIndex.SEQ_LIMIT) { // 2^58 commits: 9,000 years at a million a second
                throw new IOException("writecache: seq_count reached " + state.current
                        + ", the most the index keeps in memory; nothing more can be committed");
            }
            forward = state.forwardFlush;
            state.forwardFlush = false;
            if (!needed) {
                runs = null;
                writes = 0;
                superseded = new int[0];
                next = state.current;
            } else {
                state.noteSnapshot(state.current);
                runs = state.takeDirtySectors();
                superseded = state.takePending();
                writes = state.advance(inFlight);
                next = state.current;
                state.uncommitted = 0;
            }
        }
        try {
            if (runs != null) {
                try {
                    writeRuns(runs);
                    if (order == Options.CommitOrder.WAIT_THEN_FLUSH) {
                        inFlight.awaitUpTo(writes);
                    }
                    cache.flush();
                    if (order == Options.CommitOrder.FLUSH_THEN_WAIT) {
                        inFlight.awaitUpTo(writes);
                    }
                    Superblock sb = superblock.withSeqCount(next);
                    cache.write(0, sb.encode(), BlockDevice.FUA);
                    superblock = sb;
                } catch (IOException | RuntimeException e) {
                    failure.set(e);
                    synchronized (state) {
                        state.redirty(runs);
                    }
                    throw e;
                }
                counters.commits.increment();
            }
            if (forward) {
                backing.flush();
                counters.flushesForwarded.increment();
            }
        } catch (IOException | RuntimeException e) {
            if (forward) {
                synchronized (state) {
                    state.forwardFlush = true;
                }
            }
            throw e;
        }
        if (runs != null) {
            slotLock.writeLock().lock();
            try {
                synchronized (state) {
                    state.durable = next;
                    for (int s : superseded) {
                        state.forget(s);
                        state.releaseOrDefer(s);
                    }
                }
            } finally {
                slotLock.writeLock().unlock();
            }
        }
    }

    /**
     * With {@link #lock} held: removes {@code slots} durably — each becomes FREE in memory, every
     * changed metadata sector is written and the cache device flushed — then releases them for
     * reuse. Slots whose block the index no longer maps to them are skipped (a newer copy took
     * over; the commit frees them).
     */
    void forgetDurably(int[] slots, long[] blocks, int count) throws IOException {
        forgetDurably(slots, blocks, null, count);
    }

    /**
     * As {@link #forgetDurably(int[], long[], int)}, and a slot is removed only if it still holds
     * the copy stamped {@code seqs[i]} (writeback: the copy it wrote back, not a newer one).
     */
    void forgetDurably(int[] slots, long[] blocks, long[] seqs, int count) throws IOException {
        if (forgotten.length < count) {
            forgotten = new int[Math.max(count, 64)];
            gone = new long[forgotten.length];
        }
        int n = 0;
        int[] olderCopies;
        List<CacheState.SectorRun> runs;
        slotLock.writeLock().lock();
        try {
            synchronized (state) {
                for (int i = 0; i < count; i++) {
                    if (state.index.find(blocks[i]) == slots[i] && (seqs == null || state.index.seq(slots[i]) == seqs[i])) {
                        state.unlink(blocks[i], slots[i]);
                        gone[n] = blocks[i];
                        forgotten[n++] = slots[i];
                    }
                }
                // an older copy waiting for a commit still has a valid entry on the device: it must
                // go too, or a crash would bring it back once the newer copy is gone
                Arrays.sort(gone, 0, n);
                olderCopies = state.takePendingOf(gone, n);
                for (int s : olderCopies) {
                    state.forget(s);
                }
                runs = state.takeDirtySectors();
            }
        } finally {
            slotLock.writeLock().unlock();
        }
        try {
            writeRuns(runs);
            cache.flush();
        } catch (IOException | RuntimeException e) {
            failure.set(e);
            synchronized (state) {
                state.redirty(runs);
            }
            throw e;
        }
        // a forgotten slot may still have a data write in flight (a dropped, uncommitted copy):
        // it must land before the slot can be handed to another block
        inFlight.awaitOverlapping(Integer.MIN_VALUE, Integer.MAX_VALUE, inFlight.lastTicket());
        synchronized (state) {
            for (int i = 0; i < n; i++) {
                state.releaseOrDefer(forgotten[i]);
            }
            for (int s : olderCopies) {
                state.releaseOrDefer(s);
            }
            state.notifyAll();
        }
    }

    private void writeRuns(List<CacheState.SectorRun> runs) throws IOException {
        for (CacheState.SectorRun r : runs) {
            cache.write(Layout.sectorOffset(r.first()), r.bytes().duplicate().clear(), 0);
        }
    }
}
