package dev.strata.cache.readcache.internal.io;

import dev.strata.api.ReadCachePolicy;

/** The policies installed now, by name (the factory's dynamic references; a map in tests). */
public interface PolicySource {
    /** The policy registered under {@code name}, or null. */
    ReadCachePolicy find(String name);

    /** The installed names, comma-separated, for error messages ("none" if there are none). */
    String installed();
}
