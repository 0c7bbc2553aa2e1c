package dev.strata.testkit.internal.spindle;

import dev.strata.api.BlockDevice;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;
import dev.strata.api.TargetArguments;
import dev.strata.api.TargetContext;
import dev.strata.api.TargetFactory;
import dev.strata.testkit.internal.common.Args;
import dev.strata.testkit.internal.common.Sleeper;
import org.osgi.service.component.annotations.Component;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code spindle device=DEV [rpm=7200] [seek_ms=4] [track_to_track_ms=0.5] [transfer_mb_s=150]
 * [capacity=device size] [seed=0]}.
 */
@Component(service = TargetFactory.class, property = TargetFactory.TYPE + "=" + SpindleTarget.TYPE)
public class SpindleFactory implements TargetFactory {
    static final Set<String> ARGS = Set.of("device", "rpm", "seek_ms", "track_to_track_ms", "transfer_mb_s", "capacity", "seed");

    @Override
    public String usage() {
        return "spindle device=DEV [rpm=7200] [seek_ms=4] [track_to_track_ms=0.5] [transfer_mb_s=150] [capacity=SIZE] [seed=0]"
                + "  — a rotating disk model (seek by distance, rotation, transfer; requests serialized)";
    }

    @Override
    public List<String> lowerDevices(Map<String, String> arguments) {
        TargetArguments.of(SpindleTarget.TYPE, arguments, ARGS);
        return Args.lower(SpindleTarget.TYPE, arguments, "device");
    }

    @Override
    public Target create(TargetContext context) {
        lowerDevices(context.arguments());
        DiskModel.Params params = parse(context.arguments(), context.lowerDevice(context.arguments().get("device")));
        return new SpindleTarget(context.deviceName(), context.lowerDevice(context.arguments().get("device")), new DiskModel(params),
                Sleeper.SYSTEM);
    }

    static DiskModel.Params parse(Map<String, String> arguments, BlockDevice lower) {
        String t = SpindleTarget.TYPE;
        TargetArguments a = TargetArguments.of(t, arguments, ARGS);
        double rpm = Args.decimal(a, t, "rpm", 7200, 1, 100_000);
        long seek = Args.millis(a, t, "seek_ms", 4, 10_000);
        long ttt = Args.millis(a, t, "track_to_track_ms", Math.min(0.5, seek / 1e6), 10_000);
        if (ttt > seek) {
            throw new InvalidArgumentException("spindle: track_to_track_ms=" + ttt / 1e6 + " is longer than seek_ms=" + seek / 1e6
                    + "; the average seek cannot be shorter than the shortest");
        }
        double mbs = Args.decimal(a, t, "transfer_mb_s", 150, 0.001, 1_000_000);
        long capacity = a.size("capacity", lower.size(), 1, Long.MAX_VALUE);
        long seed = a.number("seed", 0, Long.MIN_VALUE, Long.MAX_VALUE);
        return new DiskModel.Params(rpm, seek, ttt, mbs * 1e6, capacity, seed);
    }
}
