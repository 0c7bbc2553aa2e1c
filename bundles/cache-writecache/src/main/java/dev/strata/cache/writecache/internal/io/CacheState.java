package dev.strata.cache.writecache.internal.io;

import dev.strata.cache.writecache.internal.format.Layout;
import dev.strata.cache.writecache.internal.format.MetadataSector;
import dev.strata.cache.writecache.internal.index.FreeSlots;
import dev.strata.cache.writecache.internal.index.SlotIndex;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;

/**
 * What the cache knows in memory: the index, the free slots, which metadata sectors differ from
 * the device, the slots under writeback, older copies waiting for a commit, and the seq_counts.
 * No I/O. Guarded by its own monitor: callers hold {@code synchronized (state)}.
 *
 * <p>seq_count: every block written since the last commit snapshot is stamped {@link #current};
 * a commit snapshot advances {@code current}, and once the superblock with the new value is
 * durable, {@link #durable} follows. A slot is committed iff its seq_count is below
 * {@code durable}; only a slot stamped {@code current} may be overwritten in place (it is in no
 * commit yet).
 *
 * <p>The {@link #gate}: a write whose every block is cached in a slot it may overwrite in place
 * changes nothing here, so it does not take the monitor (32 writers on 2 cores convoyed on it);
 * it holds the gate's read lock while it looks and registers its data write. Everything that
 * changes what such a write looks at — the index, {@link #current}, the slots under writeback —
 * changes it under the monitor <em>and</em> the gate's write lock, so to an in-place write each
 * such change is atomic, and a commit snapshot is wholly before or after its registration.
 */
final class CacheState {
    final Layout layout;
    final SlotIndex index;
    final FreeSlots free;
    /**
     * See the class comment: read by in-place writes, written by every change they look at (never
     * held across I/O or a wait, but by the read-modify-write of a partial block in place).
     */
    final java.util.concurrent.locks.StampedLock gate = new java.util.concurrent.locks.StampedLock();
    private final BitSet dirtySectors = new BitSet();
    private final BitSet underWriteback = new BitSet();
    /** Slots forgotten while under writeback: released to the free list once their writeback ends. */
    private final BitSet releaseAfterWriteback = new BitSet();
    /** The backing blocks of the writeback batch in progress, sorted ({@link #writebackCount} of them). */
    private long[] writebackBlocks = new long[0];
    private int writebackCount;
    private final BitSet pendingBits = new BitSet();
    private int[] pendingDups = new int[16];
    private int pendingCount;
    long current;
    long durable;
    /** Blocks stamped {@link #current}. */
    long uncommitted;
    /** When the first of them was written (the clock of autocommit_time). */
    long firstUncommittedNanos;
    private final dev.strata.cache.support.time.Clock clock;
    /**
     * seq_count → a time by which every block stamped with it or a lower one was written (the
     * commit snapshot that closed it), at most one entry per 100 ms and 4096 in all (the clock
     * of max_age; a block is written back at most 100 ms, or one commit interval, late).
     */
    private final java.util.TreeMap<Long, Long> ages = new java.util.TreeMap<>();
    /** Writes went around to the backing device since the last flush: the next flush must flush it. */
    boolean forwardFlush;

    CacheState(Layout layout, long seqCount, dev.strata.cache.support.time.Clock clock) {
        this.clock = clock;
        this.layout = layout;
        this.index = new SlotIndex((int) layout.slots());
        this.free = new FreeSlots((int) layout.slots());
        this.current = seqCount;
        this.durable = seqCount;
    }

    int slots() {
        return index.slots();
    }

    /** Called at a commit snapshot: every block stamped {@code seq} or lower was written by now. */
    void noteSnapshot(long seq) {
        long t = clock.nanoTime();
        java.util.Map.Entry<Long, Long> last = ages.lastEntry();
        if (last != null && t - last.getValue() < 100_000_000L) {
            ages.remove(last.getKey());
        }
        ages.put(seq, t);
        if (ages.size() > 4096) {
            ages.pollFirstEntry();
        }
    }

    /**
     * The highest seq_count whose blocks were all written at or before {@code cutoffNanos}
     * (-1: none known); forgets the entries below it.
     */
    long agedSeqLimit(long cutoffNanos) {
        long limit = -1;
        for (java.util.Map.Entry<Long, Long> e : ages.entrySet()) {
            if (e.getValue() > cutoffNanos) {
                break;
            }
            limit = e.getKey();
        }
        if (limit >= 0) {
            ages.headMap(limit).clear();
        }
        return limit;
    }

