package dev.strata.testsupport.crash;

import dev.strata.api.BlockDevice;
import dev.strata.testsupport.contract.BlockDeviceContract;

/** The crash harness's own disk keeps the BlockDevice contract. */
class CrashableDeviceContractTest extends BlockDeviceContract {
    @Override
    protected BlockDevice newDevice(long size) {
        return new CrashableDevice("crashable", size, 4096);
    }
}
