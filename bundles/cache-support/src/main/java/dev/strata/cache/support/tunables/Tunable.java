package dev.strata.cache.support.tunables;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.TargetArguments;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * One runtime tunable of a cache: its key, how a value is parsed and checked (with the same
 * one-line messages as target arguments: {@link TargetArguments}), its default and its
 * documentation. Values are immutable ({@code Long}, {@code Boolean}, {@code String}).
 *
 * @param <T> the value's type
 */
public final class Tunable<T> {
    /** Parses and checks a value for a cache of type {@code type}; throws InvalidArgumentException. */
    @FunctionalInterface
    public interface Parser<T> {
        T parse(String type, String key, String value);
    }

    private final String key;
    private final T dflt;
    private final String range;
    private final String doc;
    private final Parser<T> parser;
    private final Function<T, String> render;

    private Tunable(String key, T dflt, String range, String doc, Parser<T> parser, Function<T, String> render) {
        this.key = key;
        this.dflt = dflt;
        this.range = range;
        this.doc = doc;
        this.parser = parser;
        this.render = render;
    }

    private static TargetArguments args(String type, String key, String value) {
        return TargetArguments.of(type, Map.of(key, value), Set.of(key));
    }

    /** A whole number in {@code [min, max]}; one beyond a long is out of range too, not "not a number". */
    public static Tunable<Long> number(String key, long dflt, long min, long max, String doc) {
        return new Tunable<>(key, dflt, min + " to " + max, doc, (type, k, v) -> {
            if (v != null && WHOLE.matcher(v.trim()).matches() && !fitsLong(v.trim())) {
                throw new InvalidArgumentException(type + ": " + k + "=" + v + " is out of range; allowed " + min + " to " + max);
            }
            return args(type, k, v).number(k, min, max);
        }, String::valueOf);
    }

    private static final java.util.regex.Pattern WHOLE = java.util.regex.Pattern.compile("[+-]?[0-9]+");
    private static final java.util.regex.Pattern SIZE = java.util.regex.Pattern.compile("[+]?[0-9]+[kKmMgGtT]?");

    private static boolean fitsLong(String s) {
        try {
            Long.parseLong(s);
            return true;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    /**
     * {@link #size}, also taking {@code off} for 0 (a size whose 0 means off, as
     * {@code readahead=off} next to {@code write_promote=off}).
     */
    public static Tunable<Long> sizeOrOff(String key, long dflt, long min, long max, String doc) {
        Tunable<Long> t = size(key, dflt, min, max, doc);
        Parser<Long> p = t.parser;
        return new Tunable<>(key, dflt, t.range + " (off: 0)", doc,
                (type, k, v) -> {
                    if (v != null && v.trim().equalsIgnoreCase("off")) {
                        return 0L;
                    }
                    try {
                        return p.parse(type, k, v);
                    } catch (dev.strata.api.InvalidArgumentException e) {
                        // "readahead=on is not a size; use bytes or …": say that off is a value too
                        if (e.getMessage() != null && e.getMessage().contains(" is not a size; ")) {
                            throw new dev.strata.api.InvalidArgumentException(e.getMessage() + ", or off");
                        }
                        throw e;
                    }
                }, t.render);
    }

    /** A size in bytes ({@code 4096}, {@code 64k}, {@code 1M}, …) in {@code [min, max]}. */
    public static Tunable<Long> size(String key, long dflt, long min, long max, String doc) {
        return new Tunable<>(key, dflt, dev.strata.cache.support.units.Iec.atLeast(min) + " to "
                + dev.strata.cache.support.units.Iec.atLeast(max), doc,
                (type, k, v) -> {
                    long x;
                    try {
                        x = TargetArguments.parseSize(k, v);
                    } catch (InvalidArgumentException e) {
                        if (v != null && SIZE.matcher(v.trim()).matches()) {
                            x = Long.MAX_VALUE; // digits and a unit, beyond a long: out of range, said below
                        } else {
                            throw new InvalidArgumentException(type + ": " + e.getMessage());
                        }
                    }
                    if (x < min || x > max) {
                        throw new InvalidArgumentException(type + ": " + k + "=" + v + " is out of range; allowed "
                                + dev.strata.cache.support.units.Iec.atLeast(min) + " to "
                                + dev.strata.cache.support.units.Iec.atLeast(max));
                    }
                    return x;
                }, String::valueOf);
    }

    /** {@code true} or {@code false} (also yes/no, on/off, 1/0). */
    public static Tunable<Boolean> bool(String key, boolean dflt, String doc) {
        return new Tunable<>(key, dflt, "true or false", doc, (type, k, v) -> args(type, k, v).bool(k, false),
                String::valueOf);
    }

    /** A service name: letters, digits, '.', '_' or '-', stored in lower case. */
    public static Tunable<String> name(String key, String dflt, String doc) {
        return new Tunable<>(key, dflt, "a name", doc, (type, k, v) -> {
            String s = v.trim();
            if (!s.matches("[A-Za-z0-9_.-]{1,64}")) {
                throw new InvalidArgumentException(type + ": " + k + "=" + v
                        + " is not a controller name; use letters, digits, '.', '_' or '-'");
            }
            return s.toLowerCase(Locale.ROOT);
        }, s -> s);
    }

    /**
     * This tunable with a further check after parsing: a value for which {@code ok} is false is
     * refused with {@code "<type>: key=value " + problem}.
     */
    public Tunable<T> check(Predicate<T> ok, String problem) {
        Parser<T> p = parser;
        return new Tunable<>(key, dflt, range, doc, (type, k, v) -> {
            T t = p.parse(type, k, v);
            if (!ok.test(t)) {
                throw new InvalidArgumentException(type + ": " + k + "=" + v + " " + problem);
            }
            return t;
        }, render);
    }

    public String key() {
        return key;
    }

    public T defaultValue() {
        return dflt;
    }

    public String range() {
        return range;
    }

    public String doc() {
        return doc;
    }

    T parse(String type, String value) {
        return parser.parse(type, key, value);
    }

    @SuppressWarnings("unchecked")
    String render(Object value) {
        return render.apply((T) value);
    }
}
