package dev.strata.core.internal.linear;

import java.util.Map;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceHandle;
import dev.strata.core.internal.DeviceManagerImpl;
import dev.strata.core.internal.FactoryEntry;
import dev.strata.core.internal.MemStore;
import dev.strata.core.internal.Settings;
import dev.strata.core.internal.TestTargets;
import dev.strata.testsupport.contract.BlockDeviceContract;

/** The BlockDevice contract on a {@code linear} window (offset 1 MiB) over a RAM device, through the manager. */
class LinearContractTest extends BlockDeviceContract {
    private DeviceManagerImpl manager;

    @Override
    protected BlockDevice newDevice(long size) throws Exception {
        manager = new DeviceManagerImpl(new MemStore(), Settings.of(60, 30));
        manager.addFactory(TestTargets.entry(new TestTargets.ProbeFactory(), "probe"));
        manager.addFactory(new FactoryEntry("linear", new LinearTargetFactory(), "dev.strata.core", "0", 0, 1));
        manager.create("low", "probe", Map.of("size", Long.toString(size + 2 * MIB)));
        manager.create("lin", "linear", Map.of("device", "low", "offset", "1M", "length", Long.toString(size)));
        return manager.open("lin", "contract");
    }

    @Override
    protected void closeDevice(BlockDevice device) throws Exception {
        ((DeviceHandle) device).close();
        manager.stop();
    }
}
