package dev.strata.api;

/**
 * Decides how fast a cache writes dirty data back to its backing device. Registered as an OSGi
 * service with {@value #NAME}{@code =<name>}; caches bind a controller by name dynamically and
 * use a built-in default while none is available.
 */
public interface WritebackController {

    /** Service property naming the controller, e.g. {@code strata.controller=modulator}. */
    String NAME = "strata.controller";

    /**
     * How many blocks the cache may write back in its next batch; 0 means wait and ask again.
     * Called by the cache's writeback daemon before each batch; must be cheap and must not block.
     */
    int allowance(CacheLoad load);

    /**
     * A cache's counters at one moment.
     *
     * @param dirtyBlocks            dirty blocks in the cache
     * @param capacityBlocks         blocks the cache can hold
     * @param backingBusyPercent     how busy the backing device was recently, 0–100
     * @param foregroundOpsPerSecond recent rate of foreground requests
     * @param idleMillis             time since the last foreground request
     * @param maxBatch               the cache's configured upper bound on one batch
     * @param thresholdPercent       the cache's {@code writeback_threshold} tunable
     */
    record CacheLoad(long dirtyBlocks, long capacityBlocks, int backingBusyPercent, long foregroundOpsPerSecond,
            long idleMillis, int maxBatch, int thresholdPercent) {
    }
}
