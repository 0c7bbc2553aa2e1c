package dev.strata.daemons.internal;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A controller's tunable values for one cache, immutable: a change builds a new value that the
 * session swaps in whole (DESIGN.md §14), so a decision never sees half of an update.
 */
public final class Settings {
    private final List<Tunable> tunables;
    private final long[] values;

    private Settings(List<Tunable> tunables, long[] values) {
        this.tunables = tunables;
        this.values = values;
    }

    /** The defaults, overridden by the known keys of {@code given}; unknown keys are ignored. */
    public static Settings of(List<Tunable> tunables, Map<String, String> given) {
        long[] v = new long[tunables.size()];
        for (int i = 0; i < v.length; i++) {
            Tunable t = tunables.get(i);
            String s = given == null ? null : given.get(t.key());
            v[i] = s == null ? t.defaultValue() : t.parse(s);
        }
        return new Settings(List.copyOf(tunables), v);
    }

    /**
     * This value with {@code key} changed.
     *
     * @return null if {@code key} is not one of these tunables
     * @throws dev.strata.api.InvalidArgumentException a bad value (nothing changed)
     */
    public Settings with(String key, String value) {
        int i = indexOf(key);
        if (i < 0) {
            return null;
        }
        long[] v = Arrays.copyOf(values, values.length);
        v[i] = tunables.get(i).parse(value);
        return new Settings(tunables, v);
    }

    public long get(Tunable t) {
        int i = indexOf(t.key());
        if (i < 0) {
            throw new IllegalArgumentException("not a tunable of this controller: " + t.key());
        }
        return values[i];
    }

    public boolean flag(Tunable t) {
        return get(t) != 0;
    }

    /** Every tunable and its value, in declaration order, for status lines. */
    public Map<String, String> asMap() {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < values.length; i++) {
            Tunable t = tunables.get(i);
            m.put(t.key(), t.isFlag() ? Boolean.toString(values[i] != 0) : Long.toString(values[i]));
        }
        return m;
    }

    private int indexOf(String key) {
        for (int i = 0; i < tunables.size(); i++) {
            if (tunables.get(i).key().equals(key)) {
                return i;
            }
        }
        return -1;
    }
}
