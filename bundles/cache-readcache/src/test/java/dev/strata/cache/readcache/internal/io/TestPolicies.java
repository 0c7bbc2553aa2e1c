package dev.strata.cache.readcache.internal.io;

import dev.strata.api.ReadCachePolicy;
import dev.strata.readcache.policies.internal.LruPolicy;
import dev.strata.readcache.policies.internal.NHitPolicy;
import dev.strata.readcache.policies.internal.WTinyLfuPolicy;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/** The real policies of bundles/readcache-policies as a {@link PolicySource}; removable, as a bundle update would. */
public final class TestPolicies implements PolicySource {
    public final Map<String, ReadCachePolicy> map = new ConcurrentHashMap<>();

    public static TestPolicies all() {
        TestPolicies t = new TestPolicies();
        t.map.put("lru", new LruPolicy());
        t.map.put("nhit", new NHitPolicy());
        t.map.put("wtinylfu", new WTinyLfuPolicy());
        return t;
    }

    @Override
    public ReadCachePolicy find(String name) {
        return name == null ? null : map.get(name);
    }

    @Override
    public String installed() {
        return map.isEmpty() ? "none" : String.join(", ", new TreeSet<>(map.keySet()));
    }
}
