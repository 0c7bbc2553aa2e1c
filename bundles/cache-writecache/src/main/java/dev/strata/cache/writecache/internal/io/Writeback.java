package dev.strata.cache.writecache.internal.io;

import dev.strata.api.BlockDevice;
import dev.strata.cache.support.buffer.Buffers;
import dev.strata.cache.support.writeback.Cancellation;
import dev.strata.cache.support.writeback.WritebackBatcher;
import dev.strata.cache.writecache.internal.index.SlotIndex;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * Writeback of committed blocks: a batch is chosen (the oldest blocks, or the next ones in
 * backing order), read from the cache (one read per run of consecutive slots), written to the
 * backing device by cache-support's {@link WritebackBatcher} (sorted by backing block, adjacent
 * blocks merged into one write of at most {@link #MAX_RUN_BYTES}, several in flight), the backing
 * device flushed, and only then are the slots freed durably ({@link Committer#forgetDurably}).
 *
 * <h2>Locking</h2>
 * One batch at a time ({@link #batchLock}: the batcher and the buffers are the batch's). The
 * committer's lock is held only to choose the batch and to remove it afterwards, never while the
 * batch waits on the backing device: a foreground FLUSH or FUA commit runs meanwhile. What keeps
 * that safe:
 * <ul>
 * <li>the batch's slots are marked {@link CacheState#underWriteback}: none is overwritten in place
 *     (they are committed anyway) nor chosen again, and a commit or removal that forgets one
 *     releases it for reuse only when the batch ends ({@link CacheState#releaseOrDefer}), so the
 *     data read and written back is the block's;
 * <li>a foreground write of a block under writeback takes a new slot (a committed slot is never
 *     overwritten); the removal at the end takes a slot out only if the index still maps the
 *     block to it with the seq_count the batch read, so the newer copy stays cached and dirty;
 * <li>a foreground request that writes the backing device over cached blocks (write-around,
 *     discard, write-zeroes) first waits until no batch in progress covers its blocks
 *     ({@link CacheState#writebackCovers}), so an older copy written back can never land on the
 *     backing device after it;
 * <li>a slot leaves the cache only after its data is durable on the backing device (flushed) and
 *     its FREE entry durable in the cache metadata, as before.
 * </ul>
 * Lock order: {@link #batchLock} → the committer's lock → slot lock → state monitor.
 *
 * <h2>Cancellation</h2>
 * {@link #batchLock} is taken interruptibly (a caller queued behind a batch stuck at a closed gate
 * below is cancelled by its interrupt), and the batcher ends a batch when its caller is
 * interrupted or its abandon check turns true: the runs in flight are interrupted and waited for,
 * then it throws {@link InterruptedIOException}. Such a batch is not flushed and frees nothing:
 * its slots only leave {@link CacheState#underWriteback}, still dirty, once every run it started
 * has ended.
 */
final class Writeback {
    private final CacheState state;
    private final Committer committer;
    private final BlockDevice cache;
    private final BlockDevice backing;
    private final Stats counters;
    private final int bs;
    /** One batch at a time; held across the batch's backing I/O (no foreground request takes it). */
    private final ReentrantLock batchLock = new ReentrantLock();
    /** Sorted, merged backing writes, several in flight (one batch at a time: {@link #batchLock}). */
    private final WritebackBatcher batcher;
    private final WritebackBatcher.Backing backingWriter;
    private static final BooleanSupplier NEVER = WritebackBatcher.NEVER;
    /**
     * The running batch's "abandon now" (the daemon's stop; {@link #NEVER} for the others), read by
     * the batcher's threads before each backing write: set per batch under {@link #batchLock}.
     */
    private volatile BooleanSupplier abandon = NEVER;
    private ByteBuffer data;
    /** Every entry of a batch is a whole block (partial blocks are merged into their slot on write). */
    private int[] valid = new int[0];
    // the batch, reused between batches (grown when a larger one is asked for): no allocation per batch
    private long[] heapSeq = new long[0];
    private int[] slots = new int[0];
    private long[] blocks = new long[0];
    private long[] seqs = new long[0];
    /** The batch's blocks sorted, published in {@link CacheState} while the batch runs. */
    private long[] covered = new long[0];

    Writeback(CacheState state, Committer committer, BlockDevice cache, BlockDevice backing, Stats counters,
            boolean sorted) {
        this.state = state;
        this.committer = committer;
        this.cache = cache;
        this.backing = backing;
        this.counters = counters;
        this.bs = state.layout.blockSize();
        // unsorted: the benchmarks' baseline only (Options.unsortedWriteback)
        this.batcher = new WritebackBatcher(bs, sorted ? MAX_RUN_BYTES / bs : 1, sorted, WritebackBatcher.IN_FLIGHT);
        this.backingWriter = (offset, src) -> {
            if (abandon.getAsBoolean()) {
                throw abandoned();
            }
            backing.write(offset, src, 0);
        };
    }

    /** Ends the batcher's writeback I/O threads. */
    void close() {
        batcher.close();
    }

    /** Most bytes merged into one backing write (the batcher stages a run in a buffer this big). */
    static final int MAX_RUN_BYTES = 1 << 20;

    private boolean eligible(int slot) {
        return state.index.block(slot) != SlotIndex.NONE && state.committed(slot) && !state.underWriteback(slot)
                && !state.pending(slot);
    }

    /**
     * Writes back up to {@code max} of the oldest committed blocks (lowest seq_count). Returns
     * how many; 0 when none is committed.
     */
    int oldest(int max) throws IOException {
        return oldest(max, Long.MAX_VALUE);
    }

    /** As {@link #oldest(int)}, only blocks stamped {@code maxSeq} or lower. */
    int oldest(int max, long maxSeq) throws IOException {
        return oldest(max, maxSeq, NEVER);
    }

    /**
     * As {@link #oldest(int, long)}; once {@code abandon} says so, the batch issues no further
     * backing write and no flush and marks nothing clean: it interrupts the writes already issued
     * and waits for them to end (their slots stay under writeback until then) and throws an
     * {@link InterruptedIOException}. Its blocks stay dirty, written back later (or by the next
     * owner of the devices).
     */
    int oldest(int max, long maxSeq, BooleanSupplier abandon) throws IOException {
        lockBatch();
        try {
            this.abandon = abandon;
            grow(max);
            int n;
            committer.lock.lock();
            try {
                synchronized (state) {
                    // a bounded max-heap on seq_count keeps the max oldest in one pass over the slots
                    long[] hs = heapSeq;
                    int[] hsl = slots;
                    n = 0;
                    for (int s = 0; s < state.slots(); s++) {
                        if (!eligible(s) || state.index.seq(s) > maxSeq) {
                            continue;
                        }
                        long q = state.index.seq(s);
                        if (n < max) {
                            hs[n] = q;
                            hsl[n] = s;
                            up(hs, hsl, n++);
                        } else if (q < hs[0]) {
                            hs[0] = q;
                            hsl[0] = s;
                            down(hs, hsl, n);
                        }
                    }
                    claim(n);
                }
            } finally {
                committer.lock.unlock();
            }
            return run(n);
        } finally {
            this.abandon = NEVER;
            batchLock.unlock();
        }
    }

    /**
     * Writes back up to {@code max} committed blocks at or after backing block {@code from}, in
     * backing order. Returns the block after the last one looked at ({@code -1}: the end), and
     * counts into {@code done[0]}.
     */
    long inOrder(long from, int max, long[] done) throws IOException {
        lockBatch();
        try {
            grow(max);
            int n = 0;
            long at = from;
            committer.lock.lock();
            try {
                synchronized (state) {
                    while (n < max) {
                        int s = state.index.ceiling(at);
                        if (s < 0) {
                            at = -1;
                            break;
                        }
                        at = state.index.block(s) + 1;
                        if (eligible(s)) {
                            slots[n++] = s;
                        }
                    }
                    claim(n);
                }
            } finally {
                committer.lock.unlock();
            }
            done[0] += run(n);
            return at;
        } finally {
            batchLock.unlock();
        }
    }

    /** Takes {@link #batchLock}; an interrupt while another batch holds it ends the wait. */
    private void lockBatch() throws InterruptedIOException {
        try {
            batchLock.lockInterruptibly();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("writeback interrupted waiting for the batch in progress");
        }
    }

    private void grow(int max) {
        if (slots.length < max) {
            int len = Math.max(max, 64);
            heapSeq = new long[len];
            slots = new int[len];
            blocks = new long[len];
            seqs = new long[len];
            covered = new long[len];
        }
    }

    /**
     * Under the committer's lock and the state monitor: takes slots {@code [0, n)} for the batch
     * (in cache order, so that consecutive slots are read with one request), notes each one's
     * block and seq_count, marks them under writeback and publishes their blocks.
     */
    private void claim(int n) {
        if (n == 0) {
            return;
        }
        Arrays.sort(slots, 0, n);
        for (int i = 0; i < n; i++) {
            blocks[i] = state.index.block(slots[i]);
            seqs[i] = state.index.seq(slots[i]);
        }
        System.arraycopy(blocks, 0, covered, 0, n);
        Arrays.sort(covered, 0, n);
        state.beginWriteback(slots, covered, n);
    }

    /** The batch's I/O, with no lock that foreground requests take; then its removal under the committer's lock. */
    private int run(int n) throws IOException {
        if (n == 0) {
            return 0;
        }
        boolean ended = false;
        try {
            ByteBuffer data = buffer(n);
            int k = 0;
            while (k < n) {
                int m = k + 1;
                while (m < n && slots[m] == slots[m - 1] + 1) {
                    m++;
                }
                cache.read(state.layout.slotOffset(slots[k]), data.slice(k * bs, (m - k) * bs));
                k = m;
            }
            if (valid.length < n) {
                valid = new int[Math.max(n, 64)];
                Arrays.fill(valid, batcher.fullMask());
            }
            // the batcher sorts by backing block, merges adjacent blocks and keeps several runs in
            // flight; it returns once every run has ended, so the flush covers them all
            batcher.write(n, blocks, valid, data, backingWriter, abandon);
            if (abandon.getAsBoolean()) {
                throw abandoned(); // unflushed: nothing may be marked clean
            }
            backing.flush();
            committer.lock.lock();
            try {
                synchronized (state) {
                    state.endWriteback(slots, n);
                }
                ended = true;
                committer.forgetDurably(slots, blocks, seqs, n);
            } finally {
                committer.lock.unlock();
            }
        } catch (IOException | RuntimeException e) {
            if (!Cancellation.isCancellation(e)) {
                counters.writebackErrors.increment();
            }
            if (!ended) {
                synchronized (state) {
                    state.endWriteback(slots, n);
                }
            }
            throw e;
        }
        counters.writtenBack(n);
        counters.writebackBatches.increment();
        return n;
    }

    private static InterruptedIOException abandoned() {
        return new InterruptedIOException("writeback batch abandoned (stopping)");
    }

    /** The batch's data buffer (entry i at i * bs), kept between batches (one batch at a time). */
    private ByteBuffer buffer(int n) {
        if (data == null || data.capacity() < n * bs) {
            // a whole number of alignment units: Buffers.aligned trims both ends of its allocation
            // to 4096, so with 512-byte blocks a size like 252 * 512 could come out short (seen
            // in the 512-byte crash model: "newLimit > capacity")
            int bytes = Math.max(n, 64) * bs;
            data = Buffers.aligned((bytes + Buffers.ALIGNMENT - 1) / Buffers.ALIGNMENT * Buffers.ALIGNMENT);
        }
        return data.clear();
    }

    private static void up(long[] h, int[] s, int i) {
        while (i > 0) {
            int p = (i - 1) / 2;
            if (h[p] >= h[i]) {
                return;
            }
            swap(h, s, p, i);
            i = p;
        }
    }

    private static void down(long[] h, int[] s, int n) {
        int i = 0;
        while (true) {
            int l = 2 * i + 1;
            int r = l + 1;
            int m = i;
            if (l < n && h[l] > h[m]) {
                m = l;
            }
            if (r < n && h[r] > h[m]) {
                m = r;
            }
            if (m == i) {
                return;
            }
            swap(h, s, i, m);
            i = m;
        }
    }

    private static void swap(long[] h, int[] s, int a, int b) {
        long t = h[a];
        h[a] = h[b];
        h[b] = t;
        int u = s[a];
        s[a] = s[b];
        s[b] = u;
    }
}
