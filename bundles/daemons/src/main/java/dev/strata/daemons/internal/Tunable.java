package dev.strata.daemons.internal;

import dev.strata.api.InvalidArgumentException;
import java.util.Locale;

/**
 * One tunable of a controller: its key, default, allowed range and what it means, so that every
 * bad value is refused with one line that names the range (and nothing changes).
 *
 * @param controller the controller's name, first word of every message
 * @param key        the key as the cache passes it ({@code writeback.} prefix stripped)
 * @param min        smallest allowed value
 * @param max        largest allowed value
 * @param defaultValue the value when the cache sets none
 * @param meaning    unit and meaning, shown after the range
 * @param isFlag     a switch (0 false, 1 true) set as {@code true}/{@code false}
 */
public record Tunable(String controller, String key, long min, long max, long defaultValue, String meaning,
        boolean isFlag) {

    /** A number within [min, max]. */
    public Tunable(String controller, String key, long min, long max, long defaultValue, String meaning) {
        this(controller, key, min, max, defaultValue, meaning, false);
    }

    /** A switch: 0 is false, 1 is true; set as {@code true}/{@code false} (or on/off, yes/no, 1/0). */
    public static Tunable flag(String controller, String key, boolean defaultValue, String meaning) {
        return new Tunable(controller, key, 0, 1, defaultValue ? 1 : 0, meaning, true);
    }

    /**
     * Parses a value.
     *
     * @throws InvalidArgumentException a value that is not a number or out of range
     */
    public long parse(String value) {
        String v = value == null ? "" : value.trim();
        if (isFlag()) {
            switch (v.toLowerCase(Locale.ROOT)) {
                case "true", "on", "yes", "1" -> {
                    return 1;
                }
                case "false", "off", "no", "0" -> {
                    return 0;
                }
                default -> throw new InvalidArgumentException(controller + ": " + key + "=" + v
                        + " is not a switch; allowed true or false (" + meaning + ")");
            }
        }
        long n;
        try {
            n = Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new InvalidArgumentException(controller + ": " + key + "=" + v + " is not a whole number; allowed "
                    + range() + " (" + meaning + ")");
        }
        if (n < min || n > max) {
            throw new InvalidArgumentException(controller + ": " + key + "=" + v + " is out of range; allowed "
                    + range() + " (" + meaning + ")");
        }
        return n;
    }

    /** The allowed range as the messages and docs print it. */
    public String range() {
        return min + " to " + max;
    }
}
