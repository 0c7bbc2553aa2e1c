package dev.strata.cache.readcache.internal.io;

import dev.strata.api.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * One read miss's readahead ({@code readahead}, bcache's knob, here aligned): the read's blocks
 * grow to the aligned extent of {@code readahead} bytes around them, read from the origin in one
 * request, and the extent's other blocks that are neither cached nor pending are promoted into
 * <b>free</b> slots with the read's own blocks. Over an origin whose cost is per request (a
 * remote export, a disk's seek) the neighbours come for about the price of the miss; with
 * block_size kept small, a write still invalidates only the blocks it covers.
 *
 * <p>Why it is never stale: the extent's blocks are claimed (PENDING) under the read's stamp
 * snapshot, taken before the extent is read from the origin, and promoted by the same {@link
 * Promoter} batch, so a write of any of them since the snapshot abandons its copy exactly as it
 * does the read's own blocks (rule 5 of {@link ReadCache}). Why it never pushes the hot set out:
 * {@link CacheState#planAhead} claims only while free slots remain, so a full cache does no
 * readahead at all.
 */
final class Readahead {
    /** The extent's first block. */
    final long first;
    /** The extent's blocks. */
    final int n;
    /** Claims for the extent's blocks outside the read (codes as {@link CacheState.Plan}). */
    final CacheState.Plan plan;
    private final int bs;
    private final ByteBuffer data;

    private Readahead(long first, int n, CacheState.Plan plan, int bs) {
        this.first = first;
        this.n = n;
        this.plan = plan;
        this.bs = bs;
        this.data = ByteBuffer.allocate(n * bs);
    }

    /**
     * The readahead of a read of blocks {@code [first, first + n)} planned as {@code read}, or
     * null: off, no miss, the read already as large as the extent, the extent past the origin's
     * last whole block, or no free slot for any of its other blocks.
     */
    static Readahead plan(CacheState state, long readahead, int bs, long first, int n, long originSize,
            CacheState.Plan read) {
        if (readahead <= bs || read.misses == 0 || (long) n * bs >= readahead) {
            return null;
        }
        long per = readahead / bs;
        long eFirst = first / per * per;
        long eEnd = Math.min((first + n + per - 1) / per * per, originSize / bs);
        if (eEnd < first + n || eEnd - eFirst <= n) {
            return null;
        }
        int eN = (int) (eEnd - eFirst);
        CacheState.Plan p = state.planAhead(eFirst, eN, first, n, read.snap);
        return p.promotions == 0 ? null : new Readahead(eFirst, eN, p, bs);
    }

    /** Reads the extent from the origin, one request. */
    void read(BlockDevice origin) throws IOException {
        origin.read(first * bs, data.clear());
    }

    /** Copies the extent's bytes at origin offset {@code from} into {@code dst} (to its limit). */
    void copy(long from, ByteBuffer dst) {
        dst.put(dst.position(), data, (int) (from - first * bs), dst.remaining());
    }

    /** Adds the extent's promotions to a promoter batch at {@code k}; returns the new count. */
    int addTo(long[] blocks, int[] slots, ByteBuffer[] out, int k) {
        for (int i = 0; i < n; i++) {
            if (plan.codes[i] < CacheState.Plan.MISS) {
                blocks[k] = first + i;
                slots[k] = CacheState.Plan.promoteSlot(plan.codes[i]);
                out[k++] = data.slice(i * bs, bs);
            }
        }
        return k;
    }

    /** The read failed: every claimed slot is given up. */
    void abandon(CacheState state, Meters meters) {
        for (int i = 0; i < n; i++) {
            if (plan.codes[i] < CacheState.Plan.MISS) {
                state.abandon(CacheState.Plan.promoteSlot(plan.codes[i]), first + i);
                meters.promotionsAbandoned.increment();
            }
        }
    }
}
