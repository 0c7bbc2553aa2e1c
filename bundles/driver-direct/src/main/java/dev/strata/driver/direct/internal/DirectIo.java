package dev.strata.driver.direct.internal;

/**
 * Whether this framework lets the bundle see {@code com.sun.nio.file} (where
 * {@code ExtendedOpenOption.DIRECT} lives). The package is a JDK one that a framework's system
 * bundle exports only when told to ({@code org.osgi.framework.system.packages.extra}); the bundle
 * imports it optionally so that a container without it (Karaf's default) still resolves the rest
 * of the drivers, and the direct target then refuses with this one line instead.
 */
final class DirectIo {

    static final String UNAVAILABLE = DirectTarget.TYPE + ": O_DIRECT is unavailable in this framework (its system bundle"
            + " does not export com.sun.nio.file: add it to org.osgi.framework.system.packages.extra); use the file target";

    private static final boolean AVAILABLE = probe();

    private DirectIo() {
    }

    static boolean available() {
        return AVAILABLE;
    }

    private static boolean probe() {
        try {
            Class.forName("com.sun.nio.file.ExtendedOpenOption", false, DirectIo.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }
}
