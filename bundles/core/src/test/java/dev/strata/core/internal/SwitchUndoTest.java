package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Map;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceState;
import dev.strata.api.InvalidArgumentException;

/**
 * An in-place switch whose new target does not format and whose build fails on what it finds on
 * the cache device (what no argument check can see) is undone: the old target reopened over its
 * devices, the stored definition the old one (also after a restart), the data as it was, one line.
 * A formatting switch whose build fails still waits for the new target, as before.
 */
class SwitchUndoTest extends ManagerFixture {
    private ArgumentCheckTest.StrictFactory strict;

    @BeforeEach
    void strictType() {
        strict = new ArgumentCheckTest.StrictFactory(caches);
        m.addFactory(TestTargets.entry(strict, "tstrict"));
    }

    private DeviceDefinition stored(String name) {
        return store.snapshot().values().stream().filter(d -> d.name().equals(name)).findFirst().orElseThrow();
    }

    private static ByteBuffer pattern(int seed) {
        ByteBuffer b = ByteBuffer.allocate(8192);
        for (int i = 0; i < b.capacity(); i++) {
            b.put(i, (byte) (seed * 31 + i * 7));
        }
        return b;
    }

    private static void write(DeviceHandle h, long offset, int seed) throws IOException {
        h.write(offset, pattern(seed), 0);
        h.flush();
    }

