package dev.strata.cache.readcache.internal.io;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.ReadCachePolicy;
import dev.strata.cache.readcache.internal.format.Layout;
import dev.strata.cache.readcache.internal.format.SlotEntry;
import dev.strata.cache.readcache.internal.index.BlockIndex;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;

/**
 * The read cache's memory: slot → block ({@code keys}, also the policy's {@link
 * ReadCachePolicy.Contents}), a state byte per slot, the index, read pins, the staleness guard and
 * the bound policy instance. Every method runs under this object's monitor; none does I/O.
 *
 * <h2>Slot states</h2>
 * FREE; PENDING (a promotion is writing it; in the index so a second miss does not promote it
 * again, but never a hit); VOLATILE (cached and served, but its entry is never written valid: the
 * origin data it copied is not known durable yet); CACHED (served; its entry may be written valid).
 * The flag DISK means "the cache device may hold a valid entry for this slot": set when an entry is
 * encoded valid, cleared only when a FUA write of an encoding with the slot invalid has completed.
 * No slot with DISK set is ever given new data (the promoter writes its invalid entry first).
 * The flag UNSYNCED marks a VOLATILE slot holding a write's data ({@code write_promote}) that is
 * not known durable on the cache device yet (written without FUA or flush): a flush records it
 * only after a cache-device flush ({@link #flushDone}, {@link #synced}).
 *
 * <h2>Read pins</h2>
 * A hit pins its slot's stripe until its cache read has returned; a promotion into a slot whose
 * stripe is pinned is abandoned rather than overwrite data a reader may still be reading.
 */
final class CacheState {
    static final byte FREE = 0;
    static final byte PENDING = 1;
    static final byte VOLATILE = 2;
    static final byte CACHED = 3;
    static final byte DISK = 4;
    static final byte UNSYNCED = 8;
    private static final int PIN_BITS = 10;
    private static final int RING = 1024;

    final int slots;
    private final long[] keys;
    private final byte[] state;
    private final BlockIndex index;
    private final int[] pins = new int[1 << PIN_BITS];
    final Stamps stamps = new Stamps();
    private final int[] volatileRing = new int[RING];
    private int ringSize;
    /** More VOLATILE slots than the ring holds since the last flush: the next flush checks every slot. */
    private boolean ringOverflow;
    private int pending;
    private boolean switching;
    private ReadCachePolicy.Instance policy;
    private long cached;

    CacheState(int slots) {
        this.slots = slots;
        this.keys = new long[slots];
        Arrays.fill(keys, ReadCachePolicy.Contents.EMPTY);
        this.state = new byte[slots];
        this.index = new BlockIndex(keys);
    }

    private static int pin(int slot) {
        return slot & ((1 << PIN_BITS) - 1);
    }

    private int st(int slot) {
        return state[slot] & 3;
    }

    /** Sets the state, keeping DISK; clears UNSYNCED. */
    private void setState(int slot, byte s) {
        state[slot] = (byte) ((state[slot] & DISK) | s);
    }

    private void remember(int slot) {
        if (ringSize < RING) {
            volatileRing[ringSize++] = slot;
        } else {
            ringOverflow = true;
        }
    }

    /** Recovery: {@code slot} holds {@code key} per a valid durable entry; false for a duplicate. */
    synchronized boolean recovered(int slot, long key) {
        if (index.get(key) >= 0) {
            return false;
        }
        keys[slot] = key;
        index.put(slot);
        state[slot] = CACHED | DISK;
        cached++;
        return true;
    }

    /** What a read does with each of its blocks. */
    static final class Plan {
        static final int MISS = -1;
        /** Per block: a hit's slot (pinned), MISS, or {@code -2 - slot} to promote into slot. */
        final int[] codes;
        long snap;
        int hits;
        int misses;
        int promotions;
        int rejections;
        int evictions;

        Plan(int n) {
            codes = new int[n];
        }

        static int promoteSlot(int code) {
            return -2 - code;
        }
    }

    /**
     * Classifies blocks {@code [first, first + n)}; {@code promotable[i]}: block i is wholly read
     * and may be promoted (not bypassed, promotion enabled).
     */
    synchronized Plan plan(long first, int n, boolean[] promotable) {
        Plan p = new Plan(n);
        p.snap = stamps.seq();
        for (int i = 0; i < n; i++) {
            long b = first + i;
            int s = index.get(b);
            if (s >= 0 && st(s) >= VOLATILE) {
                pins[pin(s)]++;
                p.codes[i] = s;
                p.hits++;
                if (policy != null) {
                    policy.onHit(s);
                }
                continue;
            }
            p.misses++;
            p.codes[i] = Plan.MISS;
            if (s >= 0 || !promotable[i] || policy == null || switching) {
                continue;
            }
            claimSlot(b, p, i);
        }
        return p;
    }

