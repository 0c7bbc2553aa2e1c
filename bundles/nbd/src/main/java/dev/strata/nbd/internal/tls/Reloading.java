package dev.strata.nbd.internal.tls;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Credentials re-read when their files change, so renewed certificates or keys take effect
 * without restarting the export. Checked at each handshake (a few {@code stat}s, cheap next to
 * the handshake): a connection already open keeps the session it negotiated, the next one uses
 * the new files. Files that do not load (half written, a key without its certificate) leave the
 * old credentials in use and are logged once until they change again.
 *
 * @param <T> what the files make
 */
final class Reloading<T> {
    private static final Logger LOG = LoggerFactory.getLogger(Reloading.class);

    private final T first;
    private final List<Path> files;
    private final Supplier<T> loader;
    private final String what;
    private T current;
    private String stamp;
    private String failedStamp;

    Reloading(T first, List<Path> files, Supplier<T> loader, String what) {
        this.first = first;
        this.files = List.copyOf(files);
        this.loader = loader;
        this.what = what;
        this.current = first;
        this.stamp = stamp();
    }

    /** What was loaded when the export started (its identity for sharing a port). */
    T first() {
        return first;
    }

    synchronized T get() {
        String now = stamp();
        if (now.equals(stamp) || now.equals(failedStamp)) {
            return current;
        }
        try {
            current = loader.get();
            stamp = now;
            failedStamp = null;
            LOG.info("{} changed: reloaded; new connections use them, open ones keep theirs", what);
        } catch (RuntimeException e) {
            failedStamp = now;
            LOG.warn("{} changed but cannot be used, so the previous ones stay in use: {}", what, e.getMessage());
        }
        return current;
    }

    /** Modification time, size and file identity of each file (a rename over it changes the identity). */
    private String stamp() {
        StringBuilder s = new StringBuilder();
        for (Path p : files) {
            try {
                BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class);
                s.append(a.lastModifiedTime()).append('/')
                        .append(a.size()).append('/').append(a.fileKey()).append(';');
            } catch (IOException e) {
                s.append("missing;");
            }
        }
        return s.toString();
    }
}
