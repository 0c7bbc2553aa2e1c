package dev.strata.api;

import java.io.IOException;
import java.util.Set;

/**
 * What every cache target (writeboost, writecache, readcache, …) offers the manager and the
 * {@code cache:} commands, whatever its policy. The commands reach it only through
 * {@link DeviceManager#withTarget}, which keeps the target open while they use it.
 */
public interface CacheTarget extends Target {

    /** The mode the cache is in now. */
    CacheMode mode();

    /** The modes this policy supports; always contains {@link #mode()}. */
    Set<CacheMode> supportedModes();

    /**
     * Switches the mode. Switching to a mode that cannot hold dirty data while blocks are dirty
     * first stops new dirty data (writes go around) and is then refused until
     * {@link #writebackAll} has drained the cache; callers drain in between.
     *
     * @throws InvalidArgumentException unsupported mode (naming the supported ones), or dirty
     *         blocks remain for a mode that cannot hold them
     */
    void setMode(CacheMode mode) throws IOException;

    /**
     * The tunable key whose value is the mode's {@link CacheMode#label()}: {@code cache:mode}
     * persists the new mode under it (like {@code dev:message --persist}), so that the mode
     * survives a restart; {@code message(key, label)} sets the mode without draining. Null: the
     * mode is not persisted (it starts as the policy's default).
     */
    default String modeTunable() {
        return null;
    }

    /**
     * The argument key naming the lower device that holds the authoritative data — the one a
     * detached cache leaves behind ({@code backing}, {@code origin}).
     */
    String authoritativeDeviceArgument();

    /** The argument key naming the fast device ({@code cache}). */
    String cacheDeviceArgument();

    /**
     * The cache device as this target holds it, for {@code cache:check} to read the on-disk
     * metadata while the device is suspended (nothing writes it then; the manager refuses other
     * handles on a device held exclusively). Callers only read it. Null: the policy does not offer it.
     */
    default BlockDevice cacheDeviceForCheck() {
        return null;
    }

    /**
     * The byte ranges of the cache device that hold what this cache needs to be opened again as it
     * is now (its metadata, the blocks it caches, the log it recovers from), as pairs
     * {@code offset, length}, so that {@code cache:replace} copies only those. Whatever the policy
     * writes later is tracked by the caller and copied too; everything outside the ranges may read
     * as anything on the copy, and the policy's recovery must never take it for data. Null: the
     * policy cannot say, the whole device is copied.
     *
     * @since 1.8
     */
    default long[] liveCacheExtents() {
        return null;
    }

    /**
     * Moves this target, with its in-memory state, onto {@code copy}: a device that holds the same
     * bytes as its cache device in {@link #liveCacheExtents()} (the first block included), for
     * {@code cache:replace}, so that the target does not have to be closed and recovered over the
     * copy. Called only while the target is suspended and no request is in flight; after it returned
     * true the target reads and writes only {@code copy} ({@link #resume()} restarts its background
     * work there), and calling it again with the old device moves it back. By default false: the
     * policy cannot, nothing changed, and the caller closes the target and builds one over the copy.
     *
     * @throws IOException the copy does not fit (e.g. too small); nothing changed
     * @since 1.8
     */
    default boolean moveCacheDevice(BlockDevice copy) throws IOException {
        return false;
    }

    /** The cache's block size in bytes: the unit of the counts below. */
    int cacheBlockSize();

    /** How many blocks the cache can hold. */
    long capacityBlocks();

    /** How many blocks it holds now, clean or dirty. */
    long cachedBlocks();

    /** How many blocks it holds that its backing device does not (0 for clean-only caches). */
    long dirtyBlocks();

    /**
     * Writes back every dirty block and returns when none is left (at some moment: writes that
     * arrive meanwhile may dirty blocks again unless the mode keeps them out). Calls
     * {@code progress} at least once a second while it runs and once at the end.
     * <p>
     * Cancellation: when the calling thread is interrupted the method returns promptly by
     * throwing {@link InterruptedException}; nothing is lost — blocks written back stay written
     * back, the rest stay dirty and are written back later as usual.
     *
     * @throws IOException the backing or cache device failed; the blocks stay dirty
     */
    void writebackAll(WritebackProgress progress) throws IOException, InterruptedException;

    /** Reports how far {@link #writebackAll} has got. */
    @FunctionalInterface
    interface WritebackProgress {
        /**
         * @param dirtyBlocks  blocks still dirty now
         * @param writtenBack  blocks written back since the call began
         */
        void update(long dirtyBlocks, long writtenBack);
    }

    /** Status keys every cache reports in {@link #status()}, with these spellings. */
    final class Keys {
        public static final String MODE = "mode";
        /**
         * Optional: the mode a switch asked for while the cache already acts on part of it
         * (a writecache asked for writearound with dirty blocks left: new writes go around, the mode
         * stays writeback until they are written back, then becomes writearound); absent otherwise.
         */
        public static final String MODE_PENDING = "mode_pending";
        public static final String BLOCK_SIZE = "cache_block_size";
        public static final String CAPACITY_BLOCKS = "capacity_blocks";
        public static final String CACHED_BLOCKS = "cached_blocks";
        public static final String DIRTY_BLOCKS = "dirty_blocks";
        public static final String READ_HITS = "read_hits";
        public static final String READ_MISSES = "read_misses";
        public static final String WRITE_HITS = "write_hits";
        public static final String WRITE_MISSES = "write_misses";
        public static final String BYPASSED = "bypassed";
        public static final String WRITTEN_BACK_BLOCKS = "written_back_blocks";
        public static final String WRITEBACK_ERROR = "writeback_error";
        public static final String CONTROLLER = "writeback.controller";
        /** Recent writeback pace in blocks per second (0 while idle). */
        public static final String WRITEBACK_RATE = "writeback_rate_blocks_per_s";
        /** 99th percentile latency of foreground reads, in microseconds. */
        public static final String READ_LATENCY_P99 = "read_latency_us_p99";
        /** 99th percentile latency of foreground writes, in microseconds. */
        public static final String WRITE_LATENCY_P99 = "write_latency_us_p99";

        private Keys() {
        }
    }

    /**
     * Message actions (passed to {@link #message}) every cache accepts, with these spellings,
     * e.g. {@code message(Actions.INVALIDATE, Actions.ALL)}.
     */
    final class Actions {
        /**
         * {@code invalidate=all}: drop every cached block, on the cache device too, so that no later
         * open of the same cache and backing devices serves a copy older than the backing device
         * (used before a cache is detached). Refused while blocks are dirty.
         */
        public static final String INVALIDATE = "invalidate";
        /** {@code writeback=all}: start writing back every dirty block now, without waiting. */
        public static final String WRITEBACK = "writeback";
        /** The value of the actions above. */
        public static final String ALL = "all";

        private Actions() {
        }
    }
}