    private static void verify(DeviceHandle h, long offset, int seed) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(8192);
        h.read(offset, b);
        assertEquals(pattern(seed), b.flip(), "the block at " + offset + " holds what was written");
    }

    /** Active on a tcache reopened (not the one before the switch), nothing waiting, the stored definition {@code before}. */
    private void onTheOldTarget(CacheTestTarget old, DeviceDefinition before) {
        DeviceInfo i = m.info("wb0").orElseThrow();
        assertEquals(DeviceState.ACTIVE, i.state());
        assertEquals("tcache", i.type());
        assertNull(i.waitingFor());
        assertEquals(before.arguments(), i.arguments(), "the old arguments in force");
        assertEquals(before, stored("wb0"), "the stored definition is the old one");
        assertTrue(old.closed, "the old target was closed for the in-place build");
        assertNotSame(old, wb0(), "and reopened from its definition");
        assertFalse(wb0().closed);
    }

    @Test
    void anAdoptingSwitchWhoseBuildRefusesTheCacheDeviceIsUndone() throws Exception {
        cacheStack();
        CacheTestTarget old = wb0();
        DeviceDefinition before = stored("wb0");
        caches.refuse = a -> "77".equals(a.get("threshold"));
        try (DeviceHandle h = m.open("wb0", "nbd:wb0")) {
            write(h, 0, 1);
            write(h, 65536, 2);
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> m.switchTarget("wb0",
                    "tcache", args("cache", "cache0", "threshold", "77"), "disk0", Map.of()));
            assertEquals("wb0: switch to tcache refused: tcache: the cache device is formatted with threshold=10, "
                    + "not 77; wb0 stays tcache as it was", e.getMessage());
            onTheOldTarget(old, before);
            // the client's handle is served again at once: the gate is open
            verify(h, 0, 1);
            verify(h, 65536, 2);
            write(h, 4096 * 4, 3);
            verify(h, 4096 * 4, 3);
        }
        assertEquals(java.util.List.of("(default)", "(default)"), caches.builtWithThreshold,
                "built by the create, then reopened from the old definition (the refused build built nothing)");
        restart();
        DeviceInfo i = m.info("wb0").orElseThrow();
        assertEquals(DeviceState.ACTIVE, i.state(), "a restart comes back on the old target");
        assertEquals("tcache", i.type());
        assertEquals(before.arguments(), i.arguments());
        try (DeviceHandle h = m.open("wb0", "nbd:wb0")) {
            verify(h, 0, 1);
            verify(h, 65536, 2);
            verify(h, 4096 * 4, 3);
        }
    }

    @Test
    void aSwitchToAnotherTypeWithoutFormatIsUndoneToo() throws Exception {
        cacheStack();
        CacheTestTarget old = wb0();
        DeviceDefinition before = stored("wb0");
        strict.failBuild = true;
        IOException e = assertThrows(IOException.class, () -> m.switchTarget("wb0", "tstrict",
                args("cache", "cache0", "threshold", "50"), "disk0", Map.of()));
        assertEquals("wb0: switch to tstrict refused: tstrict: the cache device failed; wb0 stays tcache as it was",
                e.getMessage());
        onTheOldTarget(old, before);
        restart();
        assertEquals("tcache", m.info("wb0").orElseThrow().type());
        assertEquals(DeviceState.ACTIVE, m.info("wb0").orElseThrow().state());
    }

    /** The new definition is stored only once its build succeeded; a store that then fails is undone as well. */
    @Test
    void aStoreThatFailsAfterTheBuildReopensTheOldTarget() throws Exception {
        cacheStack();
        CacheTestTarget old = wb0();
        DeviceDefinition before = stored("wb0");
        store.failSaves = true;
        IOException e = assertThrows(IOException.class, () -> m.switchTarget("wb0", "tcache",
                args("cache", "cache0", "threshold", "50"), "disk0", Map.of()));
        assertTrue(e.getMessage().contains("read-only"), e.getMessage());
        store.failSaves = false;
        onTheOldTarget(old, before);
        assertTrue(caches.builtWithThreshold.contains("50"), "the new target was built, then closed");
    }

    @Test
    void aSuccessfulSwitchWithoutFormatStillCommits() throws Exception {
        cacheStack();
        m.switchTarget("wb0", "tcache", args("cache", "cache0", "threshold", "50"), "disk0", Map.of());
        assertEquals("50", stored("wb0").arguments().get("threshold"));
        assertEquals("50", wb0().threshold);
        restart();
        assertEquals("50", m.info("wb0").orElseThrow().arguments().get("threshold"));
    }

    /** Not undone: the old target cannot be reopened either, so the switch is committed and the device waits, as before. */
    @Test
    void whenTheOldTargetCannotBeReopenedEitherTheDeviceWaitsAsBefore() throws Exception {
        cacheStack();
        caches.refuse = a -> true;
        IOException e = assertThrows(IOException.class, () -> m.switchTarget("wb0", "tcache",
                args("cache", "cache0", "threshold", "77"), "disk0", Map.of()));
        assertTrue(e.getMessage().startsWith("wb0: switch to tcache committed, but its build failed: tcache: the "
                + "cache device is formatted with threshold=10, not 77; the device waits"), e.getMessage());
        DeviceInfo i = m.info("wb0").orElseThrow();
        assertEquals(DeviceState.WAITING_FOR_TARGET, i.state());
        assertEquals("77", stored("wb0").arguments().get("threshold"), "the new definition is stored");
        caches.refuse = null;
        m.reload("wb0", "tcache", args("backing", "disk0", "cache", "cache0", "threshold", "77"));
        assertEquals(DeviceState.ACTIVE, m.info("wb0").orElseThrow().state(), "a dev:reload retries");
    }

    /** format=true: committed before the build, so its failure leaves the device waiting for the new target. */
    @Test
    void aFormattingSwitchWhoseBuildFailsStillWaits() throws Exception {
        cacheStack();
        strict.failBuild = true;
        int before = caches.builtWithThreshold.size();
        IOException e = assertThrows(IOException.class, () -> m.switchTarget("wb0", "tstrict",
                args("cache", "cache0", "threshold", "50"), "disk0", Map.of("format", "true")));
        assertTrue(e.getMessage().contains("committed, but its build failed"), e.getMessage());
        assertEquals(DeviceState.WAITING_FOR_TARGET, m.info("wb0").orElseThrow().state());
        assertEquals("tstrict", stored("wb0").type(), "the new definition stays stored");
        assertEquals(before, caches.builtWithThreshold.size(), "the old target was not reopened");
        restart(); // no tstrict factory in the new manager: it waits for its type
        assertEquals(DeviceState.WAITING_FOR_TARGET, m.info("wb0").orElseThrow().state());
        assertEquals("tstrict", m.info("wb0").orElseThrow().type());
    }
}
