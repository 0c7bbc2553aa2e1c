package dev.strata.core.internal;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

import dev.strata.api.InvalidArgumentException;

/**
 * What persists of a mapped device: its name, target type and arguments (its table line), its
 * identity (a UUID stamped at creation; {@code null} in a definition written before identities
 * existed, until it is first loaded) and the tunables set with {@code dev:message} that survive a
 * restart and a reload. Equality ignores the order of the arguments and tunables.
 * <p>
 * {@code stagedFor} is set only on a stored definition written by an attach before its commit
 * (the lower half of device {@code stagedFor}, see {@link Attacher}); it is never applied as such:
 * at start it is either completed (the upper device's definition names it) or rolled back.
 * {@code lowerOf} is set on the lower device an attach made for device {@code lowerOf}: a
 * {@code cache:detach} of that device collapses back onto it ({@link Collapser}) instead of
 * leaving a {@code linear} mapping over it.
 */
public record DeviceDefinition(String name, String type, Map<String, String> arguments, String id,
        Map<String, String> tunables, String stagedFor, String lowerOf) {

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
    private static final Pattern TYPE = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

    public DeviceDefinition {
        arguments = Collections.unmodifiableMap(new LinkedHashMap<>(arguments));
        tunables = Collections.unmodifiableMap(new LinkedHashMap<>(tunables == null ? Map.of() : tunables));
    }

    public DeviceDefinition(String name, String type, Map<String, String> arguments, String id,
            Map<String, String> tunables) {
        this(name, type, arguments, id, tunables, null, null);
    }

    public DeviceDefinition(String name, String type, Map<String, String> arguments, String id,
            Map<String, String> tunables, String stagedFor) {
        this(name, type, arguments, id, tunables, stagedFor, null);
    }

    /** This definition marked as the uncommitted lower half of an attach to {@code upper} (null: unmarked). */
    public DeviceDefinition staged(String upper) {
        return new DeviceDefinition(name, type, arguments, id, tunables, upper, lowerOf);
    }

    /** This definition marked as the lower device an attach made for {@code upper} (null: unmarked). */
    public DeviceDefinition lowerOf(String upper) {
        return new DeviceDefinition(name, type, arguments, id, tunables, stagedFor, upper);
    }

    /** A definition without identity or tunables (what a user or a {@code .cfg} file gives). */
    public DeviceDefinition(String name, String type, Map<String, String> arguments) {
        this(name, type, arguments, null, Map.of());
    }

    public DeviceDefinition withId(String newId) {
        return new DeviceDefinition(name, type, arguments, newId, tunables, stagedFor, lowerOf);
    }

    public DeviceDefinition withTunable(String key, String value) {
        Map<String, String> t = new LinkedHashMap<>(tunables);
        t.put(key, value);
        return new DeviceDefinition(name, type, arguments, id, t, stagedFor, lowerOf);
    }

    public DeviceDefinition withTunables(Map<String, String> t) {
        return new DeviceDefinition(name, type, arguments, id, t, stagedFor, lowerOf);
    }

    /** Checks a device name: letters, digits, '.', '_', '-', starting with a letter or digit, at most 64. */
    public static String checkName(String name) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new InvalidArgumentException("invalid device name '" + name
                    + "'; use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit");
        }
        return name;
    }

    /** Checks the form of a target type name (whether it exists is the registry's business). */
    public static String checkType(String type) {
        if (type == null || !TYPE.matcher(type).matches()) {
            throw new InvalidArgumentException("invalid target type '" + type + "'; see dev:targets");
        }
        return type;
    }

    /** The table line: {@code name type key=value…} (what {@code dev:create} takes; no identity, no tunables). */
    public String tableLine() {
        StringBuilder sb = new StringBuilder(name).append(' ').append(type);
        arguments.forEach((k, v) -> sb.append(' ').append(k).append('=').append(v));
        return sb.toString();
    }
}
