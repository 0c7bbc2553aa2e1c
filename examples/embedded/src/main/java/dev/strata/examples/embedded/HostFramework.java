package dev.strata.examples.embedded;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.jar.JarFile;

import org.osgi.framework.Constants;
import org.osgi.framework.launch.Framework;
import org.osgi.framework.launch.FrameworkFactory;

import dev.strata.api.DeviceManager;

/**
 * Creates the framework through the standard launch API ({@link FrameworkFactory} found by the
 * service loader), so the same code runs Felix or Equinox, whichever jar is on the class path.
 *
 * <p>The host and the bundles must see the same {@code dev.strata.api} classes (the host calls
 * {@link DeviceManager} itself) and the same slf4j (Strata logs through the host's logging), so
 * the system bundle exports both packages from the host's class path, with the versions their
 * jars' own {@code Export-Package} headers give.
 */
final class HostFramework {
    private HostFramework() {
    }

    static Framework create(Path storage) throws IOException {
        Map<String, String> config = new HashMap<>();
        config.put(Constants.FRAMEWORK_STORAGE, storage.toString());
        // the storage is kept across runs: Configuration Admin's store in it holds the device
        // definitions, whose identities the writeboost cache checks against its backing device
        // com.sun.nio.file: the direct (O_DIRECT) driver's ExtendedOpenOption
        config.put(Constants.FRAMEWORK_SYSTEMPACKAGES_EXTRA, String.join(",",
                exportsOf(DeviceManager.class), exportsOf(org.slf4j.Logger.class), "com.sun.nio.file"));
        Iterator<FrameworkFactory> factories = ServiceLoader.load(FrameworkFactory.class).iterator();
        if (!factories.hasNext()) {
            throw new IllegalStateException("no OSGi framework on the class path (add Felix's or Equinox's jar)");
        }
        return factories.next().newFramework(config);
    }

    /** The Export-Package header of the jar {@code type} was loaded from. */
    static String exportsOf(Class<?> type) throws IOException {
        Path jar;
        try {
            jar = Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IOException(e);
        }
        try (JarFile jf = new JarFile(jar.toFile())) {
            String exports = jf.getManifest().getMainAttributes().getValue(Constants.EXPORT_PACKAGE);
            if (exports == null) {
                throw new IllegalStateException(jar + " exports no package: put the bundle jar of " + type.getPackageName() + " on the class path");
            }
            return exports;
        }
    }

    static String symbolicName(Path jar) throws IOException {
        try (JarFile jf = new JarFile(jar.toFile())) {
            String bsn = jf.getManifest().getMainAttributes().getValue(Constants.BUNDLE_SYMBOLICNAME);
            if (bsn == null) {
                return "";
            }
            int semi = bsn.indexOf(';');
            return (semi < 0 ? bsn : bsn.substring(0, semi)).trim();
        }
    }
}
