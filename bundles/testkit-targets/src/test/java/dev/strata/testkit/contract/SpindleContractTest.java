package dev.strata.testkit.contract;

import dev.strata.api.BlockDevice;
import dev.strata.testkit.internal.common.FakeSleeper;
import dev.strata.testkit.internal.spindle.DiskModel;
import dev.strata.testkit.internal.spindle.SpindleTarget;
import dev.strata.testsupport.contract.BlockDeviceContract;
import dev.strata.testsupport.crash.CrashableDevice;

/** The BlockDevice contract on {@code spindle} (model on a fake clock: nothing sleeps). */
class SpindleContractTest extends BlockDeviceContract {
    @Override
    protected BlockDevice newDevice(long size) {
        return new SpindleTarget("spindle0", new CrashableDevice("disk", size, 4096),
                new DiskModel(DiskModel.Params.defaults(size)), new FakeSleeper());
    }
}
