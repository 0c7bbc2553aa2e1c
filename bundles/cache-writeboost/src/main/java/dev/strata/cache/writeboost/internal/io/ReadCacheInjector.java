package dev.strata.cache.writeboost.internal.io;

import dev.strata.cache.support.buffer.Buffers;
import dev.strata.cache.support.guard.SequentialRuns;
import dev.strata.cache.support.guard.TouchStamps;
import dev.strata.cache.writeboost.internal.format.Layout;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.LongAdder;

/**
 * Read caching ({@code read_cache_threshold}): the staging area between a read miss and the log.
 *
 * <h2>What is staged</h2>
 * A read whose sequential run (the request included) is at most {@code read_cache_threshold}
 * blocks long copies each <em>full</em> 4 KiB block it had to read from the backing device (a
 * miss: no cached copy at all) into a free cell of a preallocated staging area. When no cell is
 * free the block is simply not staged: the reader never waits and nothing is allocated per block.
 * The injector daemon later appends staged blocks to the log as CLEAN entries (never written
 * back, recovered as clean, dropped without writeback when their segment is reused).
 *
 * <h2>Why a staged copy is never stale</h2>
 * Between the reader's look-up of the index and the injection, a write can change the block
 * (through the log, bypassing it, write-zeroes, discard). Every such change <em>touches</em> the
 * block under the cache's lock at the moment it takes effect: a cached write when its copy enters
 * the index, a bypass when its backing I/O has ended (whether it succeeded or not), through the
 * shared {@link TouchStamps} guard. A reader takes a snapshot under the lock when it classifies
 * the blocks, before it reads the backing device; the staged cell keeps that snapshot. At
 * injection, under the lock, the cell is dropped if the block was touched after its snapshot. A
 * touch is either before the snapshot — then the reader found the block cached (cached write), or
 * read the backing device after the bypass had ended — or after it, and the cell is dropped.
 * The injector also drops a cell whose block is cached by then or lies in a bypass in flight
 * (see {@link WriteboostCache}); both checks happen in the same lock hold as the append.
 *
 * <p>All state except the counters and the (deliberately racy) stream detection is guarded by
 * the owning cache's lock; the cells are allocated once, the first time read caching is enabled.
 */
final class ReadCacheInjector {
    /** Staging cells (4 KiB each): 4 MiB, allocated when read caching is first enabled. */
    static final int CELLS = 1024;
    private static final int TOUCH_BITS = 13;
    private static final int BS = Layout.BLOCK;

    /** What the log did with one staged block. */
    enum Outcome {
        INJECTED,
        /** Not wanted (cached by now, in a bypass in flight, write_around, failed): the cell is freed. */
        DROPPED,
        /** No log room without waiting: the cell stays staged for a later try. */
        NO_ROOM
    }

    /** Appends a staged block to the log as a clean entry; called with the cache's lock held. */
    @FunctionalInterface
    interface Log {
        Outcome appendClean(long block, ByteBuffer src, int srcIndex) throws IOException;
    }

    // ---- guarded by the cache's lock ----
    private ByteBuffer cells;
    private long[] cellBlock;
    private long[] cellSnap;
    private int[] free;
    private int freeTop;
    private int[] ready;
    private int readyHead;
    private int readyCount;
    private TouchStamps touched;
    private volatile boolean active;

    /** Sequential run detection of reads (racy on purpose, see SequentialRuns). */
    private final SequentialRuns readRuns = new SequentialRuns();

    // ---- counters ----
    final LongAdder staged = new LongAdder();
    final LongAdder injected = new LongAdder();
    final LongAdder cancelled = new LongAdder();
    final LongAdder dropped = new LongAdder();
    final LongAdder sequential = new LongAdder();

    /** Allocates the staging area (once). Lock held. */
    void activate() {
        if (cells != null) {
            return;
        }
        cells = Buffers.aligned(CELLS * BS);
        cellBlock = new long[CELLS];
        cellSnap = new long[CELLS];
        free = new int[CELLS];
        for (int i = 0; i < CELLS; i++) {
            free[i] = CELLS - 1 - i;
        }
        freeTop = CELLS;
        ready = new int[CELLS];
        touched = new TouchStamps(TOUCH_BITS);
        active = true;
    }

    /** Whether the staging area exists (read caching or writethrough was on once). */
    boolean active() {
        return active;
    }

    /**
     * Whether a read of {@code len} bytes at {@code offset} may stage its misses: read caching is
     * on and the sequential run the read belongs to is at most {@code thresholdBlocks} long.
     * Called without the lock, for every read while read caching is on.
     */
    boolean wants(long offset, int len, int thresholdBlocks, boolean writeAround) {
        if (thresholdBlocks <= 0 || writeAround || !active) {
            return false;
        }
        if (len < BS) {
            return false; // no full block to stage (and a run of sub-block reads is not counted)
        }
        if (readRuns.extend(offset, len) > (long) thresholdBlocks * BS) {
            sequential.add((len + BS - 1) / BS);
            return false;
        }
        return true;
    }

    /** The stamp a reader keeps from its index look-up on. Lock held. */
    long snapshot() {
        return touched == null ? 0 : touched.snapshot();
    }

    /** {@code block}'s data changes now (a cached write enters the index). Lock held. */
    void touch(long block) {
        if (touched != null) {
            touched.touch(block);
        }
    }

    /** Blocks {@code [from, to)} changed on the backing device (a bypass ended). Lock held. */
    void touchRange(long from, long to) {
        if (touched != null) {
            touched.touchRange(from, to);
        }
    }

    /** Whether a write may have changed {@code block} since the snapshot {@code snap}. Lock held. */
    boolean stale(long block, long snap) {
        return touched.stale(block, snap);
    }

    /**
     * Stages the block read from the backing device at {@code src[srcIndex, srcIndex + 4096)};
     * returns whether it was. Lock held (a 4 KiB copy).
     */
    boolean stage(long block, ByteBuffer src, int srcIndex, long snap) {
        if (cells == null) {
            return false;
        }
        if (stale(block, snap)) {
            cancelled.increment();
            return false;
        }
        if (freeTop == 0) {
            dropped.increment();
            return false;
        }
        int c = free[--freeTop];
        cells.put(c * BS, src, srcIndex, BS);
        cellBlock[c] = block;
        cellSnap[c] = snap;
        ready[(readyHead + readyCount) % CELLS] = c;
        readyCount++;
        staged.increment();
        return true;
    }

    /** Cells waiting for the injector. Lock held. */
    int pending() {
        return readyCount;
    }

    /**
     * Injects up to {@code max} staged blocks, oldest first, through {@code log}; returns whether
     * any cell was consumed. Lock held.
     */
    boolean inject(Log log, int max) throws IOException {
        boolean progress = false;
        for (int k = 0; k < max && readyCount > 0; k++) {
            int c = ready[readyHead];
            long block = cellBlock[c];
            if (stale(block, cellSnap[c])) {
                cancelled.increment();
            } else {
                Outcome o = log.appendClean(block, cells, c * BS);
                if (o == Outcome.NO_ROOM) {
                    break;
                }
                (o == Outcome.INJECTED ? injected : dropped).increment();
            }
            readyHead = (readyHead + 1) % CELLS;
            readyCount--;
            free[freeTop++] = c;
            progress = true;
        }
        return progress;
    }

    /** Forgets every staged block (suspend, close, failure). Lock held. */
    void clear() {
        if (readyCount > 0) {
            dropped.add(readyCount);
        }
        while (readyCount > 0) {
            free[freeTop++] = ready[readyHead];
            readyHead = (readyHead + 1) % CELLS;
            readyCount--;
        }
    }
}
