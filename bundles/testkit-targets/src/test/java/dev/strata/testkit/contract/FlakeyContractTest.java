package dev.strata.testkit.contract;

import dev.strata.api.BlockDevice;
import dev.strata.testkit.internal.flakey.FlakeyFactory;
import dev.strata.testsupport.contract.BlockDeviceContract;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.target.SimpleTargetContext;

/** The BlockDevice contract on {@code flakey} while up (it must be a faithful pass-through). */
class FlakeyContractTest extends BlockDeviceContract {
    @Override
    protected BlockDevice newDevice(long size) throws Exception {
        return new FlakeyFactory().create(SimpleTargetContext.of("flakey0", "device=disk up=1000 down=0 mode=corrupt_reads corrupt_byte=7")
                .with("disk", new CrashableDevice("disk", size, 512)));
    }
}
