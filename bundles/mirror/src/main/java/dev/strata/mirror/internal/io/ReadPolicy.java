package dev.strata.mirror.internal.io;

import java.util.Locale;

/** Which in-sync leg serves a read. */
public enum ReadPolicy {
    ROUND_ROBIN, LEAST_LOADED;

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The policy labelled {@code s}, or null. */
    public static ReadPolicy of(String s) {
        for (ReadPolicy p : values()) {
            if (p.label().equals(s)) {
                return p;
            }
        }
        return null;
    }
}