    /**
     * Readahead ({@link Readahead}): claims slots for the blocks of {@code [eFirst, eFirst + eN)}
     * outside the read's own {@code [first, first + n)} that are neither cached nor pending, while
     * the cache has free slots (every policy gives a free slot before it evicts, so a speculative
     * block never evicts a cached one). The claims carry the read's stamp snapshot {@code snap}.
     */
    synchronized Plan planAhead(long eFirst, int eN, long first, int n, long snap) {
        Plan p = new Plan(eN);
        p.snap = snap;
        Arrays.fill(p.codes, Plan.MISS);
        if (policy == null || switching) {
            return p;
        }
        for (int i = 0; i < eN && cached + pending < slots; i++) {
            long b = eFirst + i;
            if ((b < first || b >= first + n) && index.get(b) < 0) {
                claimSlot(b, p, i);
            }
        }
        return p;
    }

    /**
     * Asks the policy for a slot for the missed block {@code b} (request position {@code i} of
     * {@code p}): evicts the slot's cached entry, makes it PENDING for {@code b}, or counts a
     * rejection. Caller holds this monitor.
     */
    private void claimSlot(long b, Plan p, int i) {
        int slot = policy.onMiss(b);
        if (slot == ReadCachePolicy.Instance.REJECT) {
            p.rejections++;
            return;
        }
        int was = st(slot);
        if (was >= VOLATILE) {
            index.remove(keys[slot], slot);
            cached--;
            p.evictions++;
        } else if (was == PENDING) {
            throw new IllegalStateException("policy handed out pending slot " + slot);
        }
        keys[slot] = b;
        setState(slot, PENDING);
        index.put(slot);
        pending++;
        p.promotions++;
        p.codes[i] = -2 - slot;
    }

    synchronized void unpin(int slot) {
        pins[pin(slot)]--;
    }

    synchronized boolean diskValid(int slot) {
        return (state[slot] & DISK) != 0;
    }

    /** Whether the pending promotion of {@code block} into {@code slot} may write its data now. */
    synchronized boolean mayWriteData(int slot, long block, long snap) {
        return pins[pin(slot)] == 0 && (state[slot] & DISK) == 0 && !stamps.stale(block, snap)
                && st(slot) == PENDING && keys[slot] == block;
    }

    /** Result of {@link #install}. */
    enum Installed { ABANDONED, VOLATILE, CACHED }

    /** The promotion's data is on the cache device: install it, unless a write made it stale. */
    synchronized Installed install(int slot, long block, long snap) {
        if (stamps.stale(block, snap)) {
            abandonLocked(slot, block);
            return Installed.ABANDONED;
        }
        pending--;
        cached++;
        if (policy != null) {
            policy.onInsert(slot, block);
        }
        notifyAll();
        if (stamps.sourceDurable(block)) {
            setState(slot, CACHED);
            return Installed.CACHED;
        }
        setState(slot, VOLATILE);
        remember(slot);
        return Installed.VOLATILE;
    }

    /** The promotion of {@code block} into {@code slot} is given up (race, pin, error). */
    synchronized void abandon(int slot, long block) {
        abandonLocked(slot, block);
    }

    private void abandonLocked(int slot, long block) {
        index.remove(block, slot);
        keys[slot] = ReadCachePolicy.Contents.EMPTY;
        setState(slot, FREE);
        pending--;
        if (policy != null) {
            policy.onRemove(slot);
        }
        notifyAll();
    }

    /**
     * A write (or zeroing, or discard) of blocks {@code [first, first + n)} begins: drops their
     * cached copies and counts the write in flight. Returns the metadata blocks that must be
     * rewritten (FUA) before the write may go to the origin, adds the number of copies dropped
     * to {@code out[0]}, and puts the write's stamp snapshot (for {@link #planWrite}) in {@code out[1]}.
     */
    synchronized int[] beginWrite(long first, long n, long[] out) {
        out[1] = stamps.seq(); // in the lock hold of stamps.begin below (Stamps: write_promote)
        int[] meta = new int[4];
        int m = 0;
        if (n > slots) {
            for (int s = 0; s < slots; s++) {
                if (keys[s] >= first && keys[s] - first < n) {
                    m = invalidate(s, meta, m, out);
                    meta = m == meta.length ? Arrays.copyOf(meta, m * 2) : meta;
                }
            }
        } else {
            for (long b = first; b < first + n; b++) {
                int s = index.get(b);
                if (s >= 0) {
                    m = invalidate(s, meta, m, out);
                    meta = m == meta.length ? Arrays.copyOf(meta, m * 2) : meta;
                }
            }
        }
        stamps.begin(first, n);
        int[] r = Arrays.copyOf(meta, m);
        Arrays.sort(r);
        return Arrays.stream(r).distinct().toArray();
    }

