package dev.strata.tools.internal;

import dev.strata.api.TargetFactory;
import dev.strata.cache.readcache.internal.ReadcacheFactory;
import dev.strata.cache.writeboost.internal.WriteboostFactory;
import dev.strata.cache.writecache.internal.WritecacheFactory;
import dev.strata.tools.internal.format.CacheFormat;

/** The real target of each format, for writeback (the cache opened as the service opens it). */
final class Targets {
    private Targets() {
    }

    static TargetFactory factory(CacheFormat f) {
        return switch (f.name()) {
            case "writeboost" -> new WriteboostFactory();
            case "writecache" -> new WritecacheFactory();
            default -> new ReadcacheFactory();
        };
    }

    /** The argument naming the device that holds the authoritative data. */
    static String backingArgument(CacheFormat f) {
        return f.name().equals("readcache") ? "origin" : "backing";
    }
}
