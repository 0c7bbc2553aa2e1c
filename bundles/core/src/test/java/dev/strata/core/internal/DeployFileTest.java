package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Dictionary;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.strata.api.DeviceState;
import dev.strata.core.internal.config.ConfigAdminStore;

/**
 * With FileInstall's in-place write-back off, the store writes each change of a device defined
 * by a {@code deploy/*.cfg} into that file itself — atomically (a new file renamed over it), the
 * file before the configuration, and only while the file still holds what the configuration was
 * read from — and deletes the file of a removed device. Against the real {@link ConfigAdminStore}
 * and a real directory; FileInstall's reads are made by the test ({@link FakeConfigAdmin}).
 */
class DeployFileTest {
    private static final String PID = "dev.strata.device~backing0";
    private static final String COMMENT = "# the slow device: kept across every write\n";

    @TempDir
    Path dir;
    Path deploy;
    FakeConfigAdmin cm;
    DeviceManagerImpl m;
    ConfigAdminStore store;
    CacheTestTarget.Factory caches;
    Path cfg;
    String url;
    /** Set when a test made {@link #deploy} unwritable, to undo it. */
    private Runnable writable = () -> { };

    @BeforeEach
    void start() throws Exception {
        deploy = Files.createDirectories(dir.resolve("deploy"));
        cm = new FakeConfigAdmin();
        m = new DeviceManagerImpl(new MemStore(), Settings.of(60, 30));
        caches = new CacheTestTarget.Factory();
        m.addFactory(TestTargets.entry(new TestTargets.FileFactory(), "tfile"));
        m.addFactory(TestTargets.entry(caches, "tcache"));
        Map<String, String> framework = Map.of("felix.fileinstall.dir", deploy.toString(), "strata.home", dir.toString());
        store = new ConfigAdminStore(cm.admin, m, framework::get);
        m.core().store.use(store);
        cm.listen(store);
        cfg = deploy.resolve("dev.strata.device-backing0.cfg");
        url = cfg.toUri().toString();
    }

    @AfterEach
    void stop() {
        writable.run();
        caches.statusRelease.countDown();
        m.stop();
    }

    /** FileInstall reads {@code file} into the configuration {@code pid} (it substitutes ${strata.home}). */
    private void fileInstallReads(String pid, Path file) throws IOException {
        Properties p = new Properties();
        p.load(new StringReader(Files.readString(file, StandardCharsets.ISO_8859_1)));
        Map<String, String> m = new HashMap<>();
        p.forEach((k, v) -> m.put((String) k, ((String) v).replace("${strata.home}", dir.toString())));
        cm.fileInstallSets(pid, file.toUri().toString(), m);
    }

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

    /** A device backing0 defined by its file, up, its identity stamped. */
    private void deployed() throws Exception {
        Files.writeString(cfg, COMMENT + "name = backing0\ntype = tfile\narg.path = ${strata.home}/backing0.img\narg.size = 1M\n");
        fileInstallReads(PID, cfg);
        deliver();
        deliver();
        GateTest.await(() -> m.info("backing0").map(i -> i.state() == DeviceState.ACTIVE).orElse(false), "backing0 active");
    }

    private static Map<String, String> keys(Dictionary<String, Object> props) {
        Map<String, String> out = new TreeMap<>();
        for (String k : java.util.Collections.list(props.keys())) {
            if (!k.startsWith("service.") && !k.equals("felix.fileinstall.filename")) {
                out.put(k, String.valueOf(props.get(k)));
            }
        }
        return out;
    }

    private Map<String, String> fileKeys() throws IOException {
        Properties p = new Properties();
        p.load(new StringReader(Files.readString(cfg, StandardCharsets.ISO_8859_1)));
        Map<String, String> out = new TreeMap<>();
        p.forEach((k, v) -> out.put((String) k, ((String) v).replace("${strata.home}", dir.toString())));
        return out;
    }

    private Object inode() throws IOException {
        return Files.getAttribute(cfg, "unix:ino");
    }

    @Test
    void theIdentityStampedIsWrittenIntoTheFileAsANewFileRenamedOverIt() throws Exception {
        Files.writeString(cfg, COMMENT + "name = backing0\ntype = tfile\narg.path = ${strata.home}/backing0.img\narg.size = 1M\n");
        Object before = inode();
        fileInstallReads(PID, cfg);
        deliver();
        deliver();
        GateTest.await(() -> m.info("backing0").map(i -> i.state() == DeviceState.ACTIVE).orElse(false), "backing0 active");
        String id = String.valueOf(cm.properties(PID).get("id"));
        assertEquals(m.info("backing0").orElseThrow().id(), id);
        String text = Files.readString(cfg);
        assertEquals(COMMENT + "name = backing0\ntype = tfile\narg.path = ${strata.home}/backing0.img\narg.size = 1M\nid = " + id + "\n",
                text, "the comment and the raw ${strata.home} kept, the identity added");
        assertNotEquals(before, inode(), "replaced by a rename, never rewritten in place");
        assertEquals(keys(cm.properties(PID)), fileKeys(), "the file holds what the configuration holds");
        try (Stream<Path> s = Files.list(deploy)) {
            assertEquals(1, s.count(), "no temporary file left");
        }
    }

    @Test
    void aFileThatIsASymbolicLinkStaysOneAndTheFileItNamesIsReplaced() throws Exception {
        Path real = Files.createDirectories(dir.resolve("elsewhere")).resolve("backing0.cfg");
        Files.writeString(real, "name = backing0\ntype = tfile\narg.path = ${strata.home}/backing0.img\narg.size = 1M\n");
        Files.createSymbolicLink(cfg, real);
        fileInstallReads(PID, cfg);
        deliver();
        deliver();
        GateTest.await(() -> m.info("backing0").map(i -> i.state() == DeviceState.ACTIVE).orElse(false), "backing0 active");
        assertTrue(Files.isSymbolicLink(cfg), "still a link");
        assertTrue(Files.readString(real).contains("id = " + cm.properties(PID).get("id")), "the file it names holds the identity");
    }

