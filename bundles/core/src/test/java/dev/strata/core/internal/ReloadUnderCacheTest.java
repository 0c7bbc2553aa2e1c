package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;

/**
 * Reloading a device that lies under a cache (directly, or through other devices): the black-box
 * trial reloaded a writecache's backing device (a linear window) and the file under it with 1,024
 * dirty blocks in the cache; the writeback then put them at another offset of another file, reads
 * of uncached blocks came from that file, and the cache kept its 1 GiB over a smaller device. Now a
 * dirty cache above refuses (unless forced), a clean one drops its copies inside the pause, and a
 * reload never makes a device smaller than what a device above maps of it.
 */
class ReloadUnderCacheTest extends ManagerFixture {

    /** disk0 ← mid (linear, all of it) ← wb0 (tcache backing=mid cache=cache0). */
    private void stackThroughLinear() throws Exception {
        disk("disk0");
        disk("cache0");
        m.create("mid", "linear", args("device", "disk0"));
        m.create("wb0", "tcache", args("backing", "mid", "cache", "cache0"));
    }

    private java.util.Map<String, String> otherFile() {
        return args("path", dir.resolve("other.img").toString(), "size", "1M");
    }

    @Test
    void aDirtyCacheAboveRefusesTheReloadOfItsBackingDevice() throws Exception {
        stackThroughLinear();
        m.message("wb0", "dirty", "1024", false);
        assertEquals("mid is under wb0, which holds 1,024 dirty blocks that belong at mid's current blocks; run "
                + "cache:writeback wb0 (or cache:detach wb0) first, or add --force",
                refused(() -> m.reload("mid", "linear", args("device", "disk0", "offset", "4096", "length", "512K")),
                        "dirty"));
        assertEquals("linear", m.info("mid").orElseThrow().type());
        assertEquals("0", m.status("mid").get("offset"));
    }

    @Test
    void aDirtyCacheAboveRefusesTheReloadOfADeviceFurtherDown() throws Exception {
        stackThroughLinear();
        m.message("wb0", "dirty", "1024", false);
        int opened = fileOpens();
        assertEquals("disk0 is under wb0, which holds 1,024 dirty blocks that belong at disk0's current blocks; run "
                + "cache:writeback wb0 (or cache:detach wb0) first, or add --force",
                refused(() -> m.reload("disk0", "tfile", otherFile()), "dirty"));
        assertEquals(opened, fileOpens(), "nothing was even paused: the old file was not closed and reopened");
        assertTrue(m.info("disk0").orElseThrow().arguments().get("path").endsWith("disk0.img"));
        assertFalse(caches.messages.contains("invalidate=all"), caches.messages.toString());
    }

    @Test
    void forceReloadsUnderADirtyCacheAndSaysSo() throws Exception {
        stackThroughLinear();
        m.message("wb0", "dirty", "1024", false);
        String note = m.reloadReporting("disk0", "tfile", otherFile(), true);
        assertEquals("reloading disk0 under wb0 left its 1,024 dirty blocks in wb0: they will be written back to "
                + "disk0's new blocks", note);
        assertTrue(m.info("disk0").orElseThrow().arguments().get("path").endsWith("other.img"));
        assertEquals("1024", m.status("wb0").get("dirty_blocks"), "the dirty blocks stay");
        assertFalse(caches.messages.contains("invalidate=all"), caches.messages.toString());
        assertTrue(m.devicesForTest().get("wb0").gate.isOpen(), "wb0 runs again");
    }

    @Test
    void aCleanCacheAboveDropsItsCopiesWhileItAndTheDeviceArePaused() throws Exception {
        stackThroughLinear();
        List<String> seen = new CopyOnWriteArrayList<>();
        int before = fileOpens();
        caches.onMessage = msg -> {
            if (msg.equals("invalidate=all")) {
                seen.add("wb0 open=" + m.devicesForTest().get("wb0").gate.isOpen() + ", disk0 open="
                        + m.devicesForTest().get("disk0").gate.isOpen() + ", new file opened="
                        + (fileOpens() > before));
            }
        };
        m.reload("disk0", "tfile", otherFile());
        assertEquals(List.of("wb0 open=false, disk0 open=false, new file opened=true"), seen,
                "dropped once, after the new target was built and before any gate opened");
        assertTrue(m.devicesForTest().get("wb0").gate.isOpen());
        assertTrue(m.devicesForTest().get("disk0").gate.isOpen());
        assertTrue(m.info("disk0").orElseThrow().arguments().get("path").endsWith("other.img"));
    }

