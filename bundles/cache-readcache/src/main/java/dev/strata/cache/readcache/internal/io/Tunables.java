package dev.strata.cache.readcache.internal.io;

import dev.strata.api.TargetArguments;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The readcache's runtime tunables as one immutable value, swapped atomically: its own
 * ({@code sequential_cutoff}) and the policy's (passed to the policy without a prefix, kept across
 * policy switches so each policy keeps its settings).
 */
public record Tunables(long sequentialCutoff, Map<String, String> policy) {
    static final String SEQUENTIAL_CUTOFF = "sequential_cutoff";
    static final long MAX_CUTOFF = 1L << 40;
    public static final Tunables DEFAULTS = new Tunables(4L << 20, Map.of());

    public Tunables {
        policy = Map.copyOf(policy);
    }

    public static long parseCutoff(String v) {
        long c = TargetArguments.parseSize(SEQUENTIAL_CUTOFF, v);
        if (c < 0 || c > MAX_CUTOFF) {
            throw new dev.strata.api.InvalidArgumentException("readcache: sequential_cutoff " + v
                    + " is out of range; use 0 (off) to 1T");
        }
        return c;
    }

    Tunables withCutoff(long c) {
        return new Tunables(c, policy);
    }

    Tunables withPolicy(String key, String value) {
        Map<String, String> m = new LinkedHashMap<>(policy);
        m.put(key, value);
        return new Tunables(sequentialCutoff, m);
    }
}
