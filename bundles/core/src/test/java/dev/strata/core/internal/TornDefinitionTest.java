package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.strata.api.DeviceState;
import dev.strata.core.internal.config.ConfigAdminStore;

/**
 * A {@code deploy/*.cfg} over FileInstall's 8 KiB write buffer (here: a long comment first, as a
 * user may write) read by FileInstall's poll while FileInstall rewrites it: the read is cut after
 * the first 8192 bytes, inside {@code arg.path}, without {@code arg.size} and the identity. It
 * must never be applied: it is written back from the last valid definition, as an emptied read
 * is ({@link EmptiedDefinitionTest}, same order of events against the real
 * {@link ConfigAdminStore}), for a running device and for one not built yet.
 */
class TornDefinitionTest {
    private static final String PID = "dev.strata.device~backing0";

    @TempDir
    Path dir;
    FakeConfigAdmin cm;
    DeviceManagerImpl m;
    ConfigAdminStore store;
    Path cfg;
    String url;
    String image;

    @BeforeEach
    void start() throws Exception {
        cm = new FakeConfigAdmin();
        m = new DeviceManagerImpl(new MemStore(), Settings.of(60, 30));
        m.addFactory(TestTargets.entry(new TestTargets.FileFactory(), "tfile"));
        store = new ConfigAdminStore(cm.admin, m);
        m.core().store.use(store);
        cm.listen(store);
        cfg = Files.createDirectories(dir.resolve("deploy")).resolve("dev.strata.device-backing0.cfg");
        url = cfg.toUri().toString();
        Path images = Files.createDirectories(dir.resolve("images/" + "a-long-directory-name-for-images/".repeat(6)));
        image = images.resolve("backing0.img").toString();
    }

    @AfterEach
    void stop() {
        m.stop();
    }

    private Map<String, String> backing0() {
        return Map.of("name", "backing0", "type", "tfile", "arg.path", image, "arg.size", "1M");
    }

    /** The file FileInstall writes for {@link #backing0()}: a comment, then the keys, over 8 KiB. */
    private String fileContent() {
        String keys = "name = backing0\ntype = tfile\narg.path = ";
        int comment = 8192 - keys.length() - 20; // the first 8192 bytes end 20 characters into the path
        StringBuilder sb = new StringBuilder();
        while (sb.length() < comment) {
            sb.append("# notes about this device that its owner keeps in the file itself\n");
        }
        sb.setLength(comment);
        sb.setCharAt(comment - 1, '\n');
        return sb + keys + image + "\narg.size = 1M\n";
    }

    /** What FileInstall's poll stores when it reads the first 8192 bytes of the file (the rest not written yet). */
    private Map<String, String> cutRead(String content) throws Exception {
        Properties p = new Properties();
        p.load(new StringReader(content.substring(0, 8192)));
        Map<String, String> read = new HashMap<>();
        p.forEach((k, v) -> read.put((String) k, (String) v));
        assertTrue(image.startsWith(read.get("arg.path")) && !image.equals(read.get("arg.path")), "cut in the path: " + read);
        return read;
    }

    private void deliver() throws Exception {
        for (String pid : cm.drainDeliveries()) {
            m.definitionChanged(pid).get(30, TimeUnit.SECONDS);
        }
        assertTrue(m.awaitQuiet(30, TimeUnit.SECONDS), "the manager's tasks did not finish");
    }

    private void awaitActive() {
        GateTest.await(() -> m.info("backing0").map(i -> i.state() == DeviceState.ACTIVE).orElse(false), "backing0 active");
    }

    @Test
    void aCutReadOfARunningDevicesFileIsWrittenBackNotApplied() throws Exception {
        String content = fileContent();
        Files.writeString(cfg, content);
        cm.fileInstallSets(PID, url, backing0());
        deliver();
        deliver();
        awaitActive();
        Object id = cm.properties(PID).get("id");
        cm.fileInstallSets(PID, url, cutRead(content)); // the poll read the file while FileInstall rewrote it
        deliver();
        assertEquals(image, cm.properties(PID).get("arg.path"), "the cut read stayed: " + cm.properties(PID));
        assertEquals("1M", cm.properties(PID).get("arg.size"));
        assertEquals(id, cm.properties(PID).get("id"), "the identity is kept");
        assertEquals(image, m.definition("backing0").arguments().get("path"), "the device was not reloaded to the cut path");
        assertEquals(DeviceState.ACTIVE, m.info("backing0").orElseThrow().state());
    }

    @Test
    void aCutReadBeforeTheManagerReadTheFileIsWrittenBackAndTheDeviceCreated() throws Exception {
        String content = fileContent();
        Files.writeString(cfg, content);
        CountDownLatch late = new CountDownLatch(1);
        m.core().tasks.submitInOrder(late::await); // the manager busy with other definitions
        cm.fileInstallSets(PID, url, backing0()); // the first scan
        cm.fileInstallSets(PID, url, cutRead(content)); // the next poll, during FileInstall's write-back
        late.countDown();
        deliver();
        deliver();
        awaitActive();
        assertEquals(image, cm.properties(PID).get("arg.path"), "the cut read stayed: " + cm.properties(PID));
        assertEquals(image, m.definition("backing0").arguments().get("path"), "built from the cut read");
        assertEquals("1M", m.definition("backing0").arguments().get("size"));
    }
}
