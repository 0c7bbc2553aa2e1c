package dev.strata.api;

import java.util.Locale;

/** How a {@link CacheTarget} treats writes. */
public enum CacheMode {
    /** Writes land in the cache and are written back later: the cache holds dirty data. */
    WRITEBACK,
    /** Writes go to the cache and the backing device before they complete: never dirty. */
    WRITETHROUGH,
    /** Writes go to the backing device only, overlapping cached copies are dropped: never dirty. */
    WRITEAROUND,
    /** The cache is bypassed for reads and writes (cached copies of written blocks are dropped). */
    PASSTHROUGH;

    /** Whether a cache in this mode may hold data its backing device does not. */
    public boolean holdsDirtyData() {
        return this == WRITEBACK;
    }

    /** Lower case, as typed in commands. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * Parses a mode as typed by a user.
     *
     * @throws InvalidArgumentException naming the modes there are
     */
    public static CacheMode parse(String s) {
        for (CacheMode m : values()) {
            if (m.label().equals(s == null ? "" : s.trim().toLowerCase(Locale.ROOT))) {
                return m;
            }
        }
        throw new InvalidArgumentException("unknown cache mode '" + s
                + "'; use writeback, writethrough, writearound or passthrough");
    }
}
