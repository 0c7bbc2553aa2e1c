package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Dictionary;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.strata.api.DeviceState;
import dev.strata.core.internal.config.ConfigAdminStore;
import dev.strata.core.internal.linear.LinearTargetFactory;

/**
 * FileInstall writes every configuration change back into its {@code deploy/*.cfg} in place
 * (truncate, then write) — its own creation of a configuration too — and its poll can read the
 * file in between: it then updates the configuration to the empty file (nothing but
 * {@code felix.fileinstall.filename}) and writes that back, 0 bytes. At the distribution's first
 * start this emptied {@code backing0} before the device manager had ever read it (its deliveries
 * came after the emptying, both read the empty configuration), so nothing restored it and the
 * default stack never came up. Replayed here step by step against the real
 * {@link ConfigAdminStore}, with Felix's order of events (synchronous listeners in the update,
 * the managed service factory's deliveries later).
 */
class EmptiedDefinitionTest {
    private static final String PID = "dev.strata.device~backing0";

    @TempDir
    Path dir;
    FakeConfigAdmin cm;
    DeviceManagerImpl m;
    ConfigAdminStore store;
    Path cfg;
    String url;

    @BeforeEach
    void start() throws Exception {
        cm = new FakeConfigAdmin();
        m = new DeviceManagerImpl(new MemStore(), Settings.of(60, 30));
        m.addFactory(TestTargets.entry(new TestTargets.FileFactory(), "tfile"));
        m.addFactory(TestTargets.entry(new LinearTargetFactory(), "linear"));
        store = new ConfigAdminStore(cm.admin, m);
        m.core().store.use(store);
        cm.listen(store);
        cfg = Files.createDirectories(dir.resolve("deploy")).resolve("dev.strata.device-backing0.cfg");
        Files.createFile(cfg); // what is left of it: 0 bytes
        url = cfg.toUri().toString();
    }

    @AfterEach
    void stop() {
        m.stop();
    }

    private Map<String, String> backing0() {
        return Map.of("name", "backing0", "type", "tfile", "arg.path", dir.resolve("backing0.img").toString(), "arg.size", "1M");
    }

    /**
     * The managed service factory's deliveries so far, each applied in order (as Felix's update
     * thread does), and then whatever they and the store's listener queued.
     */
    private void deliver() throws Exception {
        for (String pid : cm.drainDeliveries()) {
            if (cm.properties(pid) == null) {
                m.definitionDeleted(pid).get(30, TimeUnit.SECONDS);
            } else {
                m.definitionChanged(pid).get(30, TimeUnit.SECONDS);
            }
        }
        assertTrue(m.awaitQuiet(30, TimeUnit.SECONDS), "the manager's tasks did not finish");
    }

    /** Holds the manager's definitions lane until the latch is counted down: its deliveries come late. */
    private CountDownLatch holdLane() {
        CountDownLatch release = new CountDownLatch(1);
        m.core().tasks.submitInOrder(release::await);
        return release;
    }

    @Test
    void aDefinitionEmptiedBeforeTheManagerReadItIsWrittenBackAndTheDeviceCreated() throws Exception {
        CountDownLatch late = holdLane(); // the manager busy with other definitions
        cm.fileInstallSets(PID, url, backing0()); // the first scan: the file as shipped
        cm.fileInstallSets(PID, url, Map.of()); // the next poll read the file while FileInstall rewrote it
        late.countDown();
        deliver(); // every delivery now reads the empty configuration
        Dictionary<String, Object> p = cm.properties(PID);
        assertEquals("tfile", p.get("type"), "the definition was not written back: " + p);
        assertEquals(dir.resolve("backing0.img").toString(), p.get("arg.path"));
        assertEquals(url, p.get("felix.fileinstall.filename"), "still tied to its file");
        deliver(); // the echo of the write-back (and of the identity stamped)
        GateTest.await(() -> m.info("backing0").map(i -> i.state() == DeviceState.ACTIVE).orElse(false), "backing0 active");
        assertTrue(cm.properties(PID).get("id") != null, "its identity is stamped into the same configuration");
        assertEquals(List.of(PID), store.keys(), "no second configuration for backing0");
    }

    @Test
    void anEmptiedDefinitionOfARunningDeviceIsWrittenBackToo() throws Exception {
        cm.fileInstallSets(PID, url, backing0());
        deliver();
        deliver();
        GateTest.await(() -> m.info("backing0").map(i -> i.state() == DeviceState.ACTIVE).orElse(false), "backing0 active");
        Object id = cm.properties(PID).get("id");
        cm.fileInstallSets(PID, url, Map.of());
        deliver();
        assertEquals("tfile", cm.properties(PID).get("type"));
        assertEquals(id, cm.properties(PID).get("id"), "the identity is kept");
        assertEquals(DeviceState.ACTIVE, m.info("backing0").orElseThrow().state());
    }

