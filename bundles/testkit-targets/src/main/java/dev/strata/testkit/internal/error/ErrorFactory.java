package dev.strata.testkit.internal.error;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;
import dev.strata.api.TargetArguments;
import dev.strata.api.TargetContext;
import dev.strata.api.TargetFactory;
import org.osgi.service.component.annotations.Component;

import java.util.List;
import java.util.Map;
import java.util.Set;

/** {@code error [size=1G] [block_size=512|4096]}: every I/O fails. */
@Component(service = TargetFactory.class, property = TargetFactory.TYPE + "=" + ErrorTarget.TYPE)
public class ErrorFactory implements TargetFactory {
    static final Set<String> ARGS = Set.of("size", "block_size");

    @Override
    public String usage() {
        return "error [size=1G] [block_size=512|4096]  — every I/O fails with an I/O error naming device and offset";
    }

    @Override
    public List<String> lowerDevices(Map<String, String> arguments) {
        TargetArguments.of(ErrorTarget.TYPE, arguments, ARGS);
        return List.of();
    }

    @Override
    public Target create(TargetContext context) {
        TargetArguments a = TargetArguments.of(ErrorTarget.TYPE, context.arguments(), ARGS);
        long blockSize = a.number("block_size", 512, 512, 4096);
        if (blockSize != 512 && blockSize != 4096) {
            throw new InvalidArgumentException("error: block_size=" + blockSize + " is not allowed; use 512 or 4096");
        }
        long size = a.size("size", 1L << 30, blockSize, Long.MAX_VALUE);
        if (size % blockSize != 0) {
            throw new InvalidArgumentException("error: size=" + a.asMap().get("size") + " is not a multiple of block_size " + blockSize);
        }
        return new ErrorTarget(context.deviceName(), size, (int) blockSize);
    }
}
