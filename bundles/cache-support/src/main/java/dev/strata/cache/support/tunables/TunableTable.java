package dev.strata.cache.support.tunables;

import dev.strata.api.TargetArguments;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A cache policy's tunables: the table of {@link Tunable}s (key → parser, range, default, doc)
 * and immutable {@link Snapshot}s of their values. A cache keeps one snapshot in a volatile field
 * and replaces it as a whole, so a reader always sees one consistent set; {@link #help()} is the
 * one place the table is rendered for users.
 */
public final class TunableTable {
    private final String type;
    private final List<Tunable<?>> tunables;
    private final Map<String, Integer> index = new LinkedHashMap<>();
    private final Set<String> keys;
    private final Snapshot defaults;

    public TunableTable(String type, List<Tunable<?>> tunables) {
        this.type = type;
        this.tunables = List.copyOf(tunables);
        Object[] values = new Object[this.tunables.size()];
        for (int i = 0; i < this.tunables.size(); i++) {
            Tunable<?> t = this.tunables.get(i);
            if (index.put(t.key(), i) != null) {
                throw new IllegalArgumentException("tunable " + t.key() + " is listed twice");
            }
            values[i] = t.defaultValue();
        }
        this.keys = Collections.unmodifiableSet(new LinkedHashSet<>(index.keySet()));
        this.defaults = new Snapshot(values);
    }

    /** The keys, in table order. */
    public Set<String> keys() {
        return keys;
    }

    public Snapshot defaults() {
        return defaults;
    }

    /** One line per tunable: {@code key=default (range): doc}. */
    public String help() {
        StringBuilder b = new StringBuilder();
        for (Tunable<?> t : tunables) {
            b.append(t.key()).append('=').append(t.render(t.defaultValue())).append(" (").append(t.range())
                    .append("): ").append(t.doc()).append('\n');
        }
        return b.toString();
    }

    /** An immutable set of values, one per tunable of the table. */
    public final class Snapshot {
        private final Object[] values;

        private Snapshot(Object[] values) {
            this.values = values;
        }

        /** The value of {@code t} (a tunable of this table). */
        @SuppressWarnings("unchecked")
        public <T> T get(Tunable<T> t) {
            Integer i = index.get(t.key());
            if (i == null || tunables.get(i) != t) {
                throw new IllegalArgumentException(t.key() + " is not a tunable of " + type);
            }
            return (T) values[i];
        }

        /**
         * A copy with {@code key} set to {@code value}.
         *
         * @throws dev.strata.api.InvalidArgumentException an unknown key (listing the known ones)
         *         or a bad value (with the allowed range); one line
         */
        public Snapshot with(String key, String value) {
            TargetArguments.of(type, Map.of(key, value), keys); // the unknown-key message
            int i = index.get(key);
            Object[] v = Arrays.copyOf(values, values.length);
            v[i] = tunables.get(i).parse(type, value);
            return new Snapshot(v);
        }

        /** A copy with every tunable present in {@code args} set (other keys are ignored). */
        public Snapshot withAll(Map<String, String> args) {
            Snapshot s = this;
            for (Map.Entry<String, String> e : args.entrySet()) {
                if (index.containsKey(e.getKey())) {
                    s = s.with(e.getKey(), e.getValue());
                }
            }
            return s;
        }

        /** The values as key/values, in table order. */
        public Map<String, String> asMap() {
            Map<String, String> m = new LinkedHashMap<>();
            for (int i = 0; i < values.length; i++) {
                m.put(tunables.get(i).key(), tunables.get(i).render(values[i]));
            }
            return m;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Snapshot s && s.table() == TunableTable.this && Arrays.equals(values, s.values);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(values);
        }

        private TunableTable table() {
            return TunableTable.this;
        }

        @Override
        public String toString() {
            return type + asMap();
        }
    }
}
