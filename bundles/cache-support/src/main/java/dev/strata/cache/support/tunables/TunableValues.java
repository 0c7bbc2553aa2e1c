package dev.strata.cache.support.tunables;

import java.util.Map;

/**
 * The part every cache's typed tunables value shares: it wraps one {@link TunableTable.Snapshot},
 * is immutable, and is swapped whole. A cache's {@code Tunables} extends it, unpacks the fields
 * its hot paths read in its constructor, and says how to make itself from a snapshot
 * ({@link #make}); setting, the map view, equality and the rendering are here once.
 *
 * @param <T> the cache's own tunables type
 */
public abstract class TunableValues<T extends TunableValues<T>> {
    protected final TunableTable.Snapshot values;

    protected TunableValues(TunableTable.Snapshot values) {
        this.values = values;
    }

    /** This cache's value for another snapshot (its constructor, with its own cross-checks). */
    protected abstract T make(TunableTable.Snapshot values);

    /** A copy with {@code key} set to {@code value}; throws InvalidArgumentException (one line) on a bad key or value. */
    public final T with(String key, String value) {
        return make(values.with(key, value));
    }

    /** A copy with every tunable key of {@code args} set (other keys ignored); checked as a whole. */
    public final T withAll(Map<String, String> args) {
        return make(values.withAll(args));
    }

    /** Every tunable as key → value, in the table's order (the cache's status keys). */
    public final Map<String, String> asMap() {
        return values.asMap();
    }

    @Override
    public final boolean equals(Object o) {
        return o != null && o.getClass() == getClass() && ((TunableValues<?>) o).values.equals(values);
    }

    @Override
    public final int hashCode() {
        return values.hashCode();
    }

    @Override
    public final String toString() {
        return values.toString();
    }
}