    @Test
    void anEmptyReadWhoseDeliveryConfigurationAdminDroppedIsWrittenBackAnyway() throws Exception {
        // Felix's update is not atomic: the empty read and the manager's own update at once can
        // share a revision, and the delivery of the later one is dropped as already delivered
        cm.fileInstallSets(PID, url, backing0());
        deliver();
        GateTest.await(() -> m.info("backing0").map(i -> i.state() == DeviceState.ACTIVE).orElse(false), "backing0 active");
        cm.fileInstallSets(PID, url, Map.of());
        cm.drainDeliveries(); // dropped
        assertTrue(m.awaitQuiet(30, TimeUnit.SECONDS));
        assertEquals("tfile", cm.properties(PID).get("type"), "the empty read stayed: " + cm.properties(PID));
        assertEquals(DeviceState.ACTIVE, m.info("backing0").orElseThrow().state());
    }

    @Test
    void aFileLeftEmptyByAStopIsWrittenBackAtTheNextStartFromTheStoredDefinition() throws Exception {
        // Strata stopped (FileInstall first) between FileInstall's write-back of an empty read
        // and of the manager's restore: the file is empty, Configuration Admin holds the definition
        cm.fileInstallSets(PID, url, backing0());
        deliver();
        m.stop();
        m = new DeviceManagerImpl(new MemStore(), Settings.of(60, 30));
        m.addFactory(TestTargets.entry(new TestTargets.FileFactory(), "tfile"));
        store = new ConfigAdminStore(cm.admin, m);
        m.core().store.use(store);
        cm.listen(store);
        m.loadStored();
        assertEquals(DeviceState.ACTIVE, m.info("backing0").orElseThrow().state());
        cm.fileInstallSets(PID, url, Map.of()); // FileInstall's first scan reads the empty file
        deliver();
        assertEquals("tfile", cm.properties(PID).get("type"));
        assertEquals(DeviceState.ACTIVE, m.info("backing0").orElseThrow().state());
    }

    @Test
    void aDeletedFileStillRemovesTheDevice() throws Exception {
        cm.fileInstallSets(PID, url, backing0());
        deliver();
        deliver();
        GateTest.await(() -> m.info("backing0").map(i -> i.state() == DeviceState.ACTIVE).orElse(false), "backing0 active");
        Files.delete(cfg);
        cm.delete(PID); // FileInstall's uninstall of the deleted file
        deliver();
        assertTrue(m.info("backing0").isEmpty(), "the device is removed with its file");
        assertNull(cm.properties(PID), "and nothing brought its definition back");
        assertTrue(store.keys().isEmpty());
    }

    @Test
    void aDefinitionEmptiedAfterItsFileWasDeletedAndCreatedAgainIsNotRestoredFromTheOldFile() throws Exception {
        cm.fileInstallSets(PID, url, backing0());
        deliver();
        deliver();
        cm.delete(PID);
        deliver();
        // a new, empty file under the same name: no definition was ever read from it
        cm.fileInstallSets(PID, url, Map.of());
        deliver();
        assertTrue(m.info("backing0").isEmpty(), "nothing is invented");
        assertNull(cm.properties(PID).get("type"));
    }

    @Test
    void aBrokenEditOfADefinitionNotBuiltYetIsNotOverwritten() throws Exception {
        // the user removed the type (other keys kept): an edit, not an empty read. The lane is
        // held so that nothing reads the first version before the edit (the store's listener
        // queues a re-read at every update: it ran in between on a loaded CI machine, built the
        // device from the valid version and this test then found it)
        CountDownLatch late = holdLane();
        cm.fileInstallSets(PID, url, backing0());
        Map<String, String> broken = new java.util.HashMap<>(backing0());
        broken.remove("type");
        cm.fileInstallSets(PID, url, broken);
        late.countDown();
        deliver();
        assertTrue(m.info("backing0").isEmpty());
        assertNull(cm.properties(PID).get("type"), "the user's edit stays for the user to fix");
    }

    @Test
    void anEmptyFileThatNeverHeldADefinitionDefinesNothing() throws Exception {
        cm.fileInstallSets(PID, url, Map.of());
        deliver();
        assertTrue(m.info("backing0").isEmpty());
        assertNull(cm.properties(PID).get("type"));
    }
}
