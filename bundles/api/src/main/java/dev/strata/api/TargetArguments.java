package dev.strata.api;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Reads {@code key=value} target arguments with the same checks and messages for every target:
 * unknown keys, missing keys and malformed numbers, booleans and sizes are
 * {@link InvalidArgumentException}s naming the key and what was expected.
 */
public final class TargetArguments {
    private final String type;
    private final Map<String, String> values;

    private TargetArguments(String type, Map<String, String> values) {
        this.type = type;
        this.values = values;
    }

    /**
     * Wraps {@code values} for a target of {@code type}, rejecting keys outside {@code allowed}.
     */
    public static TargetArguments of(String type, Map<String, String> values, Set<String> allowed) {
        for (String key : values.keySet()) {
            if (!allowed.contains(key)) {
                throw new InvalidArgumentException(type + ": unknown argument '" + key + "'; allowed: "
                        + String.join(", ", new java.util.TreeSet<>(allowed)));
            }
        }
        return new TargetArguments(type, new LinkedHashMap<>(values));
    }

    /**
     * Parses {@code key=value} words into an ordered map.
     *
     * @throws InvalidArgumentException for a word without {@code =}, an empty key or a repeated key
     */
    public static Map<String, String> parse(Iterable<String> words) {
        Map<String, String> map = new LinkedHashMap<>();
        for (String word : words) {
            int eq = word.indexOf('=');
            if (eq <= 0) {
                throw new InvalidArgumentException("argument '" + word + "' is not of the form key=value");
            }
            String key = word.substring(0, eq);
            if (map.put(key, word.substring(eq + 1)) != null) {
                throw new InvalidArgumentException("argument '" + key + "' is given twice");
            }
        }
        return map;
    }

    public boolean has(String key) {
        return values.containsKey(key);
    }

    /** A required string argument. */
    public String string(String key) {
        String v = values.get(key);
        if (v == null || v.isEmpty()) {
            throw new InvalidArgumentException(type + ": missing argument '" + key + "=…'");
        }
        return v;
    }

    public String string(String key, String dflt) {
        String v = values.get(key);
        return v == null ? dflt : v;
    }

    public boolean bool(String key, boolean dflt) {
        String v = values.get(key);
        if (v == null) {
            return dflt;
        }
        switch (v.toLowerCase(java.util.Locale.ROOT)) {
            case "true": case "yes": case "on": case "1":
                return true;
            case "false": case "no": case "off": case "0":
                return false;
            default:
                throw new InvalidArgumentException(type + ": " + key + "=" + v + " is not a boolean; use true or false");
        }
    }

    /** A required whole number in {@code [min, max]}. */
    public long number(String key, long min, long max) {
        return checkRange(key, parseNumber(key, string(key)), min, max);
    }

    public long number(String key, long dflt, long min, long max) {
        String v = values.get(key);
        return v == null ? dflt : checkRange(key, parseNumber(key, v), min, max);
    }

    /** A required size in bytes ({@code 4096}, {@code 64k}, {@code 1M}, {@code 2G}, {@code 1T}) in {@code [min, max]}. */
    public long size(String key, long min, long max) {
        return checkRange(key, parseSize(key, string(key)), min, max);
    }

    public long size(String key, long dflt, long min, long max) {
        String v = values.get(key);
        return v == null ? dflt : checkRange(key, parseSize(key, v), min, max);
    }

    /** The arguments as given, in order. */
    public Map<String, String> asMap() {
        return java.util.Collections.unmodifiableMap(values);
    }

    private long checkRange(String key, long v, long min, long max) {
        if (v < min || v > max) {
            throw new InvalidArgumentException(type + ": " + key + "=" + values.get(key)
                    + " is out of range; allowed " + min + " to " + max);
        }
        return v;
    }

    private long parseNumber(String key, String v) {
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new InvalidArgumentException(type + ": " + key + "=" + v + " is not a whole number");
        }
    }

    /** Parses {@code 4096}, {@code 64k}, {@code 1M}, {@code 2G}, {@code 1T} (binary units, case-insensitive). */
    public static long parseSize(String key, String v) {
        String s = v.trim();
        long mult = 1;
        if (!s.isEmpty()) {
            char c = Character.toLowerCase(s.charAt(s.length() - 1));
            int shift = c == 'k' ? 10 : c == 'm' ? 20 : c == 'g' ? 30 : c == 't' ? 40 : 0;
            if (shift != 0) {
                mult = 1L << shift;
                s = s.substring(0, s.length() - 1);
            }
        }
        try {
            long n = Long.parseLong(s);
            if (n < 0 || n > Long.MAX_VALUE / mult) {
                throw new NumberFormatException();
            }
            return n * mult;
        } catch (NumberFormatException e) {
            throw new InvalidArgumentException(key + "=" + v + " is not a size; use bytes or a number with k, M, G or T");
        }
    }
}
