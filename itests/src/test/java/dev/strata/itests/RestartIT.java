package dev.strata.itests;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;

import org.junit.Test;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.FrameworkEvent;
import org.osgi.framework.launch.Framework;
import org.osgi.framework.launch.FrameworkFactory;
import org.osgi.framework.startlevel.BundleStartLevel;
import org.osgi.util.tracker.ServiceTracker;

import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager;
import dev.strata.api.DeviceState;
import dev.strata.launcher.LauncherConfig;

/**
 * Stop and restart the framework and find the stack — and its data — again. Pax Exam owns its
 * framework and cannot restart it, so this test launches Felix itself through
 * {@link FrameworkFactory}, twice, with the same Configuration Admin directory and the
 * distribution's bundle set. The system bundle exports {@code dev.strata.api} from the test's
 * class path, so the test talks to the {@link DeviceManager} directly.
 */
public class RestartIT {

    private static final int LENGTH = 2 << 20;

    @Test
    public void theStackAndItsDataSurviveAFrameworkRestart() throws Exception {
        Path work = StrataOptions.workDir("restart");
        byte[] data = new byte[LENGTH];
        new SplittableRandom(42).nextBytes(data);

        Framework first = launch(work);
        try {
            DeviceManager m = service(first, DeviceManager.class);
            Await.until("the file target type", 60, () -> m.targetTypes().stream().anyMatch(t -> t.type().equals("file")));
            m.create("r0", "file", Map.of("path", work.resolve("r0.img").toString(), "size", "8M", "create", "true"));
            m.create("r1", "linear", Map.of("device", "r0", "offset", "1M", "length", "2M"));
            try (DeviceHandle h = m.open("r1", "itest:restart")) {
                h.write(0, ByteBuffer.wrap(data), 0);
                h.flush();
            }
        } finally {
            stop(first);
        }

        Framework second = launch(work);
        try {
            DeviceManager m = service(second, DeviceManager.class);
            Await.until("r0 and r1 back and up", 120,
                    () -> up(m, "r0") && up(m, "r1"), () -> m.list().toString());
            DeviceInfo r1 = m.info("r1").orElseThrow();
            assertEquals("linear", r1.type());
            assertEquals(List.of("r0"), r1.lower());
            assertEquals(2L << 20, r1.size());
            ByteBuffer back = ByteBuffer.allocate(LENGTH);
            try (DeviceHandle h = m.open("r1", "itest:restart")) {
                h.read(0, back);
            }
            assertArrayEquals("the data written before the restart", data, back.array());
            ByteBuffer head = ByteBuffer.allocate(1 << 20);
            try (DeviceHandle h = m.open("r0", "itest:restart")) {
                h.read(0, head);
            }
            assertArrayEquals("outside r1's window r0 is untouched", new byte[1 << 20], head.array());
        } finally {
            stop(second);
        }
    }

    private static boolean up(DeviceManager m, String name) {
        return m.info(name).map(d -> d.state() == DeviceState.ACTIVE && d.size() > 0).orElse(false);
    }

    /** Felix with the distribution's bundles (api from the class path), state under {@code work}. */
    static Framework launch(Path work) throws Exception {
        LauncherConfig config = StrataOptions.distributionConfig();
        Path api = StrataOptions.bundleJar("dev.strata.api");
        String apiExports;
        try (JarFile jf = new JarFile(api.toFile())) {
            apiExports = jf.getManifest().getMainAttributes().getValue("Export-Package");
        }
        Map<String, String> props = new HashMap<>();
        props.put("org.osgi.framework.storage", work.resolve("felix-cache").toString());
        props.put("org.osgi.framework.storage.clean", "onFirstInit");
        props.put("org.osgi.framework.system.packages.extra", apiExports);
        props.put("org.osgi.framework.startlevel.beginning", config.get("org.osgi.framework.startlevel.beginning"));
        props.put("felix.bootdelegation.implicit", "false");
        props.put("felix.cm.dir", work.resolve("config").toString());
        props.put("felix.fileinstall.dir", Files.createDirectories(work.resolve("deploy")).toString());
        props.put("felix.fileinstall.tmpdir", work.resolve("tmp").toString());
        props.put("felix.fileinstall.log.level", "1");
        props.put("gosh.args", "--nointeractive --noshutdown");
        props.put("felix.log.level", "1");
        FrameworkFactory factory = ServiceLoader.load(FrameworkFactory.class).findFirst().orElseThrow();
        Framework fw = factory.newFramework(props);
        fw.init();
        BundleContext ctx = fw.getBundleContext();
        CountDownLatch started = new CountDownLatch(1);
        ctx.addFrameworkListener(e -> {
            if (e.getType() == FrameworkEvent.STARTED) {
                started.countDown();
            }
        });
        List<Path> jars = new java.util.ArrayList<>(StrataOptions.distributionBundles());
        jars.remove(api);
        jars.add(Path.of(System.getProperty("strata.slf4j.simple")));
        for (Path jar : jars) {
            Bundle b;
            try (InputStream in = Files.newInputStream(jar)) {
                b = ctx.installBundle(jar.toUri().toString(), in);
            }
            String bsn = StrataOptions.symbolicName(jar);
            b.adapt(BundleStartLevel.class).setStartLevel(config.startLevel(bsn.equals("slf4j.simple") ? "slf4j.api" : bsn));
            b.start();
        }
        fw.start();
        assertTrue("framework started", started.await(120, TimeUnit.SECONDS));
        return fw;
    }

    static <T> T service(Framework fw, Class<T> type) throws InterruptedException {
        ServiceTracker<T, T> t = new ServiceTracker<>(fw.getBundleContext(), type, null);
        t.open();
        T s = t.waitForService(60_000);
        assertNotNull(type.getSimpleName() + " registered", s);
        return s;
    }

    static void stop(Framework fw) throws Exception {
        fw.stop();
        FrameworkEvent e = fw.waitForStop(120_000);
        assertEquals("framework stopped within the deadline", FrameworkEvent.STOPPED, e.getType());
    }
}
