package dev.strata.testkit.internal.delay;

import dev.strata.api.BlockDevice;
import dev.strata.api.Target;
import dev.strata.api.TargetArguments;
import dev.strata.api.TargetContext;
import dev.strata.api.TargetFactory;
import dev.strata.testkit.internal.common.Args;
import dev.strata.testkit.internal.common.Sleeper;
import org.osgi.service.component.annotations.Component;

import java.util.List;
import java.util.Map;

/** {@code delay device=DEV [read_ms=0] [write_ms=0] [flush_ms=0]} (milliseconds, decimals allowed). */
@Component(service = TargetFactory.class, property = TargetFactory.TYPE + "=" + DelayTarget.TYPE)
public class DelayFactory implements TargetFactory {

    @Override
    public String usage() {
        return "delay device=DEV [read_ms=0] [write_ms=0] [flush_ms=0]  — milliseconds, e.g. 0.5";
    }

    @Override
    public List<String> lowerDevices(Map<String, String> arguments) {
        TargetArguments.of(DelayTarget.TYPE, arguments, DelayTarget.ARGS);
        return Args.lower(DelayTarget.TYPE, arguments, "device");
    }

    @Override
    public Target create(TargetContext context) {
        lowerDevices(context.arguments());
        TargetArguments a = TargetArguments.of(DelayTarget.TYPE, context.arguments(), DelayTarget.ARGS);
        DelayTarget.Delays d = new DelayTarget.Delays(
                Args.millis(a, DelayTarget.TYPE, "read_ms", 0, DelayTarget.MAX_MS),
                Args.millis(a, DelayTarget.TYPE, "write_ms", 0, DelayTarget.MAX_MS),
                Args.millis(a, DelayTarget.TYPE, "flush_ms", 0, DelayTarget.MAX_MS));
        BlockDevice lower = context.lowerDevice(a.string("device"));
        return new DelayTarget(context.deviceName(), lower, d, Sleeper.SYSTEM);
    }
}
