package dev.strata.api;

import java.util.Map;

/**
 * Decides, for a read cache with a fixed number of slots, which read misses are promoted
 * (admission) and which cached block gives up its slot (eviction). Registered as an OSGi service
 * with {@value #NAME}{@code =<name>}; a read cache binds its policy by name dynamically.
 * <p>
 * One service serves any number of caches: each cache {@link #open opens} an {@link Instance}
 * over its {@link Contents} and owns it. The instance keeps only <em>hints</em> (recency lists,
 * frequency counts, a table of recently missed blocks); the cache owns the data, the index
 * (block → slot) and the slot → block table, so nothing the policy holds is needed to read a
 * block correctly. A live policy switch therefore keeps every cached block: the cache opens the
 * new policy's instance over its current contents (which rebuilds its hints from them, as
 * dm-cache does on a policy reload) and closes the old one.
 *
 * <h2>Thread safety</h2>
 * The service ({@link #open}, {@link #usage}) is thread-safe. An {@link Instance} is not: the
 * cache calls it from one thread at a time under the cache's own lock, which also orders the
 * calls (happens-before). An instance never blocks, does no I/O, starts no thread, and after
 * {@link #open} allocates nothing in {@link Instance#onHit}, {@link Instance#onMiss},
 * {@link Instance#onInsert} and {@link Instance#onRemove} (primitive arrays sized at open; keys
 * are {@code long} block numbers, slots {@code int}, no object per cached block). It reads
 * {@link Contents#keyAt} only during a call from the cache (or in {@link #open}).
 *
 * <h2>Slot states, as the cache sees them</h2>
 * <ul>
 * <li><b>free</b>: holds nothing ({@link Contents#keyAt} = {@link Contents#EMPTY});
 * <li><b>pending</b>: returned by {@link Instance#onMiss} for a block being promoted, until the
 * cache calls {@link Instance#onInsert} (promoted) or {@link Instance#onRemove} (abandoned);
 * the policy never returns a pending slot again;
 * <li><b>cached</b>: holds a block ({@link Contents#keyAt} = its key).
 * </ul>
 * The cache calls {@link Instance#onMiss} only for a key that is neither cached nor pending (a
 * read of a pending block is served from the origin without a policy call), and switches
 * policies only while no promotion is pending.
 */
public interface ReadCachePolicy {

    /** Service property naming the policy, e.g. {@code strata.readcache.policy=wtinylfu}. */
    String NAME = "strata.readcache.policy";

    /** The policy a read cache uses when none is named. */
    String DEFAULT = "wtinylfu";

    /**
     * One line describing the policy and its tunables with their defaults and ranges, for
     * listings and for the error that names the installed policies.
     */
    String usage();

    /**
     * Starts serving one cache. The instance builds its hints from {@code contents}: every slot
     * that holds a block stays cached (no recency or frequency history is assumed; the slots are
     * taken in slot order), every other slot is free.
     *
     * @param contents  the cache's slots and the block each one holds; {@link Contents#slots()}
     *                  is fixed for the instance's life
     * @param tunables  the policy's tunables as set on the cache (keys without any prefix, e.g.
     *                  {@code threshold=3}); unknown keys are ignored, so a cache can switch
     *                  policies without losing another policy's settings
     * @throws InvalidArgumentException a known tunable with a bad value (one line, with the range)
     */
    Instance open(Contents contents, Map<String, String> tunables);

    /** The cache's slot → block table, read by the policy. */
    interface Contents {
        /** {@link #keyAt} of a free slot. */
        long EMPTY = -1;

        /**
         * The block held by {@code slot} (a block number ≥ 0), or {@link #EMPTY}. For a pending
         * slot either the old or the new block, as the cache likes: policies never read one.
         */
        long keyAt(int slot);

        /** How many slots the cache has (≥ 1). */
        int slots();

        /** Contents of {@code keys.length} slots backed by {@code keys} (not copied). */
        static Contents of(long[] keys) {
            return new Contents() {
                @Override
                public long keyAt(int slot) {
                    return keys[slot];
                }

                @Override
                public int slots() {
                    return keys.length;
                }
            };
        }
    }

    /** One cache's admission and eviction state. Called under the cache's lock (see above). */
    interface Instance extends AutoCloseable {

        /** {@link #onMiss}: do not promote this block. */
        int REJECT = -1;

        /**
         * A read of {@code key} missed: records the miss and decides admission and eviction
         * together — the policy weighs the block against the victim it would replace.
         *
         * @return {@link #REJECT}, or the slot the block is to be promoted into, now pending: a
         *         free slot, or a cached one whose block the cache must evict first
         */
        int onMiss(long key);

        /** A read hit the block cached in {@code slot}. */
        void onHit(int slot);

        /** The pending {@code slot} now holds {@code key} (the promotion completed). */
        void onInsert(int slot, long key);

        /**
         * {@code slot} is free again: its cached block was invalidated (a write overlapped it),
         * or its pending promotion was abandoned (a racing write, an I/O error).
         */
        void onRemove(int slot);

        /**
         * Sets a tunable at run time.
         *
         * @return false if the key is not one of this policy's (nothing changed)
         * @throws InvalidArgumentException a value out of range, with the allowed range
         */
        default boolean set(String key, String value) {
            return false;
        }

        /** The policy's state and tunables for {@code cache:stats} (stable order). */
        Map<String, String> status();

        /** Heap bytes this instance holds (its arrays), for the memory-per-block figure. */
        long heapBytes();

        /** Releases the instance; the cache calls nothing on it afterwards. */
        @Override
        default void close() {
        }
    }
}
