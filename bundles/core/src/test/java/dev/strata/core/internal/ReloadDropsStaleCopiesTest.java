package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * A clean cache reloaded into a target that does not take it over drops its copies before it is
 * closed, as a removed one does: a writeboost reloaded into {@code linear}, its backing device
 * written, and reloaded back into writeboost over the same devices served the old copies
 * (black-box, qemu-io pattern check). A reload that keeps the cache keeps them.
 */
class ReloadDropsStaleCopiesTest extends ManagerFixture {

    @Test
    void aCleanCacheReloadedIntoLinearDropsItsCopiesBeforeItCloses() throws Exception {
        cacheStack(); // wb0 = tcache over disk0 and cache0; linear over disk0 shares a lower: closed first
        m.reload("wb0", "linear", args("device", "disk0"));
        assertEquals("linear", m.info("wb0").orElseThrow().type());
        assertTrue(caches.messages.contains("invalidate=all"), caches.messages.toString());
        assertEquals(0, caches.closesAtInvalidate, "after the close the copies would stay valid on the cache device");
        assertEquals(1, caches.closes.get());
    }

    @Test
    void aCleanCacheReloadedOntoOtherDevicesIsResumedAndDropsItsCopies() throws Exception {
        cacheStack();
        disk("disk1");
        CacheTestTarget old = wb0();
        m.reload("wb0", "linear", args("device", "disk1")); // no lower in common: the old one is suspended meanwhile
        assertEquals("linear", m.info("wb0").orElseThrow().type());
        assertTrue(caches.messages.contains("invalidate=all"), caches.messages.toString());
        assertEquals(0, caches.closesAtInvalidate);
        assertEquals(old.suspends.get(), old.resumes.get(), "its daemons, which write the invalidation, run again first");
    }

    @Test
    void aReloadTheCacheTakesOverKeepsItsCopies() throws Exception {
        cacheStack();
        m.reload("wb0", "tcache", args("backing", "disk0", "cache", "cache0", "threshold", "20"));
        assertFalse(caches.messages.contains("invalidate=all"), caches.messages.toString());
    }

    @Test
    void theSamePolicyOverTheSameCacheDeviceKeepsItsCopies() throws Exception {
        cacheStack();
        disk("disk1");
        // not adopted (another backing device), but the new cache opens the same cache device and
        // judges its copies itself (a real policy refuses a cache device of another backing device)
        m.reload("wb0", "tcache", args("backing", "disk1", "cache", "cache0"));
        assertFalse(caches.messages.contains("invalidate=all"), caches.messages.toString());
    }

    @Test
    void aForcedReloadKeepsTheStrandedDirtyBlocks() throws Exception {
        cacheStack();
        m.message("wb0", "dirty", "8192", false);
        m.reloadReporting("wb0", "linear", args("device", "disk0"), true);
        assertFalse(caches.messages.contains("invalidate=all"), "the stranded blocks were dropped: " + caches.messages);
    }
}