    @Test
    void aReloadIsWrittenIntoTheFileBeforeTheConfiguration() throws Exception {
        deployed();
        m.reload("backing0", "tfile", Map.of("path", dir.resolve("backing0.img").toString(), "size", "2M"));
        assertEquals("2M", fileKeys().get("arg.size"));
        assertEquals(keys(cm.properties(PID)), fileKeys());
        assertTrue(Files.readString(cfg).startsWith(COMMENT));
    }

    @Test
    void removingTheDeviceDeletesItsFile() throws Exception {
        deployed();
        m.remove("backing0");
        assertFalse(Files.exists(cfg), "the file is gone with the device: a restart does not bring it back");
        assertNull(cm.properties(PID));
    }

    @Test
    void formatTrueIsForgottenInTheFileAfterTheFirstBuild() throws Exception {
        for (String disk : new String[] {"disk0", "cache0"}) {
            m.create(disk, "tfile", Map.of("path", dir.resolve(disk + ".img").toString(), "size", "1M"));
        }
        Path wb = deploy.resolve("dev.strata.device-wb0.cfg");
        Files.writeString(wb, "name = wb0\ntype = tcache\narg.backing = disk0\narg.cache = cache0\narg.format = true\n");
        fileInstallReads("dev.strata.device~wb0", wb);
        deliver();
        deliver();
        GateTest.await(() -> m.info("wb0").map(i -> i.state() == DeviceState.ACTIVE).orElse(false), "wb0 active");
        GateTest.await(() -> {
            try {
                return !Files.readString(wb).contains("format");
            } catch (IOException e) {
                return false;
            }
        }, "format=true gone from the file");
        assertFalse(cm.properties("dev.strata.device~wb0").get("arg.format") != null, "and from the configuration");
    }

    @Test
    void aFileChangedSinceFileInstallReadItIsNotOverwritten() throws Exception {
        deployed();
        Map<String, String> stored = keys(cm.properties(PID));
        // a user's edit FileInstall has not applied yet (or one an editor is still writing in place)
        String edit = Files.readString(cfg).replace("arg.size = 1M", "arg.size = 4M");
        Files.writeString(cfg, edit);
        IOException e = assertThrows(IOException.class,
                () -> m.reload("backing0", "tfile", Map.of("path", dir.resolve("backing0.img").toString(), "size", "2M")));
        assertTrue(e.getMessage().contains("was changed since FileInstall last read it"), e.getMessage());
        assertFalse(e.getMessage().contains("Exception"), e.getMessage());
        assertEquals(edit, Files.readString(cfg), "the user's edit stays");
        assertEquals(stored, keys(cm.properties(PID)), "the configuration unchanged");
        assertEquals(1L << 20, m.info("backing0").orElseThrow().size(), "the device unchanged");
    }

    @Test
    void aReadOnlyDeployDirectoryGivesOneLineAndChangesNothing() throws Exception {
        deployed();
        String text = Files.readString(cfg);
        Map<String, String> stored = keys(cm.properties(PID));
        readOnly(deploy);
        IOException e = assertThrows(IOException.class,
                () -> m.reload("backing0", "tfile", Map.of("path", dir.resolve("backing0.img").toString(), "size", "2M")));
        assertFalse(e.getMessage().contains("\n") || e.getMessage().contains("Exception"), e.getMessage());
        assertTrue(e.getMessage().contains("cannot write " + cfg) && e.getMessage().contains("the file is unchanged"), e.getMessage());
        assertEquals(text, Files.readString(cfg));
        assertEquals(stored, keys(cm.properties(PID)));
        assertEquals(1L << 20, m.info("backing0").orElseThrow().size(), "the device unchanged");
        e = assertThrows(IOException.class, () -> m.remove("backing0"));
        assertTrue(e.getMessage().contains("cannot delete " + cfg), e.getMessage());
        assertTrue(Files.exists(cfg));
        assertEquals(DeviceState.ACTIVE, m.info("backing0").orElseThrow().state(), "not removed");
        assertEquals(stored, keys(cm.properties(PID)));
    }

    /**
     * Makes {@code d} refuse new files: its write permission taken away, or, for root (whom
     * permissions do not stop), the immutable attribute ({@code chattr +i}).
     */
    private void readOnly(Path d) throws Exception {
        Set<PosixFilePermission> was = Files.getPosixFilePermissions(d);
        Files.setPosixFilePermissions(d, PosixFilePermissions.fromString("r-xr-xr-x"));
        writable = () -> {
            try {
                Files.setPosixFilePermissions(d, was);
            } catch (IOException ignored) {
                // the temporary directory goes anyway
            }
        };
        Path probe = d.resolve(".probe");
        try {
            Files.createFile(probe);
        } catch (IOException refused) {
            return; // permissions suffice
        }
        Files.delete(probe);
        Process p = new ProcessBuilder("chattr", "+i", d.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertEquals(0, p.waitFor(), "cannot make " + d + " read-only (running as root, and chattr +i failed): " + out);
        Runnable perms = writable;
        writable = () -> {
            try {
                new ProcessBuilder("chattr", "-i", d.toString()).start().waitFor();
            } catch (IOException | InterruptedException ignored) {
                // the temporary directory's clean-up reports it
            }
            perms.run();
        };
    }
}
