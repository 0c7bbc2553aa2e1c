package dev.strata.cache.writeboost.internal.contract;

import dev.strata.api.BlockDevice;
import dev.strata.cache.writeboost.internal.io.Tunables;
import dev.strata.cache.writeboost.internal.io.WriteboostCache;
import dev.strata.cache.writeboost.internal.testing.MemDevice;
import dev.strata.testsupport.contract.BlockDeviceContract;

/** The BlockDevice contract, with small bypass thresholds so both paths (log and bypass) are covered. */
class WriteboostContractTest extends BlockDeviceContract {
    @Override
    protected BlockDevice newDevice(long size) throws Exception {
        MemDevice backing = new MemDevice("backing", size);
        MemDevice cache = new MemDevice("cache", 17L << 20);
        return WriteboostCache.open("wb", backing, cache, false,
                Tunables.DEFAULTS.with(Tunables.BYPASS_THRESHOLD, "128k").with(Tunables.SEQUENTIAL_CUTOFF, "512k"),
                WriteboostCache.Options.defaults(), null);
    }

    @Override
    protected void closeDevice(BlockDevice device) throws Exception {
        device.close();
    }
}
