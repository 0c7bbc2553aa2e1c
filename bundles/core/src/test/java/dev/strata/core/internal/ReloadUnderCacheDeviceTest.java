package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import dev.strata.api.DeviceState;

/**
 * Reloading a device under a cache's <em>cache device</em>: the trial reloaded a writecache's cache
 * device (another file, a memory device) with 1 MiB dirty; the cache then read zeros for its dirty
 * blocks and wrote them back over the backing device. Now it is refused while the cache is active,
 * dirty or clean (its index points at the old blocks), unless forced; and a cache device waiting
 * for its target (nothing to count its dirty blocks) refuses a reload that does not adopt it, and
 * a remove, unless forced.
 */
class ReloadUnderCacheDeviceTest extends ManagerFixture {

    /** disk0 (backing), cache0 (file) ← fast (linear, all of it) ← wb0 (tcache backing=disk0 cache=fast). */
    private void stackOverLinearCache() throws Exception {
        disk("disk0");
        disk("cache0");
        m.create("fast", "linear", args("device", "cache0"));
        m.create("wb0", "tcache", args("backing", "disk0", "cache", "fast"));
    }

    private java.util.Map<String, String> file(String name, String size) {
        return args("path", dir.resolve(name).toString(), "size", size);
    }

    @Test
    void aDirtyCacheRefusesTheReloadOfItsCacheDevice() throws Exception {
        cacheStack();
        m.message("wb0", "dirty", "256", false);
        assertEquals("cache0 is wb0's cache device: wb0's index (256 dirty blocks) points at cache0's current blocks, "
                + "which the reload would replace; run cache:detach wb0 first (or cache:replace wb0 cache=DEV to move it "
                + "to another device), or add --force (wb0 then drops its copies and its dirty blocks are lost)",
                refused(() -> m.reload("cache0", "tfile", file("other.img", "1M")), "cache device"));
        assertTrue(m.info("cache0").orElseThrow().arguments().get("path").endsWith("cache0.img"));
        assertEquals("256", m.status("wb0").get("dirty_blocks"));
    }

    @Test
    void aCleanCacheRefusesTooBecauseItsIndexPointsAtTheOldBlocks() throws Exception {
        cacheStack();
        assertTrue(refused(() -> m.reload("cache0", "tfile", file("other.img", "1M")), "cache device")
                .startsWith("cache0 is wb0's cache device: wb0's index (0 dirty blocks) points at cache0's current"));
        assertFalse(caches.messages.contains("invalidate=all"), caches.messages.toString());
    }

    @Test
    void aDeviceFurtherDownTheCacheDeviceRefusesNamingTheCacheDevice() throws Exception {
        stackOverLinearCache();
        assertTrue(refused(() -> m.reload("cache0", "tfile", file("other.img", "1M")), "cache device")
                .startsWith("cache0 is under fast, wb0's cache device: wb0's index"));
        assertTrue(refused(() -> m.reload("fast", "linear", args("device", "cache0", "offset", "4096", "length",
                "512K")), "cache device").startsWith("fast is wb0's cache device"));
        assertEquals("0", m.status("fast").get("offset"));
    }

    @Test
    void reloadsThatKeepTheBlocksInPlaceAreAllowed() throws Exception {
        stackOverLinearCache();
        m.message("wb0", "dirty", "256", false);
        m.reload("fast", "linear", args("device", "cache0")); // the same window
        m.reload("cache0", "tfile", file("cache0.img", "2M")); // the same file, grown
        assertEquals(2L << 20, m.info("cache0").orElseThrow().size());
        assertEquals("256", m.status("wb0").get("dirty_blocks"));
        assertFalse(caches.messages.contains("invalidate=all"), caches.messages.toString());
        m.reload("wb0", "tcache", args("backing", "disk0", "cache", "fast", "threshold", "20")); // adopted
        assertEquals("20", m.info("wb0").orElseThrow().arguments().get("threshold"));
    }

    @Test
    void forceUnderACleanCacheDropsItsCopiesAndSaysSo() throws Exception {
        cacheStack();
        String note = m.reloadReporting("cache0", "tfile", file("other.img", "1M"), true);
        assertEquals("reloading cache0 under wb0 (its cache device) dropped wb0's copies: it starts cold", note);
        assertTrue(caches.messages.contains("invalidate=all"), caches.messages.toString());
        assertTrue(m.info("cache0").orElseThrow().arguments().get("path").endsWith("other.img"));
        assertTrue(m.devicesForTest().get("wb0").gate.isOpen());
    }

    @Test
    void forceUnderADirtyCacheSaysTheDirtyBlocksAreLost() throws Exception {
        cacheStack();
        m.message("wb0", "dirty", "256", false);
        String note = m.reloadReporting("cache0", "tfile", file("other.img", "1M"), true);
        assertTrue(note.startsWith("reloading cache0 under wb0 (its cache device) lost wb0's 256 dirty blocks: they "
                + "were on cache0's old blocks and its backing device never got them"), note);
        assertTrue(caches.messages.contains("invalidate=all"), "asked to drop its copies: " + caches.messages);
    }

    @Test
    void theBackingDeviceRulesStayAsTheyWere() throws Exception {
        cacheStack();
        m.reload("disk0", "tfile", file("other.img", "1M")); // clean: allowed, copies dropped
        assertTrue(caches.messages.contains("invalidate=all"), caches.messages.toString());
    }

    /** wb0 stored, then at the next start its build fails: it waits, with no target to count dirty blocks. */
    private void waitingCache() throws Exception {
        cacheStack();
        m.stop();
        m = manager(Settings.of(60, 30));
        caches.refuse = a -> true;
        m.loadStored();
        assertEquals(DeviceState.WAITING_FOR_TARGET, m.info("wb0").orElseThrow().state());
    }

    @Test
    void aWaitingCacheRefusesAReloadThatDoesNotAdoptIt() throws Exception {
        waitingCache();
        assertEquals("wb0 is waiting for its target; its cache device may hold dirty blocks: dev:reload it with its "
                + "cache type (e.g. fix the argument) to recover them, or add --force",
                refused(() -> m.reload("wb0", "linear", args("device", "disk0")), "waiting"));
        assertEquals("tcache", m.info("wb0").orElseThrow().type());
        caches.refuse = null;
        m.reload("wb0", "tcache", args("backing", "disk0", "cache", "cache0", "threshold", "20")); // adopts it
        assertEquals(DeviceState.ACTIVE, m.info("wb0").orElseThrow().state());
    }

    @Test
    void aWaitingCacheRefusesARemoveUnlessForced() throws Exception {
        waitingCache();
        assertTrue(refused(() -> m.remove("wb0", false), "waiting").startsWith("wb0 is waiting for its target; its "
                + "cache device may hold dirty blocks"));
        assertTrue(m.info("wb0").isPresent());
        String note = m.removeReporting("wb0", true);
        assertEquals("removing wb0, which was waiting for its target, may have stranded dirty blocks on cache0 (they "
                + "were not counted)", note);
        assertFalse(m.info("wb0").isPresent());
    }

    @Test
    void aForcedReloadOfAWaitingCacheSaysWhatMayBeStranded() throws Exception {
        waitingCache();
        String note = m.reloadReporting("wb0", "linear", args("device", "disk0"), true);
        assertTrue(note.startsWith("reloading wb0, which was waiting for its target, may have stranded"), note);
        assertEquals("linear", m.info("wb0").orElseThrow().type());
    }
}
