package dev.strata.driver.memory.internal;

import dev.strata.api.BlockDevice;
import dev.strata.testsupport.contract.BlockDeviceContract;

/** The BlockDevice contract on a RAM disk. */
class MemoryTargetContractTest extends BlockDeviceContract {
    @Override
    protected BlockDevice newDevice(long size) {
        return new MemoryTarget(size);
    }
}
