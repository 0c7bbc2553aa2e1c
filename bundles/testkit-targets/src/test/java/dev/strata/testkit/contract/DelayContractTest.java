package dev.strata.testkit.contract;

import dev.strata.api.BlockDevice;
import dev.strata.testkit.internal.delay.DelayFactory;
import dev.strata.testsupport.contract.BlockDeviceContract;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.target.SimpleTargetContext;

/** The BlockDevice contract on {@code delay} (small real delays) over an in-memory disk. */
class DelayContractTest extends BlockDeviceContract {
    @Override
    protected BlockDevice newDevice(long size) throws Exception {
        return new DelayFactory().create(SimpleTargetContext.of("delay0", "device=disk read_ms=0.01 write_ms=0.01 flush_ms=0.05")
                .with("disk", new CrashableDevice("disk", size, 4096)));
    }
}
