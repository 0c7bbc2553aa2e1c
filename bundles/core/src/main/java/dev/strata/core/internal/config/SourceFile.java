package dev.strata.core.internal.config;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Optional;

/**
 * Whether the file a configuration was made from (FileInstall's {@code felix.fileinstall.filename},
 * a {@code file:} URL) still exists. A distribution directory that was moved still has the file,
 * under the same name in the watched directory: that counts as there, so moving Strata never
 * drops its devices.
 */
final class SourceFile {
    /** The framework property naming FileInstall's watched directory. */
    static final String WATCHED_DIR = "felix.fileinstall.dir";

    private SourceFile() {
    }

    /**
     * The file's name if {@code url} names a file that exists neither where it was nor under its
     * name in {@code watchedDir} (null: none); empty if it exists, or if {@code url} is null or
     * not a {@code file:} URL (not made from a file, or not one we can check: kept).
     */
    static Optional<String> gone(String url, String watchedDir) {
        if (url == null || url.isBlank()) {
            return Optional.empty();
        }
        Path file;
        try {
            URI uri = URI.create(url.trim());
            if (!"file".equalsIgnoreCase(uri.getScheme())) {
                return Optional.empty();
            }
            file = Paths.get(uri);
        } catch (IllegalArgumentException | java.nio.file.FileSystemNotFoundException e) {
            return Optional.empty();
        }
        if (Files.exists(file)) {
            return Optional.empty();
        }
        Path name = file.getFileName();
        if (name == null) {
            return Optional.empty();
        }
        if (watchedDir != null && !watchedDir.isBlank() && Files.exists(Paths.get(watchedDir.trim()).resolve(name.toString()))) {
            return Optional.empty();
        }
        return Optional.of(name.toString());
    }
}
