package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.strata.api.DeviceState;

/**
 * A running device's configuration changed into an invalid one (FileInstall read its own
 * half-written deploy/ file and stored it empty: the default stack's cache0 lost its definition
 * in a black-box run, and after the restart wb0 waited for it forever) is written back from the
 * device's definition; the device is not touched.
 */
class InvalidDefinitionTest extends ManagerFixture {

    @Test
    void anInvalidConfigurationOfARunningDeviceIsWrittenBack() throws Exception {
        String key = store.putExternal(new DeviceDefinition("ext", "tfile", args("path", dir.resolve("ext.img").toString(), "size", "1M")));
        m.definitionChanged(key).get(30, TimeUnit.SECONDS);
        awaitActive("ext");
        DeviceDefinition before = store.load(key).orElseThrow();
        store.makeInvalid(key);
        m.definitionChanged(key).get(30, TimeUnit.SECONDS);
        assertFalse(store.holdsInvalid(key), "the invalid configuration is still stored");
        assertEquals(before, store.load(key).orElseThrow(), "not the device's definition");
        assertEquals(DeviceState.ACTIVE, m.info("ext").orElseThrow().state());
        // and it survives a restart, which is what the empty file broke
        m.stop();
        restart();
        awaitActive("ext");
        assertTrue(store.snapshot().containsKey(key));
    }

    @Test
    void anInvalidConfigurationOfNoDeviceIsLeftAlone() throws Exception {
        String key = store.putExternal(new DeviceDefinition("ext", "tfile", args("path", dir.resolve("ext.img").toString(), "size", "1M")));
        store.makeInvalid(key);
        m.definitionChanged(key).get(30, TimeUnit.SECONDS);
        assertTrue(store.holdsInvalid(key), "nothing to restore it from, so nothing is invented");
        assertTrue(m.info("ext").isEmpty());
    }

    private void awaitActive(String name) {
        GateTest.await(() -> m.info(name).map(i -> i.state() == DeviceState.ACTIVE).orElse(false), name + " active");
    }
}
