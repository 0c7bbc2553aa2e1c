package dev.strata.cache.support.stats;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * A cache's event counters, each named by the status key it is shown under, rendered in the order
 * they were created. Counting is lock-free ({@link LongAdder}): counters sit on every request's
 * path.
 */
public final class Counters {
    private final List<Counter> all = new ArrayList<>();

    /** One counter. */
    public static final class Counter {
        private final String key;
        private final LongAdder adder = new LongAdder();

        private Counter(String key) {
            this.key = key;
        }

        public void increment() {
            adder.increment();
        }

        public void add(long n) {
            adder.add(n);
        }

        public long sum() {
            return adder.sum();
        }

        public String key() {
            return key;
        }
    }

    /** A new counter shown as {@code key}; create them all before the cache starts (not thread-safe). */
    public Counter counter(String key) {
        for (Counter c : all) {
            if (c.key.equals(key)) {
                throw new IllegalArgumentException("counter " + key + " exists");
            }
        }
        Counter c = new Counter(key);
        all.add(c);
        return c;
    }

    /** Puts every counter into {@code status}, in creation order. */
    public void render(Map<String, String> status) {
        for (Counter c : all) {
            status.put(c.key, Long.toString(c.sum()));
        }
    }
}
