package dev.strata.testkit.crash;

import dev.strata.api.BlockDevice;
import dev.strata.core.internal.linear.LinearTargetFactory;
import dev.strata.testkit.internal.common.FakeSleeper;
import dev.strata.testkit.internal.delay.DelayFactory;
import dev.strata.testkit.internal.flakey.FlakeyFactory;
import dev.strata.testkit.internal.logwrites.LogWritesFactory;
import dev.strata.testkit.internal.spindle.DiskModel;
import dev.strata.testkit.internal.spindle.SpindleTarget;
import dev.strata.testsupport.crash.CrashTestSubject;
import dev.strata.testsupport.crash.CrashTestSubject.DeviceSpec;
import dev.strata.testsupport.crash.FactorySubject;

import java.util.List;

/** The crash-test subjects of every target that exists: how each is built over crashable devices. */
public final class Subjects {
    private Subjects() {
    }

    /** {@code linear} (core) with an offset, so addresses are translated. */
    public static CrashTestSubject linear() {
        return new FactorySubject("linear", new LinearTargetFactory(), "device=disk offset=64k",
                List.of(new DeviceSpec("disk", 512 * 1024, 512)));
    }

    /** {@code delay} with no delay: a pass-through that must keep every durability rule. */
    public static CrashTestSubject delay() {
        return new FactorySubject("delay", new DelayFactory(), "device=disk read_ms=0 write_ms=0 flush_ms=0",
                List.of(new DeviceSpec("disk", 256 * 1024, 4096)));
    }

    /** {@code flakey} that never goes down. */
    public static CrashTestSubject flakeyUp() {
        return new FactorySubject("flakey (up)", new FlakeyFactory(), "device=disk up=1000 down=0",
                List.of(new DeviceSpec("disk", 256 * 1024, 4096)));
    }

    /** {@code flakey} that drops every write: a broken device the checkers must catch. */
    public static CrashTestSubject flakeyDroppingWrites() {
        return new FactorySubject("flakey (drop_writes)", new FlakeyFactory(), "device=disk mode=drop_writes",
                List.of(new DeviceSpec("disk", 256 * 1024, 4096)));
    }

    /** {@code logwrites} recording to a log device (both crash). */
    public static CrashTestSubject logwrites() {
        return new FactorySubject("logwrites", new LogWritesFactory(), "device=disk log=log",
                List.of(new DeviceSpec("disk", 256 * 1024, 4096), new DeviceSpec("log", 4 << 20, 512)));
    }

    /** {@code spindle} on a fake clock (the model runs, nothing sleeps). */
    public static CrashTestSubject spindle() {
        return new CrashTestSubject() {
            @Override
            public String name() {
                return "spindle";
            }

            @Override
            public List<DeviceSpec> devices() {
                return List.of(new DeviceSpec("disk", 256 * 1024, 4096));
            }

            @Override
            public BlockDevice create(List<BlockDevice> devices) {
                return reopen(devices);
            }

            @Override
            public BlockDevice reopen(List<BlockDevice> devices) {
                BlockDevice d = devices.get(0);
                return new SpindleTarget("spindle", d, new DiskModel(DiskModel.Params.defaults(d.size())), new FakeSleeper());
            }
        };
    }
}
