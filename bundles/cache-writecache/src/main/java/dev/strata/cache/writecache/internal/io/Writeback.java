package dev.strata.cache.writecache.internal.io;

import dev.strata.api.BlockDevice;
import dev.strata.cache.support.buffer.Buffers;
import dev.strata.cache.support.writeback.WritebackBatcher;
import dev.strata.cache.writecache.internal.index.SlotIndex;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Writeback of committed blocks: a batch is chosen (the oldest blocks, or the next ones in
 * backing order), read from the cache (one read per run of consecutive slots), written to the
 * backing device by cache-support's {@link WritebackBatcher} (sorted by backing block, adjacent
 * blocks merged into one write of at most {@link #MAX_RUN_BYTES}), the backing
 * device flushed, and only then are the slots freed durably ({@link Committer#forgetDurably}).
 * A batch runs under the committer's lock, so no commit or removal interleaves with it.
 */
final class Writeback {
    private final CacheState state;
    private final Committer committer;
    private final BlockDevice cache;
    private final BlockDevice backing;
    private final Stats counters;
    private final int bs;
    /** Sorted, merged backing writes (one batch at a time: batches run under the committer's lock). */
    private final WritebackBatcher batcher;
    private ByteBuffer data;
    /** Every entry of a batch is a whole block (partial blocks are merged into their slot on write). */
    private int[] valid = new int[0];

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
        committer.lock.lock();
        try {
            int[] slots;
            int n;
            synchronized (state) {
                // a bounded max-heap on seq_count keeps the max oldest in one pass over the slots
                long[] hs = new long[max];
                int[] hsl = new int[max];
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
                slots = Arrays.copyOf(hsl, n);
            }
            return run(slots, n);
        } finally {
            committer.lock.unlock();
        }
    }

    /**
     * Writes back up to {@code max} committed blocks at or after backing block {@code from}, in
     * backing order. Returns the block after the last one looked at ({@code -1}: the end), and
     * counts into {@code done[0]}.
     */
    long inOrder(long from, int max, long[] done) throws IOException {
        committer.lock.lock();
        try {
            int[] slots = new int[max];
            int n = 0;
            long at = from;
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
            }
            done[0] += run(slots, n);
            return at;
        } finally {
            committer.lock.unlock();
        }
    }

    private int run(int[] slots, int n) throws IOException {
        if (n == 0) {
            return 0;
        }
        // in cache order, so that consecutive slots are read with one request; the batcher sorts
        // by backing block and merges adjacent blocks into one backing write
        Arrays.sort(slots, 0, n);
        long[] blocks = new long[n];
        synchronized (state) {
            for (int i = 0; i < n; i++) {
                blocks[i] = state.index.block(slots[i]);
                state.setUnderWriteback(slots[i], true);
            }
        }
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
            batcher.write(n, blocks, valid, data, (offset, src) -> backing.write(offset, src, 0));
            backing.flush();
        } catch (IOException | RuntimeException e) {
            counters.writebackErrors.increment();
            clearUnderWriteback(slots, n);
            throw e;
        }
        clearUnderWriteback(slots, n);
        committer.forgetDurably(slots, blocks, n);
        counters.writtenBack.add(n);
        counters.writebackBatches.increment();
        return n;
    }

    /** The batch's data buffer (entry i at i * bs), kept between batches (writeback runs one batch at a time). */
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

    private void clearUnderWriteback(int[] slots, int n) {
        synchronized (state) {
            for (int i = 0; i < n; i++) {
                state.setUnderWriteback(slots[i], false);
            }
        }
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
