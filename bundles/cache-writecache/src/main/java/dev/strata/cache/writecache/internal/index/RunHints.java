package dev.strata.cache.writecache.internal.index;

/**
 * For each group of {@value #GROUP} consecutive backing blocks, one slot that held a block of the
 * group when it was last placed as part of a run of consecutive slots: a guess, never the truth.
 * {@link SlotIndex#hinted} turns it into the slot of a wanted block by its distance from that
 * slot's block and keeps it only if {@link SlotIndex#holds} confirms it, so a stale, colliding or
 * torn entry costs a look and nothing else. It spares a write to blocks allocated together — a
 * request of {@code bs} over {@code block_size=512} — the cold walk from the root to its first
 * block (about 26 treap levels over 0.5 M slots, the largest part of writecache's CPU per
 * overwrite in the profile, docs/benchmarks.md round 11).
 *
 * <p>Direct-mapped by group number modulo the table size (a power of two, at most one entry per
 * {@value #GROUP} slots: 0.5 B per slot with 4-byte entries), so any backing range no larger than
 * the table's reach maps without collision. Chunked like the nodes, so that no array is a G1
 * humongous object. Entries start at 0 (slot 0: a guess like any other). Written only where the
 * index changes (under the cache's state monitor and gate); read without a lock by the optimistic
 * in-place look, whose answer the gate's stamp validates: an {@code int} is read whole.
 */
final class RunHints {
    /** log2 of the blocks per group. */
    static final int GROUP_SHIFT = 3;
    static final int GROUP = 1 << GROUP_SHIFT;
    private static final int CHUNK_SHIFT = 13;
    private static final int CHUNK_MASK = (1 << CHUNK_SHIFT) - 1;
    private final int[][] chunks;
    private final long mask;

    RunHints(int slots) {
        int entries = Integer.highestOneBit(Math.max(1, slots >>> GROUP_SHIFT));
        mask = entries - 1L;
        int per = Math.min(entries, 1 << CHUNK_SHIFT);
        chunks = new int[entries / per][];
        for (int c = 0; c < chunks.length; c++) {
            chunks[c] = new int[per];
        }
    }

    /** The slot noted for {@code block}'s group (a slot number below the index's size). */
    int get(long block) {
        long e = (block >>> GROUP_SHIFT) & mask;
        return chunks[(int) (e >>> CHUNK_SHIFT)][(int) e & CHUNK_MASK];
    }

    /** Notes that {@code slot} holds {@code block}. */
    void set(long block, int slot) {
        long e = (block >>> GROUP_SHIFT) & mask;
        chunks[(int) (e >>> CHUNK_SHIFT)][(int) e & CHUNK_MASK] = slot;
    }

    /** Entries in the table (tests and the footprint). */
    long entries() {
        return mask + 1;
    }
}
