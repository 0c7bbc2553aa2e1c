package dev.strata.cache.writecache.internal.index;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Backing block → slot, sorted by backing block, in primitive arrays indexed by slot: a treap
 * whose nodes are the slots themselves (no object per cached block). A node's treap priority is
 * a hash of its slot number, so it costs no memory.
 *
 * <h2>A node: 22 bytes</h2>
 * Each slot's fields are packed side by side in chunked {@code byte[]}s, read and written as
 * little-endian words through a {@link VarHandle} view (a step down the tree touches one cache
 * line, not three arrays: the walk is cache-miss bound):
 * <pre>
 * bytes  0..7   word A: bits  0-53 backing block (all ones: none), bits 54-63 seq_count bits 0-9
 * bytes  8..15  word B: bits  0-30 right child, bits 31-61 left child (all ones: none), 62-63 zero
 * bytes 16..21  seq_count bits 10-57
 * </pre>
 * The block and link widths are what the devices already imply, no new limit: a device holds at
 * most 2^63 - 1 bytes, so fewer than 2^54 blocks of 512 bytes (the all-ones block number is
 * never a block); a cache has at most {@code Integer.MAX_VALUE} slots (the superblock's bound),
 * so a slot number fits in 31 bits and the all-ones value is free for "no child". The seq_count
 * advances by one per commit; 2^58 commits take 9,000 years at a million commits per second
 * (6.6 times the fastest commit loop measured: one write and a flush, memory devices), and
 * the committer refuses to advance past {@link #SEQ_LIMIT} rather than wrap
 * ({@code docs/benchmarks.md}, writecache, Performance 4, round 10). The 24-byte node this replaced kept each field in a whole long.
 *
 * <p>A slot may hold a block without being in the tree: an older copy of a block waiting for
 * the newer copy's commit (its {@link #block} stays set, it is found by nobody). Such a slot's
 * left link is its own number, which no node in the tree has. Free slots have block
 * {@link #NONE}. Not thread-safe: the cache guards it with its state lock.
 */
public final class SlotIndex {
    public static final long NONE = -1;
    /** Bits of a backing block number: 2^63 - 1 bytes are fewer than 2^54 blocks of 512 bytes. */
    static final int BLOCK_BITS = 54;
    /** The block field's mask, and the stored form of {@link #NONE}. */
    private static final long BLOCK_MASK = (1L << BLOCK_BITS) - 1;
    /** Bits of a seq_count in memory (on the device it has 64). */
    static final int SEQ_BITS = 58;
    /** Every seq_count this index holds is below this (2^58). */
    public static final long SEQ_LIMIT = 1L << SEQ_BITS;
    /** seq_count bits kept in word A, above the block. */
    private static final int SEQ_LOW = 64 - BLOCK_BITS;
    /** "No child": the all-ones 31-bit link, above every slot number. */
    private static final int NIL = Integer.MAX_VALUE;
    private static final long RIGHT = 0x7FFF_FFFFL;
    /** Bytes per node. */
    static final int NODE = 22;
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle SHORT = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.LITTLE_ENDIAN);

    /**
     * Slots per array chunk. The arrays are chunked so that none is a G1 "humongous" object (at
     * least half a region, 512 KiB with 1 MiB regions): a humongous array is rounded up to whole
     * regions, which measured 40 B per slot instead of 24 with flat arrays of 1 Mi slots. Chunks
     * of 4 Ki slots (one array of 88 KiB) also avoid the region tails that larger chunks left
     * empty; a chunk's header and its reference cost 0.005 B per slot.
     */
    static final int CHUNK_SHIFT = 12;
    static final int CHUNK = 1 << CHUNK_SHIFT;
    static final int MASK = CHUNK - 1;

    private final int slots;
    private final byte[][] nodes;
    /** Where runs of blocks were placed: the first guess of {@link #hinted}. */
    private final RunHints hints;
    private int root = NIL;
    private int size;

    public SlotIndex(int slots) {
        if (slots < 0) {
            throw new IllegalArgumentException("slots " + slots);
        }
        this.slots = slots;
        int chunks = (int) (((long) slots + CHUNK - 1) >>> CHUNK_SHIFT);
        nodes = new byte[chunks][];
        for (int c = 0; c < chunks; c++) {
            int n = Math.min(CHUNK, slots - (c << CHUNK_SHIFT));
            byte[] a = new byte[n * NODE];
            for (int i = 0; i < n; i++) {
                int slot = (c << CHUNK_SHIFT) + i;
                LONG.set(a, i * NODE, BLOCK_MASK); // NONE, seq_count 0
                LONG.set(a, i * NODE + 8, link(slot, slot)); // not in the tree
            }
            nodes[c] = a;
        }
        hints = new RunHints(slots);
    }

    /** Word B of a node with these children (each a slot number or {@link #NIL}). */
    static long link(int left, int right) {
        return ((long) left << 31) | right;
    }

    static int leftOf(long links) {
        return (int) (links >>> 31);
    }

    static int rightOf(long links) {
        return (int) (links & RIGHT);
    }

    private byte[] chunk(int n) {
        return nodes[n >>> CHUNK_SHIFT];
    }

    private static int at(int n) {
        return (n & MASK) * NODE;
    }

    private long key(int n) {
        return (long) LONG.get(chunk(n), at(n)) & BLOCK_MASK;
    }

    private long links(int n) {
        return (long) LONG.get(chunk(n), at(n) + 8);
    }

    private int l(int n) {
        return leftOf(links(n));
    }

    private int r(int n) {
        return rightOf(links(n));
    }

    private void setLinks(int n, int left, int right) {
        LONG.set(chunk(n), at(n) + 8, link(left, right));
    }

    private void setL(int n, int v) {
        setLinks(n, v, r(n));
    }

    private void setR(int n, int v) {
        setLinks(n, l(n), v);
    }

    /** Bytes of heap this index uses per slot (the arrays' payload). */
    public static int heapBytesPerSlot() {
        return NODE;
    }

    public int slots() {
        return slots;
    }

    /** Blocks in the tree (cached and findable). */
    public int size() {
        return size;
    }

    public long block(int slot) {
        long k = key(slot);
        return k == BLOCK_MASK ? NONE : k;
    }

    public long seq(int slot) {
        byte[] a = chunk(slot);
        int o = at(slot);
        return ((long) LONG.get(a, o) >>> BLOCK_BITS)
                | ((int) INT.get(a, o + 16) & 0xFFFF_FFFFL) << SEQ_LOW
                | ((short) SHORT.get(a, o + 20) & 0xFFFFL) << (SEQ_LOW + 32);
    }

    public void setSeq(int slot, long s) {
        checkSeq(s);
        byte[] a = chunk(slot);
        int o = at(slot);
        LONG.set(a, o, ((long) LONG.get(a, o) & BLOCK_MASK) | s << BLOCK_BITS);
        putSeqHigh(a, o, s);
    }

    private static void putSeqHigh(byte[] a, int o, long s) {
        INT.set(a, o + 16, (int) (s >>> SEQ_LOW));
        SHORT.set(a, o + 20, (short) (s >>> (SEQ_LOW + 32)));
    }

    private static void checkSeq(long s) {
        if (s < 0 || s >= SEQ_LIMIT) {
            throw new IllegalArgumentException("seq_count " + s + " outside [0, 2^" + SEQ_BITS + ")");
        }
    }

    /** Marks a slot that is not in the tree as holding nothing. */
    public void clear(int slot) {
        assign(slot, NONE, 0);
    }

    /** Sets a slot's block without linking it (a slot whose contents are loaded but not findable). */
    public void assign(int slot, long b, long s) {
        if (b != NONE) {
            checkBlocks(b, 1);
        }
        checkSeq(s);
        put(slot, b & BLOCK_MASK, s);
    }

    /** Sets block field {@code k} and seq_count {@code s}, both already checked. */
    private void put(int slot, long k, long s) {
        byte[] a = chunk(slot);
        int o = at(slot);
        LONG.set(a, o, k | s << BLOCK_BITS);
        putSeqHigh(a, o, s);
    }

    private static void checkBlocks(long first, int n) {
        if (first < 0 || first + n > BLOCK_MASK) {
            throw new IllegalArgumentException("block " + (first < 0 ? first : first + n - 1)
                    + " outside [0, 2^" + BLOCK_BITS + " - 1)");
        }
    }

    private static int priority(int slot) {
        int h = slot * 0x9E3779B9;
        return h ^ (h >>> 16);
    }

    /**
     * Whether {@code slot} is the slot the tree maps {@code b} to — what {@link #find} would
     * return — in O(1): its block is {@code b} and it is linked. A write of consecutive blocks
     * that were written together before finds them in consecutive slots; checking the next slot
     * first saves a walk from the root per block (about 25 cache-missing levels over 0.5 M slots).
     */
    public boolean holds(int slot, long b) {
        if (slot < 0 || slot >= slots) {
            return false;
        }
        byte[] a = chunk(slot);
        int o = at(slot);
        return ((long) LONG.get(a, o) & BLOCK_MASK) == b && leftOf((long) LONG.get(a, o + 8)) != slot;
    }

    /**
     * The slot holding {@code b} found without a walk, or -1 ("not known": walk). The run hint of
     * {@code b}'s group names a slot; if that slot's block lies in the same group, {@code b}
     * would sit as far from it in the slots as from its block, if both were placed in one run,
     * which {@link #holds} confirms in O(1). Two or three cache lines instead of a walk's two
     * dozen. Safe without the lock for the optimistic look (every read in range, the answer
     * validated by the caller like {@link #findUnlocked}'s).
     */
    public int hinted(long b) {
        int s = hints.get(b);
        if (s >= slots) {
            return -1; // an index of no slots (entries are slot numbers, or 0)
        }
        long k = key(s);
        if (((k ^ b) >>> RunHints.GROUP_SHIFT) != 0) {
            return -1;
        }
        int c = s + (int) (b - k);
        return holds(c, b) ? c : -1;
    }

    /**
     * {@link #find} for a look made without the lock that guards this index, whose answer the
     * caller validates afterwards (an optimistic read): a tree changed meanwhile may show a link
     * out of range or a cycle, so the walk stops at either, and after {@code maxSteps} levels,
     * with -1 — "not found", which such a caller treats as "take the lock and look again".
     */
    public int findUnlocked(long b, int maxSteps) {
        int n = root;
        for (int step = 0; step < maxSteps && n >= 0 && n < slots; step++) {
            long k = key(n);
            if (b == k) {
                return n;
            }
            n = b < k ? l(n) : r(n);
        }
        return -1;
    }

    /** The slot holding {@code b}, or -1. */
    public int find(long b) {
        int n = root;
        while (n != NIL) {
            byte[] a = chunk(n);
            int o = at(n);
            long k = (long) LONG.get(a, o) & BLOCK_MASK;
            if (b == k) {
                return n;
            }
            long w = (long) LONG.get(a, o + 8);
            n = b < k ? leftOf(w) : rightOf(w);
        }
        return -1;
    }

    /** The slot holding the smallest block ≥ {@code b}, or -1. */
    public int ceiling(long b) {
        int n = root;
        int best = -1;
        while (n != NIL) {
            byte[] a = chunk(n);
            int o = at(n);
            long k = (long) LONG.get(a, o) & BLOCK_MASK;
            if (k == b) {
                return n;
            }
            long w = (long) LONG.get(a, o + 8);
            if (b < k) {
                best = n;
                n = leftOf(w);
            } else {
                n = rightOf(w);
            }
        }
        return best;
    }

    /**
     * Links {@code slot} as the holder of {@code b} (stamped {@code s}).
     *
     * @throws IllegalStateException if {@code b} is already in the tree
     */
    public void insert(int slot, long b, long s) {
        checkBlocks(b, 1);
        checkSeq(s);
        put(slot, b, s);
        setLinks(slot, NIL, NIL);
        root = insert(root, slot);
        size++;
        if (holds(slot - 1, b - 1)) { // a run placed block by block (lone blocks would only evict hints)
            hints.set(b, slot);
        }
    }

    private int insert(int n, int slot) {
        if (n == NIL) {
            return slot;
        }
        long b = key(slot);
        if (b == key(n)) {
            throw new IllegalStateException("block " + b + " is already in slot " + n);
        }
        if (b < key(n)) {
            setL(n, insert(l(n), slot));
            if (priority(l(n)) > priority(n)) {
                return rotateRight(n);
            }
        } else {
            setR(n, insert(r(n), slot));
            if (priority(r(n)) > priority(n)) {
                return rotateLeft(n);
            }
        }
        return n;
    }

    /**
     * Links the slots {@code order[0..n)} — assigned ({@link #assign}) but not linked, in
     * strictly increasing block order — as the whole tree, in one pass (a Cartesian tree on the
     * slots' priorities, built with a stack): recovery of a full cache without a walk from the root
     * per slot, which was cache-miss bound (most of an open of a full 4 GiB cache).
     *
     * @throws IllegalStateException if the tree is not empty or the blocks are not strictly increasing
     */
    public void build(int[] order, int n) {
        if (size != 0) {
            throw new IllegalStateException("build needs an empty tree; it holds " + size);
        }
        int[] stack = new int[64];
        int sp = 0;
        long prev = Long.MIN_VALUE;
        for (int i = 0; i < n; i++) {
            int x = order[i];
            long k = key(x);
            if (i > 0 && k <= prev) {
                throw new IllegalStateException("block " + k + " after " + prev + ": not strictly increasing");
            }
            boolean runOn = i + 1 < n && order[i + 1] == x + 1 && key(x + 1) == k + 1;
            boolean runIn = i > 0 && order[i - 1] == x - 1 && prev == k - 1;
            if (runIn ? (k & (RunHints.GROUP - 1)) == 0 : runOn) {
                hints.set(k, x); // a run's first block, and its first in each group after
            }
            prev = k;
            int last = NIL;
            while (sp > 0 && priority(stack[sp - 1]) < priority(x)) {
                last = stack[--sp];
            }
            setLinks(x, last, NIL);
            if (sp > 0) {
                setR(stack[sp - 1], x);
            }
            if (sp == stack.length) {
                stack = Arrays.copyOf(stack, sp * 2);
            }
            stack[sp++] = x;
        }
        root = sp > 0 ? stack[0] : NIL;
        size = n;
    }

    /**
     * Links the consecutive slots {@code [firstSlot, firstSlot + n)} as the holders of the
     * consecutive blocks {@code [firstBlock, firstBlock + n)} (stamped {@code s}), none of which
     * may be in the tree: the allocation of a multi-block write. The run is built as a treap of
     * its own in one pass and joined in with one split and two joins of the subtree where its
     * root belongs, instead of one walk from the root per block.
     */
    public void insertRun(int firstSlot, long firstBlock, int n, long s) {
        if (n <= 0) {
            return;
        }
        checkBlocks(firstBlock, n);
        checkSeq(s);
        int sp = 0;
        int[] stack = runStack;
        for (int i = 0; i < n; i++) {
            int x = firstSlot + i;
            put(x, firstBlock + i, s);
            int last = NIL;
            while (sp > 0 && priority(stack[sp - 1]) < priority(x)) {
                last = stack[--sp];
            }
            setLinks(x, last, NIL);
            if (sp > 0) {
                setR(stack[sp - 1], x);
            }
            if (sp == stack.length) {
                stack = runStack = Arrays.copyOf(stack, sp * 2);
            }
            stack[sp++] = x;
        }
        if (n > 1) { // one hint per group the run covers, at its first block there
            for (long b = firstBlock; b < firstBlock + n; b = (b | (RunHints.GROUP - 1)) + 1) {
                hints.set(b, firstSlot + (int) (b - firstBlock));
            }
        }
        int run = stack[0];
        // Only the subtree the run's root belongs in is split and joined: above it every node
        // outranks the whole run, and no key of the run lies between two of them (the run's
        // blocks are uncached), so the walk down to it only reads, along the path the search
        // for firstBlock takes. A fresh cache's run root goes in a few levels above the leaves;
        // splitting and joining from the root wrote every node of two spines from the root (the
        // largest part of a miss's time under the state monitor in the profile).
        int pr = priority(run);
        int parent = NIL;
        boolean leftOfParent = false;
        int at = root;
        while (at != NIL && priority(at) > pr) {
            parent = at;
            leftOfParent = firstBlock < key(at);
            at = leftOfParent ? l(at) : r(at);
        }
        split(at, firstBlock);
        int left = splitL;
        int right = splitR;
        int sub = join(join(left, run), right);
        if (parent == NIL) {
            root = sub;
        } else if (leftOfParent) {
            setL(parent, sub);
        } else {
            setR(parent, sub);
        }
        size += n;
    }

    /**
     * Tests only: whether the tree is a treap — keys in order, every node's priority above its
     * children's (what keeps it balanced, and what {@link #insertRun}'s descent relies on) — and
     * holds {@link #size} nodes, and whether exactly the other slots are marked as not in it.
     */
    boolean isTreap() {
        int unlinked = 0;
        for (int s = 0; s < slots; s++) {
            unlinked += l(s) == s ? 1 : 0;
        }
        // every slot is in the tree or marked as not in it (its left link is itself), never both
        return treapNodes(root, Long.MIN_VALUE, Long.MAX_VALUE) == size && unlinked == slots - size;
    }

    private int treapNodes(int n, long above, long below) {
        if (n == NIL) {
            return 0;
        }
        long k = key(n);
        if (k <= above && above != Long.MIN_VALUE || k >= below || l(n) == n) {
            return -1 << 30;
        }
        for (int c : new int[] {l(n), r(n)}) {
            if (c != NIL && priority(c) > priority(n)) {
                return -1 << 30;
            }
        }
        return 1 + treapNodes(l(n), above, k) + treapNodes(r(n), k, below);
    }

    /** The stack of {@link #insertRun}, reused (a run's treap is about 2 ln n deep). */
    private int[] runStack = new int[64];
    /** The results of the last {@link #split}: keys below, and at or above, the key. */
    private int splitL;
    private int splitR;

    private void split(int n, long key) {
        if (n == NIL) {
            splitL = NIL;
            splitR = NIL;
            return;
        }
        if (key(n) < key) {
            split(r(n), key);
            setR(n, splitL);
            splitL = n;
        } else {
            split(l(n), key);
            setL(n, splitR);
            splitR = n;
        }
    }

    /** Joins two treaps whose keys are all of {@code a} below all of {@code b}. */
    private int join(int a, int b) {
        if (a == NIL) {
            return b;
        }
        if (b == NIL) {
            return a;
        }
        if (priority(a) > priority(b)) {
            setR(a, join(r(a), b));
            return a;
        }
        setL(b, join(a, l(b)));
        return b;
    }

    /** Unlinks the holder of {@code b} (its block number stays set); returns it, or -1. */
    public int remove(long b) {
        removed = NIL;
        root = remove(root, b); // one walk: no find first
        if (removed == NIL) {
            return -1;
        }
        size--;
        setLinks(removed, removed, removed); // not in the tree: holds() is false for it from now on
        return removed;
    }

    /** The node the last {@link #remove(int, long)} unlinked (NIL: none). */
    private int removed;

    private int remove(int n, long b) {
        if (n == NIL) {
            return NIL;
        }
        if (b < key(n)) {
            int c = l(n);
            int nc = remove(c, b);
            if (nc != c) { // absent blocks (most writes) leave the path's lines unwritten
                setL(n, nc);
            }
            return n;
        }
        if (b > key(n)) {
            int c = r(n);
            int nc = remove(c, b);
            if (nc != c) {
                setR(n, nc);
            }
            return n;
        }
        removed = n;
        if (l(n) == NIL) {
            return r(n);
        }
        if (r(n) == NIL) {
            return l(n);
        }
        if (priority(l(n)) > priority(r(n))) {
            int r = rotateRight(n);
            setR(r, remove(r(r), b));
            return r;
        }
        int r = rotateLeft(n);
        setL(r, remove(l(r), b));
        return r;
    }

    private int rotateRight(int n) {
        int l = l(n);
        setL(n, r(l));
        setR(l, n);
        return l;
    }

    private int rotateLeft(int n) {
        int r = r(n);
        setR(n, l(r));
        setL(r, n);
        return r;
    }
}
