package dev.strata.core.internal;

import java.io.IOException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.strata.api.CacheTarget;
import dev.strata.api.Target;

/**
 * A clean cache leaving service drops every copy it holds on its cache device
 * ({@code invalidate=all}, as {@code cache:detach} does), before it is closed. Once it is gone
 * the backing device can be written without it, and a cache built again over the same two
 * devices would otherwise recover the old copies and serve them: a readcache removed (or a
 * writeboost reloaded into {@code linear}), its backing device written, the cache built again
 * read the old data back. Callers skip this when the cache strands dirty blocks on purpose
 * ({@code --force}): building the cache again over the same devices finds them again.
 */
final class StaleCopies {
    private static final Logger LOG = LoggerFactory.getLogger(StaleCopies.class);

    private StaleCopies() {
    }

    /**
     * Drops {@code old}'s copies if it is a cache; {@code resumeFirst}: it was suspended (a
     * suspended cache's daemons, which write the invalidation, are stopped). A failure is a
     * warning that says what to do: the caller goes on closing the target either way.
     */
    static void drop(MappedDevice d, Target old, boolean resumeFirst) {
        if (!(old instanceof CacheTarget c)) {
            return;
        }
        try {
            if (resumeFirst) {
                old.resume();
            }
            c.message(CacheTarget.Actions.INVALIDATE, CacheTarget.Actions.ALL);
        } catch (IOException | RuntimeException e) {
            LOG.warn("device {}: its old cache's copies could not be dropped ({}); build a cache over its cache device "
                    + "again only with format=true, or it may serve copies older than the backing device", d.name,
                    e.getMessage());
        }
    }
}
