package dev.strata.testkit.contract;

import dev.strata.api.BlockDevice;
import dev.strata.driver.memory.internal.MemoryTargetFactory;
import dev.strata.testkit.internal.logwrites.LogWritesFactory;
import dev.strata.testsupport.contract.BlockDeviceContract;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.target.SimpleTargetContext;

/**
 * The BlockDevice contract on {@code logwrites}, recording to a large sparse {@code memory} log
 * (the concurrency tests write about 100 MB).
 */
class LogWritesContractTest extends BlockDeviceContract {
    private BlockDevice log;

    @Override
    protected BlockDevice newDevice(long size) throws Exception {
        log = new MemoryTargetFactory().create(SimpleTargetContext.of("log", "size=4G"));
        return new LogWritesFactory().create(SimpleTargetContext.of("lw0", "device=disk log=log")
                .with("disk", new CrashableDevice("disk", size, 4096)).with("log", log));
    }

    @Override
    protected void closeDevice(BlockDevice device) throws Exception {
        device.close();
        log.close();
    }
}
