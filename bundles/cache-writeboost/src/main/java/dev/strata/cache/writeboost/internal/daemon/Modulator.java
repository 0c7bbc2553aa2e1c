package dev.strata.cache.writeboost.internal.daemon;

import dev.strata.api.WritebackController;

/**
 * The built-in writeback controller: write back a full batch while the backing device is less
 * busy than {@code writeback_threshold} percent, nothing otherwise. A threshold of 0 turns
 * background writeback off (the cache still writes back when its log is full).
 */
public final class Modulator implements WritebackController {
    public static final String NAME = "modulator";
    public static final Modulator INSTANCE = new Modulator();

    @Override
    public int allowance(CacheLoad load) {
        if (load.dirtyBlocks() == 0 || load.thresholdPercent() == 0) {
            return 0;
        }
        return load.backingBusyPercent() < load.thresholdPercent() ? load.maxBatch() : 0;
    }
}
