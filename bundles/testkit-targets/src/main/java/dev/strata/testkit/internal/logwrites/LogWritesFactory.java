package dev.strata.testkit.internal.logwrites;

import dev.strata.api.BlockDevice;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;
import dev.strata.api.TargetArguments;
import dev.strata.api.TargetContext;
import dev.strata.api.TargetFactory;
import org.osgi.service.component.annotations.Component;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** {@code logwrites device=DEV log=DEV}: records every completed request to the log device. */
@Component(service = TargetFactory.class, property = TargetFactory.TYPE + "=" + LogWritesTarget.TYPE)
public class LogWritesFactory implements TargetFactory {
    static final Set<String> ARGS = Set.of("device", "log");
    static final long MIN_LOG = 64 * 1024;

    @Override
    public String usage() {
        return "logwrites device=DEV log=DEV  — records every write, zeroing, discard, flush and FUA to the log device, in completion order";
    }

    @Override
    public List<String> lowerDevices(Map<String, String> arguments) {
        TargetArguments a = TargetArguments.of(LogWritesTarget.TYPE, arguments, ARGS);
        String device = a.string("device");
        String log = a.string("log");
        if (device.equals(log)) {
            throw new InvalidArgumentException("logwrites: device and log are both '" + device + "'; the log needs a device of its own");
        }
        return List.of(device, log);
    }

    @Override
    public Target create(TargetContext context) throws IOException {
        List<String> names = lowerDevices(context.arguments());
        BlockDevice device = context.lowerDevice(names.get(0));
        BlockDevice log = context.lowerDevice(names.get(1));
        if (log.size() < MIN_LOG) {
            throw new InvalidArgumentException("logwrites: log device '" + names.get(1) + "' has " + log.size()
                    + " bytes; it needs at least " + MIN_LOG + " (and room for all the data written)");
        }
        return LogWritesTarget.create(context.deviceName(), device, log);
    }
}
