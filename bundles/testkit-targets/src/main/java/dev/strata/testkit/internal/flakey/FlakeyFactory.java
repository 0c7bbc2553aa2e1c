package dev.strata.testkit.internal.flakey;

import dev.strata.api.BlockDevice;
import dev.strata.api.Target;
import dev.strata.api.TargetArguments;
import dev.strata.api.TargetContext;
import dev.strata.api.TargetFactory;
import dev.strata.testkit.internal.common.Args;
import org.osgi.service.component.annotations.Component;

import java.util.List;
import java.util.Map;

/**
 * {@code flakey device=DEV [up=MS] [down=MS] [mode=…] [corrupt_byte=N] [corrupt_value=V]
 * [region_offset=B] [region_length=B] [skip=N] [count=N] [probability=P] [seed=S]}.
 */
@Component(service = TargetFactory.class, property = TargetFactory.TYPE + "=" + FlakeyConfig.TYPE)
public class FlakeyFactory implements TargetFactory {

    @Override
    public String usage() {
        return "flakey device=DEV [up=0] [down=1000] [mode=error|error_reads|error_writes|drop_writes|corrupt_reads|corrupt_writes[,…]]"
                + " [corrupt_byte=N] [corrupt_value=0-255] [region_offset=B] [region_length=B] [skip=N] [count=N] [probability=100] [seed=0]";
    }

    @Override
    public List<String> lowerDevices(Map<String, String> arguments) {
        TargetArguments.of(FlakeyConfig.TYPE, arguments, FlakeyConfig.ARGS);
        return Args.lower(FlakeyConfig.TYPE, arguments, "device");
    }

    @Override
    public Target create(TargetContext context) {
        lowerDevices(context.arguments());
        BlockDevice lower = context.lowerDevice(context.arguments().get("device"));
        FlakeyConfig config = FlakeyConfig.parse(context.arguments(), lower);
        return new FlakeyTarget(context.deviceName(), lower, config, System::nanoTime);
    }
}