    private int invalidate(int s, int[] meta, int m, long[] invalidated) {
        if (st(s) < VOLATILE) {
            return m; // PENDING: the staleness guard drops it
        }
        index.remove(keys[s], s);
        keys[s] = ReadCachePolicy.Contents.EMPTY;
        setState(s, FREE);
        cached--;
        invalidated[0]++;
        if (policy != null) {
            policy.onRemove(s);
        }
        if ((state[s] & DISK) != 0) {
            meta[m++] = Layout.metaBlockOf(s);
        }
        return m;
    }

    synchronized void endWrite(long first, long n) {
        stamps.end(first, n);
    }

    synchronized long flushStart() {
        return stamps.seq();
    }

    /** What a completed origin flush lets the cache record: {@link #flushDone}. */
    record Durable(int[] metaBlocks, int[] unsyncedSlots, long[] unsyncedKeys) {
    }

    /**
     * The origin's flush begun at {@code s} completed: VOLATILE slots whose source is now durable
     * become CACHED, and their metadata blocks are returned (to be written); those holding a
     * write's data not yet synced on the cache device are returned apart, for {@link #synced}
     * after a cache-device flush. {@code all}: every VOLATILE slot is checked (clean close), not
     * only the ring's.
     */
    synchronized Durable flushDone(long s, boolean all) {
        stamps.durableUpTo(s);
        boolean every = all || ringOverflow;
        ringOverflow = false;
        int[] meta = new int[16];
        int m = 0;
        int[] us = new int[0];
        int u = 0;
        int n = every ? slots : ringSize;
        for (int i = 0; i < n; i++) {
            int slot = every ? i : volatileRing[i];
            if (st(slot) != VOLATILE || !stamps.sourceDurable(keys[slot])) {
                continue;
            }
            if ((state[slot] & UNSYNCED) != 0) {
                if (u == us.length) {
                    us = Arrays.copyOf(us, Math.max(16, u * 2));
                }
                us[u++] = slot;
                continue;
            }
            setState(slot, CACHED);
            if (m == meta.length) {
                meta = Arrays.copyOf(meta, m * 2);
            }
            meta[m++] = Layout.metaBlockOf(slot);
        }
        ringSize = 0;
        int[] slotsOut = Arrays.copyOf(us, u);
        long[] keysOut = new long[u];
        for (int i = 0; i < u; i++) {
            keysOut[i] = keys[slotsOut[i]];
        }
        return new Durable(distinctSorted(meta, m), slotsOut, keysOut);
    }

    /**
     * The cache device was flushed after {@link #flushDone} returned {@code slots} (with {@code
     * keys}): each that still holds the same written copy, with its source still durable, becomes
     * CACHED. A slot invalidated and given to a new write of the same block meanwhile is not
     * (that write stamped the block after the flush began: not durable), provided no other flush
     * raised the durable point in between (the caller holds its recording lock from {@link
     * #flushDone} to here). Returns the metadata blocks to write.
     */
    synchronized int[] synced(int[] slotsIn, long[] keysIn) {
        int[] meta = new int[Math.max(1, slotsIn.length)];
        int m = 0;
        for (int i = 0; i < slotsIn.length; i++) {
            int slot = slotsIn[i];
            if (st(slot) == VOLATILE && (state[slot] & UNSYNCED) != 0 && keys[slot] == keysIn[i]
                    && stamps.sourceDurable(keysIn[i])) {
                setState(slot, CACHED);
                meta[m++] = Layout.metaBlockOf(slot);
            }
        }
        return distinctSorted(meta, m);
    }

    private static int[] distinctSorted(int[] a, int n) {
        int[] r = Arrays.copyOf(a, n);
        Arrays.sort(r);
        return Arrays.stream(r).distinct().toArray();
    }

    // ---- write promotion (write_promote) ----

    /**
     * A write of blocks {@code [first, first + n)} (wholly written, {@code n} at most {@link
     * Stamps#RANGE_MAX}) that began with stamp snapshot {@code snap} has completed on the origin:
     * asks the policy to admit each block whose written data is known to be the origin's (see
     * {@link Stamps}) and that has no slot, and makes the admitted ones PENDING in their slots.
     * Codes as {@link #plan}'s: {@code -2 - slot} to install, MISS otherwise.
     */
    synchronized Plan planWrite(long first, int n, long snap) {
        Plan p = new Plan(n);
        p.snap = snap;
        for (int i = 0; i < n; i++) {
            long b = first + i;
            p.codes[i] = Plan.MISS;
            if (policy == null || switching || !stamps.writeCurrent(b, snap) || index.get(b) >= 0) {
                continue; // a read's promotion of b pending (dropped by the stamps), or an overlapping write
            }
            claimSlot(b, p, i);
        }
        return p;
    }

