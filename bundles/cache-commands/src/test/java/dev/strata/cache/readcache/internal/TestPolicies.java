package dev.strata.cache.readcache.internal;

import java.util.Map;

import dev.strata.api.ReadCachePolicy;
import dev.strata.readcache.policies.internal.LruPolicy;
import dev.strata.readcache.policies.internal.NHitPolicy;
import dev.strata.readcache.policies.internal.WTinyLfuPolicy;

/** A readcache factory with the real policies bound, as Declarative Services would bind them (tests only). */
public final class TestPolicies {
    private TestPolicies() {
    }

    public static ReadcacheFactory factory() {
        ReadcacheFactory f = new ReadcacheFactory();
        f.addPolicy(new WTinyLfuPolicy(), Map.of(ReadCachePolicy.NAME, "wtinylfu"));
        f.addPolicy(new LruPolicy(), Map.of(ReadCachePolicy.NAME, "lru"));
        f.addPolicy(new NHitPolicy(), Map.of(ReadCachePolicy.NAME, "nhit"));
        return f;
    }
}
