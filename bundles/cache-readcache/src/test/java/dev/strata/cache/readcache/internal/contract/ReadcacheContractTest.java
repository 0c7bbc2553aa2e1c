package dev.strata.cache.readcache.internal.contract;

import dev.strata.api.BlockDevice;
import dev.strata.cache.readcache.internal.io.Opener;
import dev.strata.cache.readcache.internal.io.TestPolicies;
import dev.strata.testsupport.contract.BlockDeviceContract;
import dev.strata.testsupport.crash.CrashableDevice;
import java.util.Map;

/** The BlockDevice contract over readcache (LRU admits every miss, so hits, promotions and invalidations all run). */
class ReadcacheContractTest extends BlockDeviceContract {
    @Override
    protected BlockDevice newDevice(long size) throws Exception {
        CrashableDevice origin = new CrashableDevice("origin", size, 4096);
        CrashableDevice cache = new CrashableDevice("cache", 8192 + 256 * 4096, 4096);
        Opener.Options o = Opener.withTunables(Opener.withPolicy(Opener.options(TestPolicies.all()), "lru"), 1 << 20, Map.of());
        return Opener.open("rc", origin, cache, o);
    }

    @Override
    protected void closeDevice(BlockDevice device) throws Exception {
        device.close();
    }
}