    long now() {
        return clock.nanoTime();
    }

    boolean committed(int slot) {
        return index.seq(slot) < durable;
    }

    /** Whether a write may overwrite {@code slot} in place: in no commit yet, not being written back. */
    boolean reusable(int slot) {
        return index.seq(slot) == current && !underWriteback.get(slot);
    }

    void markDirty(int slot) {
        dirtySectors.set((int) Layout.sectorOf(slot));
    }

    boolean hasDirtySectors() {
        return !dirtySectors.isEmpty();
    }

    boolean underWriteback(int slot) {
        return underWriteback.get(slot);
    }

    void setUnderWriteback(int slot, boolean on) {
        long g = gate.writeLock();
        try {
            underWriteback.set(slot, on);
        } finally {
            gate.unlockWrite(g);
        }
    }

    int underWritebackCount() {
        return underWriteback.cardinality();
    }

    /**
     * Releases a forgotten slot for reuse, or, while a writeback batch still reads it or writes
     * its data to the backing device, once that batch ends ({@link #endWriteback}): a slot is
     * never handed to another block under its writeback.
     */
    void releaseOrDefer(int slot) {
        if (underWriteback.get(slot)) {
            releaseAfterWriteback.set(slot);
        } else {
            free.release(slot);
        }
    }

    /**
     * A writeback batch starts: its slots are marked and its blocks published (sorted, in the
     * caller's reused array) for {@link #writebackCovers}.
     */
    void beginWriteback(int[] slots, long[] sortedBlocks, int n) {
        long g = gate.writeLock();
        try {
            for (int i = 0; i < n; i++) {
                underWriteback.set(slots[i]);
            }
        } finally {
            gate.unlockWrite(g);
        }
        writebackBlocks = sortedBlocks;
        writebackCount = n;
    }

    /** The batch ended (written back or failed): its slots are unmarked, deferred ones released, waiters woken. */
    void endWriteback(int[] slots, int n) {
        long g = gate.writeLock();
        try {
            for (int i = 0; i < n; i++) {
                underWriteback.clear(slots[i]);
            }
        } finally {
            gate.unlockWrite(g);
        }
        for (int i = 0; i < n; i++) {
            if (releaseAfterWriteback.get(slots[i])) {
                releaseAfterWriteback.clear(slots[i]);
                free.release(slots[i]);
            }
        }
        writebackCount = 0;
        notifyAll();
    }

    /** Whether the writeback batch in progress writes any block of {@code [first, first + count)}. */
    boolean writebackCovers(long first, long count) {
        int i = Arrays.binarySearch(writebackBlocks, 0, writebackCount, first);
        if (i >= 0) {
            return true;
        }
        int next = -i - 1;
        return next < writebackCount && writebackBlocks[next] < first + count;
    }

    /**
     * Links a freshly taken slot for {@code block} (stamped current); the older holder, if any,
     * waits for the commit. {@code holder} is the slot the caller found holding the block (-1:
     * none, and the tree is not walked again to unlink it).
     */
    void place(int slot, long block, int holder) {
        long g = gate.writeLock();
        int old;
        try {
            old = holder < 0 ? -1 : index.remove(block);
            index.insert(slot, block, current);
        } finally {
            gate.unlockWrite(g);
        }
        if (old >= 0) {
            addPending(old);
        }
        if (uncommitted++ == 0) {
            firstUncommittedNanos = clock.nanoTime();
        }
        markDirty(slot);
    }

    /**
     * Links the freshly taken slots {@code [firstSlot, firstSlot + n)} for the uncached blocks
     * {@code [block, block + n)} (stamped current): {@link #place} for a run, one join into the
     * index instead of a walk per block.
     */
    void placeRun(int firstSlot, long block, int n) {
        long g = gate.writeLock();
        try {
            index.insertRun(firstSlot, block, n, current);
        } finally {
            gate.unlockWrite(g);
        }
        if (uncommitted == 0) {
            firstUncommittedNanos = clock.nanoTime();
        }
        uncommitted += n;
        dirtySectors.set((int) Layout.sectorOf(firstSlot), (int) Layout.sectorOf(firstSlot + n - 1) + 1);
    }

    private void addPending(int slot) {
        if (pendingCount == pendingDups.length) {
            pendingDups = Arrays.copyOf(pendingDups, pendingCount * 2);
        }
        pendingDups[pendingCount++] = slot;
        pendingBits.set(slot);
    }

