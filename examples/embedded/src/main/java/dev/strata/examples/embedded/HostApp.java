package dev.strata.examples.embedded;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleException;
import org.osgi.framework.launch.Framework;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager;

/**
 * A host application embedding Strata: starts whichever OSGi framework is on its class path,
 * installs the bundles of the features it needs (runtime, core, drivers, nbd, writeboost) from a
 * directory, builds {@code backing0 (file) + cache0 (file) -> wb0 (writeboost)} through the
 * {@link DeviceManager} service from plain Java, exports {@code wb0} over NBD and prints
 * {@code ready nbd://127.0.0.1:PORT/wb0}. A line {@code stop} (or end of input) on stdin stops
 * the framework cleanly — which closes every device after its data is durable — and prints
 * {@code stopped}.
 *
 * <p>{@code java ... HostApp BUNDLE_DIR WORK_DIR NBD_PORT}
 */
public final class HostApp {
    private static final Logger LOG = LoggerFactory.getLogger(HostApp.class);
    private static final long START_SECONDS = 120;

    private HostApp() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: HostApp BUNDLE_DIR WORK_DIR NBD_PORT");
            System.exit(2);
        }
        Path bundles = Path.of(args[0]);
        Path work = Path.of(args[1]);
        int port = Integer.parseInt(args[2]);
        Files.createDirectories(work);

        Framework framework = HostFramework.create(work.resolve("framework"));
        framework.init();
        BundleContext context = framework.getBundleContext();
        LOG.info("framework {} {}", framework.getSymbolicName(), framework.getVersion());
        List<Bundle> installed = new ArrayList<>();
        for (Path jar : bundleJars(bundles)) {
            installed.add(context.installBundle(jar.toUri().toString()));
        }
        framework.start();
        for (Bundle b : installed) {
            if (b.getHeaders().get("Fragment-Host") == null) {
                b.start();
            }
        }

        DeviceManager devices = Services.await(context, DeviceManager.class, START_SECONDS);
        // definitions persist (Configuration Admin): a restart finds the stack and recovers it
        if (devices.info("wb0").isEmpty()) {
            devices.create("backing0", "file", Map.of("path", work.resolve("backing0.img").toString(), "size", "64M", "create", "true"));
            devices.create("cache0", "file", Map.of("path", work.resolve("cache0.img").toString(), "size", "32M", "create", "true"));
            DeviceInfo wb = devices.create("wb0", "writeboost", Map.of("backing", "backing0", "cache", "cache0"));
            LOG.info("created {}", wb.name());
        } else {
            LOG.info("found wb0 from the last run");
        }

        Hashtable<String, Object> export = new Hashtable<>();
        export.put("device", "wb0");
        export.put("name", "wb0");
        export.put("bind", "127.0.0.1");
        export.put("port", String.valueOf(port));
        export.put("readonly", "false");
        Services.putFactoryConfiguration(context, "dev.strata.nbd.export", "name", export, START_SECONDS);
        Services.awaitListening(port, START_SECONDS);
        System.out.println("ready nbd://127.0.0.1:" + port + "/wb0 on " + framework.getSymbolicName());
        System.out.flush();

        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null && !line.trim().equals("stop")) {
                if (line.trim().equals("list")) {
                    devices.list().forEach(d -> System.out.println(d.name() + " " + d.type() + " " + d.state()));
                    System.out.flush();
                }
            }
        }
        stop(framework);
        System.out.println("stopped");
    }

    /** Stops the framework: every bundle's components deactivate, devices close durable. */
    static void stop(Framework framework) throws BundleException, InterruptedException {
        framework.stop();
        if (framework.waitForStop(TimeUnit.SECONDS.toMillis(120)).getType() == org.osgi.framework.FrameworkEvent.WAIT_TIMEDOUT) {
            throw new IllegalStateException("the framework did not stop within 120 s");
        }
    }

    /**
     * The bundles this application needs, by symbolic name, from the distribution's bundle
     * directory. Not installed: dev.strata.api and slf4j (the host provides them, see
     * {@link HostFramework}), SPI Fly and ASM (slf4j finds its provider on the host's class
     * path), logback (the host's logging), FileInstall, Gogo's consoles and Strata's console.
     */
    static List<Path> bundleJars(Path dir) throws IOException {
        List<String> wanted = List.of("org.osgi.util.function", "org.osgi.util.promise", "org.osgi.service.component",
                "org.apache.felix.scr", "org.apache.felix.configadmin", "org.apache.felix.gogo.runtime",
                "org.apache.felix.gogo.command", "dev.strata.core", "dev.strata.driver.file", "dev.strata.driver.direct",
                "dev.strata.driver.memory", "dev.strata.nbd", "dev.strata.daemons", "dev.strata.cache.writeboost",
                "dev.strata.cache.commands");
        List<Path> out = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            for (Path jar : s.filter(p -> p.toString().endsWith(".jar")).sorted().toList()) {
                if (wanted.contains(HostFramework.symbolicName(jar))) {
                    out.add(jar);
                }
            }
        }
        if (out.size() != wanted.size()) {
            throw new IllegalStateException(dir + " holds " + out.size() + " of the " + wanted.size() + " bundles needed: " + wanted);
        }
        return out;
    }
}