    @Test
    void aUserSuspendedCleanCacheAboveDropsItsCopiesAndStaysSuspended() throws Exception {
        stackThroughLinear();
        m.suspend("wb0");
        CacheTestTarget t = wb0();
        m.reload("disk0", "tfile", otherFile());
        assertTrue(caches.messages.contains("invalidate=all"), caches.messages.toString());
        assertEquals(t.suspends.get(), t.resumes.get() + 1, "resumed for the invalidation, suspended again");
        assertFalse(m.devicesForTest().get("wb0").gate.isOpen(), "still suspended, as the user left it");
    }

    @Test
    void aReloadThatKeepsTheBlocksWhereTheyAreConcernsNoCache() throws Exception {
        disk("disk0");
        disk("cache0");
        m.create("mid", "linear", args("device", "disk0", "length", "512K"));
        m.create("wb0", "tcache", args("backing", "mid", "cache", "cache0"));
        m.message("wb0", "dirty", "1024", false);
        m.reload("mid", "linear", args("device", "disk0")); // grown in place: the same blocks at the same offsets
        assertEquals(1L << 20, m.info("mid").orElseThrow().size());
        assertFalse(caches.messages.contains("invalidate=all"), caches.messages.toString());
    }

    @Test
    void aMiddleCacheDetachedIntoLinearOverItsBackingDeviceUnderADirtyCacheIsAllowed() throws Exception {
        disk("disk0");
        disk("cache0");
        disk("cache1");
        m.create("midc", "tcache", args("backing", "disk0", "cache", "cache1"));
        m.create("wb0", "tcache", args("backing", "midc", "cache", "cache0"));
        m.message("wb0", "dirty", "1024", false);
        m.reload("midc", "linear", args("device", "disk0")); // what cache:detach midc does once midc is clean
        assertEquals("linear", m.info("midc").orElseThrow().type());
        assertEquals("1024", m.status("wb0").get("dirty_blocks"));
    }

    @Test
    void aShrinkUnderALinearWindowIsRefusedNamingItAndBothSizes() throws Exception {
        disk("disk0");
        m.create("vol", "linear", args("device", "disk0", "offset", "256K", "length", "512K"));
        assertEquals("disk0 would be 512.0 KiB (524,288 bytes), smaller than the 768.0 KiB (786,432 bytes) that vol "
                + "(linear device) maps of it; vol's size was fixed when it was built: give disk0 at least 786,432 bytes, "
                + "or shrink or remove vol first",
                refused(() -> m.reload("disk0", "tfile", args("path", dir.resolve("disk0.img").toString(), "size",
                        "512K")), "smaller"));
        assertEquals(1L << 20, m.info("disk0").orElseThrow().size());
        m.reload("disk0", "tfile", args("path", dir.resolve("disk0.img").toString(), "size", "768K")); // still fits
        assertEquals(768L << 10, m.info("disk0").orElseThrow().size());
    }

    @Test
    void aShrinkUnderACacheIsRefusedAndItsCopiesAreKept() throws Exception {
        stackThroughLinear();
        assertEquals("mid would be 1023.5 KiB (1,048,064 bytes), smaller than the 1.0 MiB (1,048,576 bytes) that wb0 "
                + "(tcache backing device) maps of it; wb0's size was fixed when it was built: give mid at least "
                + "1,048,576 bytes, or shrink or remove wb0 first",
                refused(() -> m.reload("mid", "linear", args("device", "disk0", "length", "1048064")), "smaller"));
        assertFalse(caches.messages.contains("invalidate=all"), "a refused reload drops nothing: " + caches.messages);
        assertEquals(1L << 20, m.info("mid").orElseThrow().size());
        assertEquals(1L << 20, m.info("wb0").orElseThrow().size());
        assertTrue(m.devicesForTest().get("wb0").gate.isOpen());
    }

    private TestTargets.FileFactory files;

    private int fileOpens() {
        if (files == null) {
            files = (TestTargets.FileFactory) m.devicesForTest().get("disk0").factory.factory();
        }
        return files.opened.get();
    }
}
