package dev.strata.cache.readcache.internal.io;

import dev.strata.cache.support.tunables.Tunable;
import dev.strata.cache.support.tunables.TunableTable;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The readcache's runtime tunables as one immutable value, swapped atomically: its own, a
 * snapshot of cache-support's {@link TunableTable} like the other caches' ({@code
 * sequential_cutoff}), and the policy's (passed to the policy without a prefix, kept across
 * policy switches so each policy keeps its settings).
 */
public record Tunables(TunableTable.Snapshot own, Map<String, String> policy) {
    static final String SEQUENTIAL_CUTOFF = "sequential_cutoff";
    static final Tunable<Long> CUTOFF = Tunable.size(SEQUENTIAL_CUTOFF, 4L << 20, 0, 1L << 40,
            "reads of a sequential stream past this many bytes bypass the cache (0: never)");
    static final TunableTable TABLE = new TunableTable("readcache", List.of(CUTOFF));
    public static final Tunables DEFAULTS = new Tunables(TABLE.defaults(), Map.of());

    public Tunables {
        policy = Map.copyOf(policy);
    }

    /** The defaults with {@code sequential_cutoff} set to {@code cutoff} bytes. */
    public static Tunables of(long cutoff, Map<String, String> policy) {
        return new Tunables(TABLE.defaults().with(SEQUENTIAL_CUTOFF, Long.toString(cutoff)), policy);
    }

    /** Parses a {@code sequential_cutoff} value; a bad one is one clear line (InvalidArgumentException). */
    public static long parseCutoff(String v) {
        return TABLE.defaults().with(SEQUENTIAL_CUTOFF, v).get(CUTOFF);
    }

    public long sequentialCutoff() {
        return own.get(CUTOFF);
    }

    /** A copy with one of the readcache's own tunables set (checked). */
    Tunables withOwn(String key, String value) {
        return new Tunables(own.with(key, value), policy);
    }

    Tunables withPolicy(String key, String value) {
        Map<String, String> m = new LinkedHashMap<>(policy);
        m.put(key, value);
        return new Tunables(own, m);
    }
}
