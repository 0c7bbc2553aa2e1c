package dev.strata.cache.support.tunables;

import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;

/**
 * Where a cache keeps its current tunables: one immutable value, replaced as a whole and
 * atomically (two concurrent {@code message}s never lose one another's change), read without a
 * lock.
 *
 * @param <T> the immutable tunables value (a {@link TunableTable.Snapshot} or a typed view of one)
 */
public final class TunableCell<T> {
    private final AtomicReference<T> ref;

    public TunableCell(T initial) {
        this.ref = new AtomicReference<>(initial);
    }

    public T get() {
        return ref.get();
    }

    /** Applies {@code change} (pure; it may throw to refuse a value, changing nothing); returns the new value. */
    public T update(UnaryOperator<T> change) {
        return ref.updateAndGet(change);
    }
}
