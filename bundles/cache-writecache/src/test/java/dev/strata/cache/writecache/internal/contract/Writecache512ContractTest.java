package dev.strata.cache.writecache.internal.contract;

import dev.strata.api.BlockDevice;
import dev.strata.cache.writecache.internal.io.Options;
import dev.strata.cache.writecache.internal.io.Tunables;
import dev.strata.cache.writecache.internal.io.WritecacheSubject;
import dev.strata.cache.writecache.internal.recovery.Recovery;
import dev.strata.testsupport.contract.BlockDeviceContract;
import dev.strata.testsupport.crash.CrashableDevice;

/** The BlockDevice contract with 512-byte cache blocks (no partial blocks at all), FUA data written lazily. */
class Writecache512ContractTest extends BlockDeviceContract {
    @Override
    protected BlockDevice newDevice(long size) throws Exception {
        CrashableDevice backing = new CrashableDevice("backing", size, 512);
        int slots = (int) (size / 512 / 2);
        CrashableDevice cache = new CrashableDevice("cache", WritecacheSubject.cacheBytes(slots, 512), 512);
        return Recovery.open("wc", backing, cache, null, 512, false, Tunables.DEFAULTS,
                Options.defaults().withLazyFuaData());
    }
}
