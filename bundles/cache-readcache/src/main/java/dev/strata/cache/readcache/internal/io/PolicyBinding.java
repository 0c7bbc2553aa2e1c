package dev.strata.cache.readcache.internal.io;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.ReadCachePolicy;
import java.io.IOException;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Which policy one cache wants (by name) and which service instance it is bound to now. The
 * factory tells every live cache when a policy service comes or goes: a cache whose service goes
 * away closes its instance (promotion pauses; hits, writes and invalidations go on, and nothing
 * of the old bundle is kept), and binds again when a service of the wanted name appears, rebuilt
 * over the current contents — every cached block is kept.
 */
public final class PolicyBinding {
    private final PolicySource source;
    private final Consumer<ReadCache> onRelease;
    private volatile String wanted;
    private volatile ReadCachePolicy bound;

    PolicyBinding(PolicySource source, String wanted, Consumer<ReadCache> onRelease) {
        this.source = source;
        this.wanted = wanted;
        this.onRelease = onRelease;
    }

    public String wanted() {
        return wanted;
    }

    /** {@code message policy NAME}: one line listing the installed policies if there is none by that name. */
    synchronized void switchTo(ReadCache cache, String name, Map<String, String> tunables) throws IOException {
        ReadCachePolicy p = source.find(name);
        if (p == null) {
            throw new InvalidArgumentException("readcache: no policy '" + name + "' is installed; installed: " + source.installed());
        }
        cache.bind(p, tunables);
        bound = p;
        wanted = name;
    }

    /** A policy service appeared (or is there at open). */
    public synchronized void arrived(ReadCache cache, String name, ReadCachePolicy p, Map<String, String> tunables) throws IOException {
        if (name.equals(wanted) && bound == null) {
            cache.bind(p, tunables);
            bound = p;
        }
    }

    /** A policy service is going away: unbind it if it is ours. */
    public synchronized void gone(ReadCache cache, ReadCachePolicy p) throws IOException {
        if (bound == p) {
            cache.bind(null, Map.of());
            bound = null;
        }
    }

    synchronized void release(ReadCache cache) throws IOException {
        try {
            cache.bind(null, Map.of());
            bound = null;
        } finally {
            onRelease.accept(cache);
        }
    }
}
