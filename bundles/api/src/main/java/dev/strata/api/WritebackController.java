package dev.strata.api;

import java.util.Map;

/**
 * Decides how fast a cache writes dirty data back to its backing device. Registered as an OSGi
 * service with {@value #NAME}{@code =<name>}. Caches bind a controller by name dynamically and
 * use a built-in default while none of that name is available, so the bundle that provides it can
 * be updated under load.
 * <p>
 * One service paces any number of caches: each cache {@link #open opens} a {@link Session} that
 * holds its own state (an integral, a token bucket, an idle timer). Everything a decision needs
 * arrives in the {@link CacheLoad} with the time it was taken, so controllers keep no clock of
 * their own and tests drive them with made-up times.
 */
public interface WritebackController {

    /** Service property naming the controller, e.g. {@code strata.controller=modulator}. */
    String NAME = "strata.controller";

    /**
     * Starts pacing one cache.
     *
     * @param cache     the cache device's name (for status lines and logs)
     * @param tunables  the controller's tunables as set on the cache (keys without the
     *                  {@code writeback.} prefix, e.g. {@code writeback_percent=10}); unknown keys
     *                  are ignored, so a cache can switch controllers without losing settings
     * @throws InvalidArgumentException a known tunable with a bad value
     */
    Session open(String cache, Map<String, String> tunables);

    /** One cache's pacing state. Not shared between caches; called by one thread at a time. */
    interface Session extends AutoCloseable {

        /** Decides what the cache may write back now. Cheap; never blocks. */
        Decision decide(CacheLoad load);

        /**
         * Like {@link #decide(CacheLoad)}, for a cache that also knows how much of its space its
         * dirty data pins; controllers that weigh fragmentation (bcache's 2021 term) use it, the
         * others ignore it. Added after the contract was agreed, so it defaults to the plain call.
         */
        default Decision decide(CacheLoad load, Occupancy occupancy) {
            return decide(load);
        }

        /**
         * Sets a tunable of this controller for this cache.
         *
         * @return false if the key is not one of this controller's (nothing changed)
         * @throws InvalidArgumentException a value out of range, with the allowed range
         */
        default boolean set(String key, String value) {
            return false;
        }

        /**
         * What the cache wrote back after the last grant: {@code blocks} may be more than granted
         * (a cache that writes back whole units, e.g. writeboost's log segments) or fewer (blocks
         * that turned clean). A controller that spaces grants by a rate charges the difference, so
         * the rate is what reaches the backing device, not what was granted. Called once per paced
         * batch, not for the batches the cache's own triggers force. Added after the contract was
         * agreed (api 1.5); the default ignores it.
         */
        default void wroteBack(long blocks, long nanoTime) {
        }

        /** The current decision and its inputs, for {@code cache:stats} (stable order). */
        Map<String, String> status();

        /** Releases the session; the controller forgets the cache. */
        @Override
        default void close() {
        }
    }

    /**
     * A cache's counters at one moment.
     *
     * @param nanoTime               when they were read ({@link System#nanoTime()} or a fake clock)
     * @param dirtyBlocks            dirty blocks in the cache
     * @param capacityBlocks         blocks the cache can hold
     * @param blockSize              the cache's block size in bytes
     * @param backingBusyPercent     how busy the backing device was over the last second, 0–100
     * @param backingLatencyMicros   median latency of the backing device's recent writes (0: none)
     * @param foregroundOpsPerSecond recent rate of foreground requests
     * @param idleMillis             time since the last foreground request
     * @param maxBatch               the cache's upper bound on one writeback batch, in blocks
     */
    record CacheLoad(long nanoTime, long dirtyBlocks, long capacityBlocks, int blockSize, int backingBusyPercent,
            long backingLatencyMicros, long foregroundOpsPerSecond, long idleMillis, int maxBatch) {
    }

    /**
     * The cache space that dirty data keeps from being reused, in the cache's unit of reuse (a
     * log segment, a bucket; 1 block for a cache that reuses single blocks).
     *
     * @param usedBlocks  blocks of the cache held by units that contain dirty data (≥ dirty blocks)
     * @param unitBlocks  blocks per unit of reuse (≥ 1)
     */
    record Occupancy(long usedBlocks, int unitBlocks) {
    }

    /**
     * What the cache may do now.
     *
     * @param blocks            how many blocks it may write back now (0: wait); never above maxBatch
     * @param askAgainNanos     when to ask again at the latest if it writes nothing back (≥ 0)
     * @param rateBlocksPerSec  the pace the controller aims for, for display (-1: unlimited)
     */
    record Decision(int blocks, long askAgainNanos, long rateBlocksPerSec) {
        /** Write back a full batch now, at no particular rate. */
        public static Decision fullSpeed(int maxBatch) {
            return new Decision(maxBatch, 0, -1);
        }

        /** Write nothing back; ask again after {@code nanos}. */
        public static Decision waitFor(long nanos) {
            return new Decision(0, nanos, 0);
        }
    }
}
