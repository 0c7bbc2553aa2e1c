package dev.strata.testkit.contract;

import dev.strata.api.BlockDevice;
import dev.strata.core.internal.linear.LinearTargetFactory;
import dev.strata.testsupport.contract.BlockDeviceContract;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.target.SimpleTargetContext;

/** The BlockDevice contract on {@code linear} (core) at an offset into an in-memory disk. */
class LinearContractTest extends BlockDeviceContract {
    @Override
    protected BlockDevice newDevice(long size) throws Exception {
        return new LinearTargetFactory().create(SimpleTargetContext.of("lin0", "device=disk offset=1M length=" + size)
                .with("disk", new CrashableDevice("disk", size + (2 << 20), 4096)));
    }
}
