package dev.strata.cache.readcache.internal;

import dev.strata.api.ReadCachePolicy;
import java.util.Map;

/** A readcache factory with one policy bound, as Declarative Services would bind it (tests of the tools only). */
public final class PolicyFactories {
    private PolicyFactories() {
    }

    public static ReadcacheFactory with(String name, ReadCachePolicy policy) {
        ReadcacheFactory f = new ReadcacheFactory();
        f.addPolicy(policy, Map.of(ReadCachePolicy.NAME, name));
        return f;
    }
}
