package dev.strata.core.internal.linear;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.osgi.service.component.annotations.Component;

import dev.strata.api.BlockDevice;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;
import dev.strata.api.TargetArguments;
import dev.strata.api.TargetContext;
import dev.strata.api.TargetFactory;

/** {@code linear device=NAME [offset=0] [length=rest]}: a window onto a lower device. */
@Component(service = TargetFactory.class, property = TargetFactory.TYPE + "=" + LinearTargetFactory.TYPE)
public final class LinearTargetFactory implements TargetFactory {
    public static final String TYPE = "linear";
    private static final Set<String> KEYS = Set.of("device", "offset", "length");

    @Override
    public String usage() {
        return "linear device=NAME [offset=0] [length=rest]";
    }

    @Override
    public List<String> lowerDevices(Map<String, String> arguments) {
        TargetArguments a = TargetArguments.of(TYPE, arguments, KEYS);
        return List.of(a.string("device"));
    }

    /** A linear window over one device: attachable in front of a device (cache:attach DEV linear). */
    @Override
    public String backingArgument() {
        return "device";
    }

    /** What create refuses for the arguments alone: offset and length not sizes, not multiples of 512. */
    @Override
    public void check(Map<String, String> arguments) {
        TargetArguments a = TargetArguments.of(TYPE, arguments, KEYS);
        a.string("device");
        offset(a);
        length(a, BlockDevice.SECTOR);
    }

    @Override
    public Target create(TargetContext context) throws IOException {
        TargetArguments a = TargetArguments.of(TYPE, context.arguments(), KEYS);
        String name = a.string("device");
        BlockDevice lower = context.lowerDevice(name);
        long lowerSize = lower.size();
        long offset = offset(a);
        if (offset >= lowerSize) {
            throw new InvalidArgumentException(TYPE + ": offset=" + a.string("offset") + " is at or past the end of '"
                    + name + "' (" + lowerSize + " bytes)");
        }
        long length = length(a, lowerSize - offset);
        if (length > lowerSize - offset) {
            throw new InvalidArgumentException(TYPE + ": offset+length reaches past the end of '" + name + "' ("
                    + lowerSize + " bytes); at most length=" + (lowerSize - offset));
        }
        return new LinearTarget(context.deviceName(), name, lower, offset, length);
    }

    private static long offset(TargetArguments a) {
        long offset = a.size("offset", 0, 0, Long.MAX_VALUE);
        if (offset % BlockDevice.SECTOR != 0) {
            throw new InvalidArgumentException(TYPE + ": offset=" + a.string("offset") + " is not a multiple of 512");
        }
        return offset;
    }

    /** {@code length}, or {@code rest} (the rest of the lower device) when absent. */
    private static long length(TargetArguments a, long rest) {
        long length = a.size("length", rest, BlockDevice.SECTOR, Long.MAX_VALUE);
        if (length % BlockDevice.SECTOR != 0) {
            throw new InvalidArgumentException(TYPE + ": length=" + a.string("length") + " is not a multiple of 512");
        }
        return length;
    }
}
