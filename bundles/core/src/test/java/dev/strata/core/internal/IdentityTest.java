package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.util.UUID;

import org.junit.jupiter.api.Test;

/** Every device has a UUID from its creation on, kept across reload and restart, given to the targets above. */
class IdentityTest extends ManagerFixture {

    private DeviceDefinition stored(String name) {
        return store.snapshot().values().stream().filter(d -> d.name().equals(name)).findFirst().orElseThrow();
    }

    @Test
    void aDeviceGetsAnIdentityAtCreationThatIsStored() throws Exception {
        disk("disk0");
        disk("disk1");
        String id = m.info("disk0").orElseThrow().id();
        assertNotNull(id);
        UUID.fromString(id);
        assertEquals(id, stored("disk0").id());
        assertNotEquals(id, m.info("disk1").orElseThrow().id());
    }

    @Test
    void theIdentityIsKeptAcrossReloadAndRestart() throws Exception {
        disk("disk0");
        m.create("part", "linear", args("device", "disk0"));
        String id = m.info("part").orElseThrow().id();
        m.reload("part", "linear", args("device", "disk0", "length", "512K"));
        assertEquals(id, m.info("part").orElseThrow().id());
        assertEquals(id, stored("part").id());
        restart();
        assertEquals(id, m.info("part").orElseThrow().id());
    }

    @Test
    void aDefinitionWithoutIdentityGetsOneOnFirstLoad() throws Exception {
        String key = store.putExternal(new DeviceDefinition("old", "tfile",
                args("path", dir.resolve("old.img").toString(), "size", "1M")));
        m.loadStored();
        String id = m.info("old").orElseThrow().id();
        assertNotNull(id);
        assertEquals(id, store.load(key).orElseThrow().id(), "stored under the same key");
        restart();
        assertEquals(id, m.info("old").orElseThrow().id());
    }

    /**
     * A deploy/ .cfg file replaced by one without the id (a rebuilt or upgraded distribution,
     * an edited copy) is re-read by FileInstall while the device runs: the device keeps its
     * identity, and it must be stored again, or the next start stamps a new one and every cache
     * over the device refuses its own backing device ("belongs to another backing device").
     */
    @Test
    void anIdentityDroppedByAnOutsideEditIsKeptAndStoredAgain() throws Exception {
        String key = store.putExternal(new DeviceDefinition("ext", "tfile",
                args("path", dir.resolve("ext.img").toString(), "size", "1M")));
        m.definitionChanged(key).get(30, java.util.concurrent.TimeUnit.SECONDS);
        String id = m.info("ext").orElseThrow().id();
        assertEquals(id, store.load(key).orElseThrow().id());
        store.save(new DeviceDefinition("ext", "tfile", args("path", dir.resolve("ext.img").toString(), "size", "1M")));
        assertEquals(null, store.load(key).orElseThrow().id(), "the edit dropped the id");
        m.definitionChanged(key).get(30, java.util.concurrent.TimeUnit.SECONDS);
        assertEquals(id, m.info("ext").orElseThrow().id());
        assertEquals(id, store.load(key).orElseThrow().id(), "stored again under the same key");
        restart();
        assertEquals(id, m.info("ext").orElseThrow().id());
    }

    @Test
    void aTargetLearnsItsLowerDevicesIdentity() throws Exception {
        cacheStack();
        assertEquals(m.info("disk0").orElseThrow().id(), wb0().backingId);
        assertEquals(m.info("disk0").orElseThrow().id(), m.status("wb0").get("backing_id"));
    }
}
