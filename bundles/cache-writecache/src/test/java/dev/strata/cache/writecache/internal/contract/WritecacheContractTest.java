package dev.strata.cache.writecache.internal.contract;

import dev.strata.api.BlockDevice;
import dev.strata.cache.writecache.internal.io.Options;
import dev.strata.cache.writecache.internal.io.Tunables;
import dev.strata.cache.writecache.internal.io.WritecacheSubject;
import dev.strata.cache.writecache.internal.recovery.Recovery;
import dev.strata.testsupport.contract.BlockDeviceContract;
import dev.strata.testsupport.crash.CrashableDevice;

/**
 * The BlockDevice contract over a cache of 1/4 of the device, background thread on: the cache
 * fills, so writes hit cached slots, take new ones, go around, and wait for writeback.
 */
class WritecacheContractTest extends BlockDeviceContract {
    @Override
    protected BlockDevice newDevice(long size) throws Exception {
        CrashableDevice backing = new CrashableDevice("backing", size, 512);
        int slots = (int) (size / 4096 / 4);
        CrashableDevice cache = new CrashableDevice("cache", WritecacheSubject.cacheBytes(slots, 4096), 512);
        return Recovery.open("wc", backing, cache, null, 4096, false, Tunables.DEFAULTS, Options.defaults());
    }
}
