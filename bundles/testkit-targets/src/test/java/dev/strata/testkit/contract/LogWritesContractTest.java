package dev.strata.testkit.contract;

import dev.strata.api.BlockDevice;
import dev.strata.testkit.internal.logwrites.LogWritesFactory;
import dev.strata.testsupport.contract.BlockDeviceContract;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.target.SimpleTargetContext;

/** The BlockDevice contract on {@code logwrites} (recording to a 256 MiB in-memory log: the contract's concurrent-writer tests log about 80 MiB). */
class LogWritesContractTest extends BlockDeviceContract {
    @Override
    protected BlockDevice newDevice(long size) throws Exception {
        return new LogWritesFactory().create(SimpleTargetContext.of("lw0", "device=disk log=log")
                .with("disk", new CrashableDevice("disk", size, 4096)).with("log", new CrashableDevice("log", 256L << 20, 512)));
    }
}