    /** Whether {@code slot} holds an older copy waiting for the commit that frees it. */
    boolean pending(int slot) {
        return pendingBits.get(slot);
    }

    /** Takes the older copies that the commit under way supersedes. */
    int[] takePending() {
        int[] p = Arrays.copyOf(pendingDups, pendingCount);
        pendingCount = 0;
        pendingBits.clear();
        return p;
    }

    private static final int[] NO_SLOTS = new int[0];

    /** Takes the older copies of blocks in {@code sortedBlocks[0, count)} out of the pending list (their newer copy is being removed). */
    int[] takePendingOf(long[] sortedBlocks, int count) {
        if (pendingCount == 0 || count == 0) {
            return NO_SLOTS;
        }
        int[] out = new int[pendingCount];
        int n = 0;
        int keep = 0;
        for (int i = 0; i < pendingCount; i++) {
            int s = pendingDups[i];
            if (Arrays.binarySearch(sortedBlocks, 0, count, index.block(s)) >= 0) {
                out[n++] = s;
                pendingBits.clear(s);
            } else {
                pendingDups[keep++] = s;
            }
        }
        pendingCount = keep;
        return Arrays.copyOf(out, n);
    }

    int pendingCount() {
        return pendingCount;
    }

    /** Forgets what {@code slot} holds (its entry becomes FREE, to be written); the caller releases it later. */
    void forget(int slot) {
        long g = gate.writeLock();
        try {
            index.clear(slot);
        } finally {
            gate.unlockWrite(g);
        }
        markDirty(slot);
    }

    /** Unlinks {@code block} (held by {@code slot}) and forgets the slot, one change to an in-place write. */
    void unlink(long block, int slot) {
        long g = gate.writeLock();
        try {
            index.remove(block);
            index.clear(slot);
        } finally {
            gate.unlockWrite(g);
        }
        markDirty(slot);
    }

    /**
     * A commit snapshot: advances {@link #current} (so that no write overwrites in place what the
     * commit names) and returns the last data write registered before it, in one step to an
     * in-place write.
     */
    long advance(InFlight inFlight) {
        long g = gate.writeLock();
        try {
            long writes = inFlight.lastTicket();
            current++;
            return writes;
        } finally {
            gate.unlockWrite(g);
        }
    }

    /** A run of metadata sectors to write: the first sector and its encoded bytes. */
    record SectorRun(long first, ByteBuffer bytes) {
    }

    /**
     * Where {@link #takeDirtySectors} encodes, reused: its only callers are the committer's, under
     * its lock, and they have written the runs before the next call.
     */
    private ByteBuffer encoded = ByteBuffer.allocate(0);

    /**
     * Encodes every dirty metadata sector from memory, in runs of adjacent sectors (one write
     * each), and marks them clean. {@link #redirty} undoes it when the write fails.
     */
    List<SectorRun> takeDirtySectors() {
        List<SectorRun> runs = new ArrayList<>();
        int sectors = dirtySectors.cardinality();
        if (encoded.capacity() < sectors * Layout.SECTOR) {
            encoded = ByteBuffer.allocate(Math.max(sectors, 64) * Layout.SECTOR);
        }
        int used = 0;
        int s = dirtySectors.nextSetBit(0);
        while (s >= 0) {
            int end = dirtySectors.nextClearBit(s);
            // little-endian like the format, so MetadataSector encodes into it without a view per entry
            ByteBuffer b = encoded.slice(used, (end - s) * Layout.SECTOR).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            used += (end - s) * Layout.SECTOR;
            for (int sec = s; sec < end; sec++) {
                encodeSector(sec, b, (sec - s) * Layout.SECTOR);
            }
            runs.add(new SectorRun(s, b));
            s = dirtySectors.nextSetBit(end);
        }
        dirtySectors.clear();
        return runs;
    }

    void redirty(List<SectorRun> runs) {
        for (SectorRun r : runs) {
            dirtySectors.set((int) r.first(), (int) r.first() + r.bytes().capacity() / Layout.SECTOR);
        }
    }

    void encodeSector(long sector, ByteBuffer b, int base) {
        long first = sector * Layout.ENTRIES_PER_SECTOR;
        for (int k = 0; k < Layout.ENTRIES_PER_SECTOR; k++) {
            long slot = first + k;
            long block = slot < slots() ? index.block((int) slot) : MetadataSector.FREE;
            MetadataSector.putEntry(b, base, k, block, block == MetadataSector.FREE ? 0 : index.seq((int) slot));
        }
        MetadataSector.seal(b, base, sector);
    }
}
