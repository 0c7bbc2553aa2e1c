package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** A target holding dirty blocks is not removed, or reloaded into one that cannot adopt them, unless forced. */
class DirtyGuardTest extends ManagerFixture {
    static final String REFUSAL = "wb0 holds 8,192 dirty blocks its backing device does not have; "
            + "run cache:detach wb0 first, or add --force to strand them on cache0";

    @Test
    void removingADirtyCacheIsRefused() throws Exception {
        cacheStack();
        m.message("wb0", "dirty", "8192", false);
        assertEquals(REFUSAL, refused(() -> m.remove("wb0"), "dirty"));
        assertEquals(REFUSAL, refused(() -> m.remove("wb0", false), "dirty"));
        assertTrue(m.info("wb0").isPresent());
    }

    @Test
    void aForcedRemovalSaysWhatItStranded() throws Exception {
        cacheStack();
        m.message("wb0", "dirty", "8192", false);
        assertEquals("removing wb0 stranded 8,192 dirty blocks on cache0 (its backing device does not have them)",
                m.removeReporting("wb0", true));
        assertFalse(m.info("wb0").isPresent());
        assertFalse(store.snapshot().values().stream().anyMatch(d -> d.name().equals("wb0")));
    }

    @Test
    void oneDirtyBlockIsSingular() throws Exception {
        cacheStack();
        m.message("wb0", "dirty", "1", false);
        assertEquals("wb0 holds 1 dirty block its backing device does not have; "
                + "run cache:detach wb0 first, or add --force to strand them on cache0", refused(() -> m.remove("wb0"), "dirty"));
    }

    @Test
    void aCleanCacheIsRemovedAsBefore() throws Exception {
        cacheStack();
        m.remove("wb0");
        assertFalse(m.info("wb0").isPresent());
    }

    @Test
    void aRemovedCleanCacheDropsItsCopiesSoNoLaterCacheServesThem() throws Exception {
        cacheStack();
        m.remove("wb0");
        assertTrue(caches.messages.contains("invalidate=all"), caches.messages.toString());
        // and before the target is closed: afterwards the copies would stay valid on the device
        assertEquals(0, caches.closesAtInvalidate);
        assertEquals(1, caches.closes.get());
    }

    @Test
    void aForcedRemovalKeepsTheStrandedDirtyBlocks() throws Exception {
        cacheStack();
        m.message("wb0", "dirty", "8192", false);
        m.removeReporting("wb0", true);
        assertFalse(caches.messages.contains("invalidate=all"), "the stranded blocks were dropped: " + caches.messages);
    }

    @Test
    void reloadingADirtyCacheIntoATargetThatCannotAdoptItIsRefused() throws Exception {
        cacheStack();
        m.message("wb0", "dirty", "8192", false);
        assertEquals(REFUSAL, refused(() -> m.reload("wb0", "linear", args("device", "disk0")), "dirty"));
        assertEquals(REFUSAL, refused(() -> m.reload("wb0", "linear", args("device", "disk0"), false), "dirty"));
        assertEquals("tcache", m.info("wb0").orElseThrow().type());
        // a target that adopts the state is reloaded as before
        m.reload("wb0", "tcache", args("backing", "disk0", "cache", "cache0", "threshold", "20"));
        assertEquals("20", m.status("wb0").get("threshold"));
    }

    @Test
    void aForcedReloadSaysWhatItStranded() throws Exception {
        cacheStack();
        m.message("wb0", "dirty", "8192", false);
        assertEquals("reloading wb0 stranded 8,192 dirty blocks on cache0 (its backing device does not have them)",
                m.reloadReporting("wb0", "linear", args("device", "disk0"), true));
        assertEquals("linear", m.info("wb0").orElseThrow().type());
    }

    @Test
    void aDeletedConfigurationDoesNotDropADirtyCache() throws Exception {
        cacheStack();
        m.message("wb0", "dirty", "8192", false);
        String key = m.devicesForTest().get("wb0").storeKey;
        store.removeKey(key);
        m.definitionDeleted(key).get();
        assertTrue(m.info("wb0").isPresent(), "kept: it still holds dirty blocks");
    }
}
