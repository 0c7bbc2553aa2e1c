package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.core.internal.TestTargets.FileFactory;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The echo of a stored definition is applied against what is stored when the device's lock is
 * taken, not against what was read before: a cache:mode's echo read while a newer cache:mode ran
 * (CacheCommandsIT saw the mode flip back to the older one for a moment) must not reload the
 * device to the older settings. Nor may an echo read before a removal bring the removed device
 * back (DeviceSafetyIT saw a cache reloaded and then removed come back as "in use" of its devices).
 */
class StaleEchoTest {
    @TempDir
    Path dir;
    final MemStore store = new MemStore();
    final DeviceManagerImpl m = new DeviceManagerImpl(store, Settings.of(60, 30));
    final FileFactory files = new FileFactory();

    @AfterEach
    void stop() {
        m.stop();
    }

    @Test
    void anOvertakenEchoDoesNotReloadTheDevice() throws Exception {
        m.addFactory(TestTargets.entry(files, "tfile"));
        String path = dir.resolve("a.img").toString();
        String key = store.putExternal(new DeviceDefinition("a", "tfile", Map.of("path", path, "size", "1M")));
        m.definitionChanged(key).get(30, TimeUnit.SECONDS);
        assertTrue(m.awaitQuiet(60, TimeUnit.SECONDS));
        DeviceDefinition current = store.load(key).orElseThrow();
        assertEquals(1, files.opened.get());
        // what an echo read before the newest write would see: an older version of the settings
        store.staleOnce = new DeviceDefinition("a", "tfile", Map.of("path", path, "size", "2M")).withId(current.id());
        m.definitionChanged(key).get(30, TimeUnit.SECONDS);
        assertTrue(m.awaitQuiet(60, TimeUnit.SECONDS));
        assertEquals(1, files.opened.get(), "not reloaded");
        assertEquals(1L << 20, m.info("a").orElseThrow().size());
    }

    @Test
    void anEchoReadBeforeARemovalDoesNotBringTheDeviceBack() throws Exception {
        m.addFactory(TestTargets.entry(files, "tfile"));
        String path = dir.resolve("b.img").toString();
        String key = store.putExternal(new DeviceDefinition("b", "tfile", Map.of("path", path, "size", "1M")));
        m.definitionChanged(key).get(30, TimeUnit.SECONDS);
        assertTrue(m.awaitQuiet(60, TimeUnit.SECONDS));
        DeviceDefinition stored = store.load(key).orElseThrow();
        m.remove("b");
        assertTrue(store.load(key).isEmpty());
        // the echo of an earlier write, whose definition was read before the removal deleted it
        store.staleOnce = stored;
        m.definitionChanged(key).get(30, TimeUnit.SECONDS);
        assertTrue(m.awaitQuiet(60, TimeUnit.SECONDS));
        assertTrue(m.info("b").isEmpty(), "the removed device came back: " + m.list());
        assertTrue(store.snapshot().isEmpty(), "and nothing was stored again: " + store.snapshot());
    }
}
