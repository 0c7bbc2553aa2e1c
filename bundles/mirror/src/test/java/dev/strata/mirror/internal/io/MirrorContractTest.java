package dev.strata.mirror.internal.io;

import dev.strata.api.BlockDevice;
import dev.strata.mirror.internal.log.CoreLog;
import dev.strata.mirror.internal.log.DiskLog;
import dev.strata.testsupport.contract.BlockDeviceContract;
import dev.strata.testsupport.crash.CrashableDevice;
import java.util.List;
import org.junit.jupiter.api.Nested;

/**
 * The BlockDevice contract, with each log (daemon threads running, as in production), and with
 * {@code write_fanout=caller} (every leg written on the calling thread).
 */
class MirrorContractTest {
    @Nested
    class WithCoreLog extends BlockDeviceContract {
        @Override
        protected BlockDevice newDevice(long size) throws Exception {
            return MirrorTarget.open("m", List.of("a", "b"), List.of(new CrashableDevice("a", size, 4096),
                    new CrashableDevice("b", size, 4096)), new CoreLog(), 64 * 1024, MirrorTarget.Options.defaults());
        }

        @Override
        protected void closeDevice(BlockDevice device) throws Exception {
            device.close();
        }
    }

    @Nested
    class WithDiskLogAndThreeLegs extends BlockDeviceContract {
        @Override
        protected BlockDevice newDevice(long size) throws Exception {
            return MirrorTarget.open("m", List.of("a", "b", "c"), List.of(new CrashableDevice("a", size, 4096),
                    new CrashableDevice("b", size, 4096), new CrashableDevice("c", size, 4096)),
                    new DiskLog("log", new CrashableDevice("log", 1 << 20, 4096)), 64 * 1024,
                    MirrorTarget.Options.defaults().withReadPolicy(ReadPolicy.LEAST_LOADED));
        }

        @Override
        protected void closeDevice(BlockDevice device) throws Exception {
            device.close();
        }
    }

    @Nested
    class WithCallerFanOutAndThreeLegs extends BlockDeviceContract {
        @Override
        protected BlockDevice newDevice(long size) throws Exception {
            MirrorTarget m = MirrorTarget.open("m", List.of("a", "b", "c"), List.of(new CrashableDevice("a", size, 4096),
                    new CrashableDevice("b", size, 4096), new CrashableDevice("c", size, 4096)),
                    new DiskLog("log", new CrashableDevice("log", 1 << 20, 4096)), 64 * 1024, MirrorTarget.Options.defaults());
            m.message("write_fanout", "caller");
            return m;
        }

        @Override
        protected void closeDevice(BlockDevice device) throws Exception {
            device.close();
        }
    }
}
