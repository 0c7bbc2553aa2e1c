package dev.strata.core.internal;

import java.util.Map;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceHandle;
import dev.strata.testsupport.contract.BlockDeviceContract;

/** The BlockDevice contract on a {@link DeviceHandle} of a mapped device: every request passes the gate. */
class MappedHandleContractTest extends BlockDeviceContract {
    private DeviceManagerImpl manager;

    @Override
    protected BlockDevice newDevice(long size) throws Exception {
        manager = new DeviceManagerImpl(new MemStore(), Settings.of(60, 30));
        manager.addFactory(TestTargets.entry(new TestTargets.ProbeFactory(), "probe"));
        manager.create("dev0", "probe", Map.of("size", Long.toString(size)));
        return manager.open("dev0", "contract");
    }

    @Override
    protected void closeDevice(BlockDevice device) throws Exception {
        ((DeviceHandle) device).close();
        manager.stop();
    }
}
