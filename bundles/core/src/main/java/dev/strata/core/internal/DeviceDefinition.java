package dev.strata.core.internal;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

import dev.strata.api.InvalidArgumentException;

/**
 * What persists of a mapped device: its name, target type and arguments (its table line).
 * Equality ignores the order of the arguments.
 */
public record DeviceDefinition(String name, String type, Map<String, String> arguments) {

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
    private static final Pattern TYPE = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

    public DeviceDefinition {
        arguments = Collections.unmodifiableMap(new LinkedHashMap<>(arguments));
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

    /** The table line: {@code name type key=value…}. */
    public String tableLine() {
        StringBuilder sb = new StringBuilder(name).append(' ').append(type);
        arguments.forEach((k, v) -> sb.append(' ').append(k).append('=').append(v));
        return sb.toString();
    }
}
