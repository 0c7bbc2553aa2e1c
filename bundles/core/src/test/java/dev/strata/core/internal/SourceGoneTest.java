package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.strata.api.DeviceState;

/** A definition whose deploy/ file was deleted while Strata was stopped is not built again. */
class SourceGoneTest extends ManagerFixture {

    @Test
    void aDefinitionWhoseFileWasDeletedWhileStoppedIsForgottenAtStart() throws Exception {
        String key = store.putExternal(new DeviceDefinition("ext", "tfile", args("path", dir.resolve("ext.img").toString(), "size", "1M")));
        String kept = store.putExternal(new DeviceDefinition("kept", "tfile", args("path", dir.resolve("kept.img").toString(), "size", "1M")));
        m.definitionChanged(key).get(30, TimeUnit.SECONDS);
        m.definitionChanged(kept).get(30, TimeUnit.SECONDS);
        awaitActive("ext");
        m.stop();
        store.sourceDeleted(key, "dev.strata.device-ext.cfg"); // rm deploy/dev.strata.device-ext.cfg while stopped
        restart();
        assertTrue(m.info("ext").isEmpty(), "the device of a deleted file came back");
        assertFalse(store.snapshot().containsKey(key), "its definition is still stored");
        awaitActive("kept");
        assertTrue(store.snapshot().containsKey(kept));
    }

    @Test
    void aRunningDeviceIsNotDroppedByTheStartCheck() throws Exception {
        String key = store.putExternal(new DeviceDefinition("ext", "tfile", args("path", dir.resolve("ext.img").toString(), "size", "1M")));
        m.definitionChanged(key).get(30, TimeUnit.SECONDS);
        // the file is being replaced (an editor deletes then writes it): a running device stays
        store.sourceDeleted(key, "dev.strata.device-ext.cfg");
        m.definitionChanged(key).get(30, TimeUnit.SECONDS);
        awaitActive("ext");
        assertTrue(store.snapshot().containsKey(key));
    }

    /** The build runs on the manager's own thread after the definition is applied: wait for it (bounded). */
    private void awaitActive(String name) {
        GateTest.await(() -> m.info(name).map(i -> i.state() == DeviceState.ACTIVE).orElse(false), name + " active");
    }
}
