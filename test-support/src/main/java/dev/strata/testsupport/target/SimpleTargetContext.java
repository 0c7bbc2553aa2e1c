package dev.strata.testsupport.target;

import dev.strata.api.BlockDevice;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.TargetArguments;
import dev.strata.api.TargetContext;

import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A {@link TargetContext} for unit tests that call a {@code TargetFactory} directly: a device
 * name, the arguments, and named lower devices.
 *
 * <pre>{@code
 * Target t = new FlakeyFactory().create(SimpleTargetContext.of("f0", "device=disk mode=error_reads")
 *         .with("disk", disk));
 * }</pre>
 */
public final class SimpleTargetContext implements TargetContext {
    private final String deviceName;
    private final Map<String, String> arguments;
    private final Map<String, BlockDevice> lower = new LinkedHashMap<>();

    private SimpleTargetContext(String deviceName, Map<String, String> arguments) {
        this.deviceName = deviceName;
        this.arguments = Collections.unmodifiableMap(new LinkedHashMap<>(arguments));
    }

    /** A context for device {@code deviceName} with {@code key=value} words separated by spaces. */
    public static SimpleTargetContext of(String deviceName, String words) {
        String w = words.trim();
        return new SimpleTargetContext(deviceName, w.isEmpty() ? Map.of() : TargetArguments.parse(Arrays.asList(w.split("\\s+"))));
    }

    /** Adds a lower device under {@code name}. */
    public SimpleTargetContext with(String name, BlockDevice device) {
        lower.put(name, device);
        return this;
    }

    @Override
    public String deviceName() {
        return deviceName;
    }

    @Override
    public Map<String, String> arguments() {
        return arguments;
    }

    @Override
    public BlockDevice lowerDevice(String name) {
        BlockDevice d = lower.get(name);
        if (d == null) {
            throw new InvalidArgumentException("no device named '" + name + "'");
        }
        return d;
    }
}
