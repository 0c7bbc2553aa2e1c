package dev.strata.driver.support.internal;

import dev.strata.api.InvalidArgumentException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Properties;
import java.util.UUID;

/**
 * One image file backs at most one device in this JVM: a device opening a file claims it (keyed
 * by the file's identity, dev+inode where the file system has one, so a symlink, a hard link or
 * another spelling of the path is the same file), and its close releases the claim. A second
 * device over a claimed file is refused in one line naming the holder, before anything changes.
 *
 * <p><b>Why the claims live in the system properties.</b> This package is embedded privately in
 * each driver bundle (DESIGN.md §1, §13), so a static map here would be one map per driver and per
 * driver version: a {@code file} and a {@code direct} device over one image, or an old and a new
 * version of one driver during a hot update, would not see each other. The system properties are
 * the one mutable map every class loader of the JVM shares; {@code putIfAbsent} on it is atomic.
 * Each claim's value carries a token of its own, so only its holder can release it.
 *
 * <p>Across processes nothing is locked (see the driver READMEs, "One image file, one device"):
 * the mirror's cluster mode opens its leg files from several processes on purpose.
 */
public final class ImageClaims {
    static final String PREFIX = "dev.strata.image-claim.";
    private static final char SEP = '\n';

    private ImageClaims() {
    }

    /** A held claim; {@link #release()} is idempotent. */
    public static final class Claim {
        private final String key;
        private final String value;
        private volatile boolean released;

        private Claim(String key, String value) {
            this.key = key;
            this.value = value;
        }

        public void release() {
            if (!released) {
                released = true;
                System.getProperties().remove(key, value);
            }
        }
    }

    /**
     * Claims the existing file {@code path} for {@code device}.
     *
     * @throws InvalidArgumentException (one line, {@code type: …}) if another device holds it
     */
    public static Claim claim(String type, String device, Path path) {
        String key = PREFIX + identity(path);
        String value = (device == null ? "" : device) + SEP + UUID.randomUUID();
        // Made before the put: while this bundle is being refreshed any class load may fail
        // (NoClassDefFoundError), and nothing may fail between the put and the caller's handle.
        Claim claim = new Claim(key, value);
        Properties props = System.getProperties();
        Object held = props.putIfAbsent(key, value);
        if (held != null) {
            String holder = held.toString();
            int sep = holder.indexOf(SEP);
            String name = sep < 0 ? holder : holder.substring(0, sep);
            throw new InvalidArgumentException(type + ": " + path + " is already open as "
                    + (name.isEmpty() ? "a device" : "device '" + name + "'")
                    + "; one image file can back one device");
        }
        return claim;
    }

    /** dev+inode where the file system has them, else the real path (links resolved). */
    static String identity(Path given) {
        Path path = given.toAbsolutePath().normalize(); // as FileSpec spells it
        try {
            Object key = Files.readAttributes(path, BasicFileAttributes.class).fileKey();
            if (key != null) {
                return key.toString();
            }
            return path.toRealPath().toString();
        } catch (IOException e) {
            return path.toString();
        }
    }
}