    /** Whether the written copy of {@code block} may go into its pending {@code slot} now. */
    synchronized boolean mayWriteWritten(int slot, long block, long snap) {
        return pins[pin(slot)] == 0 && (state[slot] & DISK) == 0 && st(slot) == PENDING && keys[slot] == block
                && stamps.writeCurrent(block, snap);
    }

    /**
     * The written copy of {@code block} is in {@code slot} on the cache device (not synced): it is
     * served from now on (VOLATILE, UNSYNCED; recorded by a later flush), unless another write of
     * the block overlapped. Returns whether it was installed.
     */
    synchronized boolean installWritten(int slot, long block, long snap) {
        if (!stamps.writeCurrent(block, snap)) {
            abandonLocked(slot, block);
            return false;
        }
        pending--;
        cached++;
        if (policy != null) {
            policy.onInsert(slot, block);
        }
        notifyAll();
        state[slot] = (byte) ((state[slot] & DISK) | VOLATILE | UNSYNCED);
        remember(slot);
        return true;
    }

    /**
     * Encodes metadata block {@code m} into {@code buf}; returns a mask (4 longs, bit i = slot
     * {@code m * 256 + i}) of the entries encoded valid, which get the DISK flag now.
     */
    synchronized long[] encode(int m, ByteBuffer buf, int seq, long uuidHash) {
        long[] mask = new long[Layout.ENTRIES_PER_BLOCK / 64];
        int from = m * Layout.ENTRIES_PER_BLOCK;
        int to = Math.min(slots, from + Layout.ENTRIES_PER_BLOCK);
        for (int s = from; s < to; s++) {
            boolean valid = st(s) == CACHED;
            SlotEntry.encode(buf, s, valid ? keys[s] : SlotEntry.EMPTY, seq, uuidHash);
            if (valid) {
                state[s] |= DISK;
                mask[(s - from) >>> 6] |= 1L << (s - from);
            }
        }
        return mask;
    }

    /** The FUA write of block {@code m} encoded with {@code mask} completed: clears DISK where invalid. */
    synchronized void written(int m, long[] mask) {
        int from = m * Layout.ENTRIES_PER_BLOCK;
        int to = Math.min(slots, from + Layout.ENTRIES_PER_BLOCK);
        for (int s = from; s < to; s++) {
            if ((mask[(s - from) >>> 6] & (1L << (s - from))) == 0) {
                state[s] &= ~DISK;
            }
        }
    }

    /**
     * Binds {@code next} (opened over the current contents) in place of the current instance, or
     * none ({@code null}: promotion pauses). Waits for pending promotions to end (new ones are
     * held back meanwhile), at most {@code timeoutMs}. The old instance is closed.
     *
     * @throws InvalidArgumentException a tunable of {@code next} is out of range (nothing changed)
     */
    synchronized void bind(ReadCachePolicy next, Map<String, String> tunables, long timeoutMs) throws InterruptedException {
        switching = true;
        try {
            long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
            while (pending > 0) {
                long left = (deadline - System.nanoTime()) / 1_000_000L;
                if (left <= 0) {
                    throw new InvalidArgumentException("readcache: promotions did not drain within " + timeoutMs
                            + " ms; try the switch again");
                }
                wait(left);
            }
            ReadCachePolicy.Instance opened = next == null ? null : next.open(ReadCachePolicy.Contents.of(keys), tunables);
            ReadCachePolicy.Instance old = policy;
            policy = opened;
            if (old != null) {
                old.close();
            }
        } finally {
            switching = false;
        }
    }

    /** Sets a tunable on the bound instance; false if it has none by that name (or none is bound). */
    synchronized boolean setPolicyTunable(String key, String value) {
        return policy != null && policy.set(key, value);
    }

    synchronized boolean policyBound() {
        return policy != null;
    }

    synchronized Map<String, String> policyStatus() {
        return policy == null ? Map.of() : policy.status();
    }

    synchronized long cachedBlocks() {
        return cached;
    }

    /** Heap bytes of the index and the policy: keys, states, index table, policy instance. */
    synchronized long heapBytes() {
        return 16L + 8L * slots + 16L + slots + index.heapBytes() + (policy == null ? 0 : policy.heapBytes());
    }

    synchronized long heapBytesExceptPolicy() {
        return 16L + 8L * slots + 16L + slots + index.heapBytes();
    }

    /** For tests: the block {@code slot} holds, or EMPTY. */
    synchronized long keyAt(int slot) {
        return keys[slot];
    }

    synchronized int slotOf(long block) {
        int s = index.get(block);
        return s >= 0 && st(s) >= VOLATILE ? s : -1;
    }
}
