package dev.strata.itests;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.stream.Stream;

import javax.inject.Inject;

import org.junit.After;
import org.junit.Before;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.util.tracker.ServiceTracker;
import org.slf4j.LoggerFactory;

import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager;
import dev.strata.api.DeviceState;

/**
 * The device manager's store (Configuration Admin, reached through core's {@code StoreOpener}
 * service) going away and coming back under a running framework: Configuration Admin's bundle
 * stopped and started, and the core bundle itself updated and refreshed. Either way the manager
 * goes (its references are static) and a new one comes back with every device from its stored
 * definition: same identity, the data written before, the NBD export serving it again. The
 * stored definitions are neither lost nor rewritten (Configuration Admin's files are byte for
 * byte the same), and nothing prints an error or a stack trace.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class StoreRestartIT {
    private static final String CONFIG_ADMIN = "org.apache.felix.configadmin";
    private static final String CORE = "dev.strata.core";
    private static final int LENGTH = 1 << 20;

    @Inject
    BundleContext context;

    private ServiceTracker<DeviceManager, DeviceManager> managers;
    private Path dir;

    @Configuration
    public Option[] config() {
        return StrataOptions.distribution(StrataOptions.workDir("store-restart"));
    }

    @Before
    public void trackManagers() throws IOException {
        managers = new ServiceTracker<>(context, DeviceManager.class, null);
        managers.open();
        dir = Files.createDirectories(Path.of(context.getProperty("felix.fileinstall.dir")).getParent().resolve("data"));
    }

    @After
    public void closeTracker() {
        managers.close();
    }

    @Test
    public void devicesAndExportsComeBackAfterConfigurationAdminStopsAndStarts() throws Exception {
        Stack stack = build("cm");
        Bundle cm = Bundles.installed(context, CONFIG_ADMIN);
        try (ConsoleCapture console = new ConsoleCapture(); NbdWire connected = stack.connect()) {
            proveCaptured(console);
            cm.stop();
            try {
                Await.until("the device manager gone with Configuration Admin", 120, () -> managers.isEmpty(),
                        () -> String.valueOf(managers.getServiceReferences()));
                assertEquals("the stored definitions while Configuration Admin is down", stack.stored, storedFiles());
            } finally {
                cm.start(); // also after a failure: the other test needs it
            }
            stack.checkBack("after Configuration Admin's restart", console);
        }
    }

    @Test
    public void devicesAndExportsComeBackAfterTheCoreBundleIsUpdated() throws Exception {
        Stack stack = build("up");
        try (ConsoleCapture console = new ConsoleCapture(); NbdWire connected = stack.connect()) {
            proveCaptured(console);
            Bundles.updateAndRefresh(context, CORE, "the core update");
            stack.checkBack("after the core update", console);
        }
    }

    /** The capture sees the framework's logging: a line through its slf4j reaches it. */
    private static void proveCaptured(ConsoleCapture console) {
        LoggerFactory.getLogger(StoreRestartIT.class).warn("StoreRestartIT: console capture check");
        assertTrue("the console capture sees the framework's log:\n" + console.text(),
                console.text().contains("StoreRestartIT: console capture check"));
    }

    /**
     * {@code P0} (file), {@code P1} (linear on it) with {@link #LENGTH} random bytes written and
     * flushed through it, and an NBD export of {@code P1} on a free port, reachable.
     */
    private Stack build(String prefix) throws Exception {
        DeviceManager m = manager();
        Await.until("the file and linear target types", 60, () -> m.targetTypes().stream()
                .filter(t -> t.type().equals("file") || t.type().equals("linear")).count() == 2);
        String lower = prefix + "0";
        String upper = prefix + "1";
        m.create(lower, "file", Map.of("path", dir.resolve(lower + ".img").toString(), "size", "8M", "create", "true"));
        m.create(upper, "linear", Map.of("device", lower, "offset", "1M", "length", "2M"));
        byte[] data = new byte[LENGTH];
        new SplittableRandom(prefix.hashCode()).nextBytes(data);
        try (DeviceHandle h = m.open(upper, "itest:store-restart")) {
            h.write(0, ByteBuffer.wrap(data), 0);
            h.flush();
        }
        int port = Distribution.freePort();
        ServiceTracker<ConfigurationAdmin, ConfigurationAdmin> cms = new ServiceTracker<>(context, ConfigurationAdmin.class, null);
        cms.open();
        try {
            ConfigurationAdmin cm = cms.waitForService(60_000);
            assertNotNull("Configuration Admin", cm);
            Hashtable<String, Object> export = new Hashtable<>();
            export.put("device", upper);
            export.put("name", upper);
            export.put("port", Integer.toString(port));
            cm.createFactoryConfiguration("dev.strata.nbd.export", "?").update(export);
        } finally {
            cms.close();
        }
        Stack s = new Stack(m, lower, upper, data, port, Map.of(lower, m.info(lower).orElseThrow(), upper, m.info(upper).orElseThrow()));
        for (DeviceInfo i : s.before.values()) {
            assertNotNull(i.name() + " has an identity", i.id());
        }
        s.awaitExport("before");
        s.stored = storedFiles();
        assertTrue("the definitions of " + lower + " and " + upper + " are stored: " + s.stored.keySet(),
                s.stored.keySet().stream().filter(k -> k.contains(lower) || k.contains(upper)).count() >= 2);
        return s;
    }

    private DeviceManager manager() throws InterruptedException {
        DeviceManager m = managers.waitForService(60_000);
        assertNotNull("a DeviceManager registered", m);
        return m;
    }

    /** Configuration Admin's files (felix.cm.dir): relative path to content, byte for byte. */
    private Map<String, String> storedFiles() throws IOException {
        Path cmDir = Path.of(context.getProperty("felix.cm.dir"));
        Map<String, String> files = new TreeMap<>();
        try (Stream<Path> s = Files.walk(cmDir)) {
            for (Path p : s.filter(Files::isRegularFile).toList()) {
                files.put(cmDir.relativize(p).toString(), Files.readString(p, StandardCharsets.ISO_8859_1));
            }
        }
        return files;
    }

    private final class Stack {
        final String lower;
        final String upper;
        final byte[] data;
        final int port;
        final DeviceManager builtBy;
        final Map<String, DeviceInfo> before;
        Map<String, String> stored;

        Stack(DeviceManager builtBy, String lower, String upper, byte[] data, int port, Map<String, DeviceInfo> before) {
            this.builtBy = builtBy;
            this.lower = lower;
            this.upper = upper;
            this.data = data;
            this.port = port;
            this.before = before;
        }

        /** A new manager with both devices up as before, the data there, the export serving it, the store untouched, no error printed. */
        void checkBack(String when, ConsoleCapture console) throws Exception {
            Await.until("a device manager with " + lower + " and " + upper + " up " + when, 120, () -> {
                DeviceManager m = managers.getService();
                return m != null && up(m, lower) && up(m, upper);
            }, () -> String.valueOf(managers.getService() == null ? "no manager" : managers.getService().list()));
            DeviceManager m = manager();
            assertTrue("a new manager " + when, m != builtBy);
            for (String name : List.of(lower, upper)) {
                DeviceInfo now = m.info(name).orElseThrow();
                DeviceInfo was = before.get(name);
                assertEquals(name + "'s identity " + when, was.id(), now.id());
                assertEquals(name + "'s type " + when, was.type(), now.type());
                assertEquals(name + "'s arguments " + when, was.arguments(), now.arguments());
                assertEquals(name + "'s size " + when, was.size(), now.size());
                assertEquals(name + "'s lower devices " + when, was.lower(), now.lower());
            }
            ByteBuffer back = ByteBuffer.allocate(LENGTH);
            try (DeviceHandle h = m.open(upper, "itest:store-restart")) {
                h.read(0, back);
            }
            assertArrayEquals("the data written before, " + when, data, back.array());
            awaitExport(when);
            assertEquals("the stored definitions " + when, stored, storedFiles());
            assertEquals("error lines " + when + ":\n" + console.text(), List.of(), console.errorLines());
        }

        /** A client of the export, connected (it stays connected while the manager goes: nothing may wait for it). */
        NbdWire connect() throws IOException {
            NbdWire nbd = new NbdWire(port, upper);
            assertArrayEquals("read through the export", data, nbd.read(0, LENGTH));
            return nbd;
        }

        /** Waits until the export of {@code upper} serves the data written. */
        void awaitExport(String when) {
            Await.until("the NBD export of " + upper + " serving its data " + when, 120, () -> {
                try (NbdWire nbd = new NbdWire(port, upper)) {
                    return Arrays.equals(data, nbd.read(0, LENGTH));
                } catch (IOException e) {
                    return false; // not listening yet
                }
            });
        }
    }

    private static boolean up(DeviceManager m, String name) {
        return m.info(name).map(d -> d.state() == DeviceState.ACTIVE && d.size() > 0).orElse(false);
    }
}
