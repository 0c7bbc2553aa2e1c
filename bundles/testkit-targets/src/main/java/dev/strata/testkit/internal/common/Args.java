package dev.strata.testkit.internal.common;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.TargetArguments;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;

/** Argument helpers shared by the test-kit factories. */
public final class Args {
    private Args() {
    }

    /** The value of {@code key} as the single lower device name. */
    public static List<String> lower(String type, Map<String, String> arguments, String key) {
        String v = arguments.get(key);
        if (v == null || v.isEmpty()) {
            throw new InvalidArgumentException(type + ": missing argument '" + key + "=DEVICE'");
        }
        return List.of(v);
    }

    /**
     * A duration in milliseconds with up to three decimals ({@code 8}, {@code 0.25}) in
     * {@code [0, max]}, returned in nanoseconds.
     */
    public static long millis(TargetArguments args, String type, String key, double dflt, double max) {
        if (!args.has(key)) {
            return Math.round(dflt * 1_000_000);
        }
        String v = args.string(key, "");
        BigDecimal d;
        try {
            d = new BigDecimal(v.trim());
        } catch (NumberFormatException e) {
            throw new InvalidArgumentException(type + ": " + key + "=" + v + " is not a number of milliseconds");
        }
        if (d.signum() < 0 || d.compareTo(BigDecimal.valueOf(max)) > 0) {
            throw new InvalidArgumentException(type + ": " + key + "=" + v + " is out of range; allowed 0 to " + (long) max + " ms");
        }
        return d.multiply(BigDecimal.valueOf(1_000_000)).longValue();
    }

    /** A decimal number in {@code [min, max]}. */
    public static double decimal(TargetArguments args, String type, String key, double dflt, double min, double max) {
        if (!args.has(key)) {
            return dflt;
        }
        String v = args.string(key, "");
        double d;
        try {
            d = Double.parseDouble(v.trim());
        } catch (NumberFormatException e) {
            throw new InvalidArgumentException(type + ": " + key + "=" + v + " is not a number");
        }
        if (!(d >= min && d <= max)) {
            throw new InvalidArgumentException(type + ": " + key + "=" + v + " is out of range; allowed " + fmt(min) + " to " + fmt(max));
        }
        return d;
    }

    private static String fmt(double d) {
        return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
    }
}
