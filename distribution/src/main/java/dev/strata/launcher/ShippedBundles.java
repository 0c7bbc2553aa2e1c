package dev.strata.launcher;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;

import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleEvent;
import org.osgi.framework.BundleException;
import org.osgi.framework.BundleListener;
import org.osgi.framework.startlevel.BundleStartLevel;

/**
 * Keeps the bundles shipped in {@code bundle/} installed while Strata runs.
 *
 * <p>FileInstall takes a jar dropped into {@code deploy/} with the symbolic name and version of an
 * installed bundle as an update of that bundle, and when the jar is deleted it uninstalls that
 * bundle: the <em>shipped</em> one, so its target type vanished for good. Deleting the jar must
 * undo only what {@code deploy/} did. So when a shipped bundle is uninstalled while the framework
 * runs, it is installed again from its jar in {@code bundle/}, at its start level, and started:
 * the devices of its type, which waited while it was gone, come back on the shipped version.
 * ({@code uninstall ID} typed in the shell ends the same way; stop a bundle to keep it out.)
 */
final class ShippedBundles implements BundleListener {

    private static final Logger LOG = Logger.getLogger(ShippedBundles.class.getName());

    private record Shipped(Path jar, int startLevel, boolean start) {
    }

    private final BundleContext context;
    private final BooleanSupplier stopping;
    private final Map<String, Shipped> byLocation = new ConcurrentHashMap<>();
    /** One thread: reinstalls never run inside FileInstall's own uninstall call. */
    private final ExecutorService worker = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "strata-shipped-bundles");
        t.setDaemon(true);
        return t;
    });

    ShippedBundles(BundleContext context, BooleanSupplier stopping) {
        this.context = context;
        this.stopping = stopping;
        context.addBundleListener(this);
    }

    void add(Bundle bundle, Path jar, int startLevel, boolean start) {
        byLocation.put(bundle.getLocation(), new Shipped(jar, startLevel, start));
    }

    @Override
    public void bundleChanged(BundleEvent event) {
        if (event.getType() != BundleEvent.UNINSTALLED || stopping.getAsBoolean()) {
            return;
        }
        String location = event.getBundle().getLocation();
        Shipped shipped = byLocation.get(location);
        if (shipped != null) {
            worker.execute(() -> reinstall(location, shipped));
        }
    }

    private void reinstall(String location, Shipped shipped) {
        if (stopping.getAsBoolean() || !Files.isRegularFile(shipped.jar()) || context.getBundle(location) != null) {
            return;
        }
        try (InputStream in = Files.newInputStream(shipped.jar())) {
            Bundle b = context.installBundle(location, in);
            b.adapt(BundleStartLevel.class).setStartLevel(shipped.startLevel());
            if (shipped.start()) {
                b.start();
            }
            LOG.info(() -> "reinstalled the shipped " + b.getSymbolicName() + " " + b.getVersion() + " from " + shipped.jar()
                    + " (its deploy/ copy was removed)");
        } catch (IOException | BundleException | IllegalStateException e) {
            if (!stopping.getAsBoolean()) {
                LOG.log(Level.WARNING, "cannot reinstall " + shipped.jar() + ": " + Main.describe(e));
            }
        }
    }

    void close() {
        try {
            context.removeBundleListener(this);
        } catch (IllegalStateException ignored) {
            // framework already stopped
        }
        worker.shutdownNow();
    }
}
