package dev.strata.core.internal.config;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Set;
import java.util.UUID;

/**
 * Replaces or deletes a file so that no reader ever sees it partly written: the new content goes
 * into a temporary file in the same directory (a hidden name, {@code .NAME.UUID.strata-tmp}, which
 * the distribution's {@code felix.fileinstall.filter} makes FileInstall skip), is forced to disk,
 * renamed over the file (atomic on one file system: a reader opens either the old file or the new
 * one, whole), and the directory is forced so that the rename itself survives a crash. A failure
 * leaves the file as it was and no temporary file behind, and is reported as one line.
 */
final class AtomicFile {
    static final String TMP_SUFFIX = ".strata-tmp";

    private AtomicFile() {
    }

    /** What a file was when it was read (its inode, time and size): it is replaced only while it still is that. */
    record Seen(Object key, FileTime modified, long size) {
    }

    /** What {@code file} (followed if a link) is now; null if it does not exist. */
    static Seen seen(Path file) throws IOException {
        try {
            BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
            return new Seen(a.fileKey(), a.lastModifiedTime(), a.size());
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    /**
     * Replaces {@code file}'s content with {@code content} (keeping its permissions), if it is
     * still what {@code expected} says when the new file is ready: a file deleted or changed
     * meanwhile (a user's {@code rm}, an editor's save) is left as it is, and not created again by
     * the rename. The check and the rename are not one step; what is left between them is a few
     * system calls, no I/O wait. A symbolic link stays one: the file it points to is replaced.
     */
    static void write(Path link, byte[] content, Seen expected) throws IOException {
        Path file = Files.isSymbolicLink(link) ? link.toRealPath() : link;
        Path dir = file.toAbsolutePath().getParent();
        Path tmp = dir.resolve("." + file.getFileName() + "." + UUID.randomUUID() + TMP_SUFFIX);
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                ByteBuffer b = ByteBuffer.wrap(content);
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                ch.force(true);
            }
            keepPermissions(file, tmp);
            if (!java.util.Objects.equals(expected, seen(file))) {
                throw new java.nio.file.FileSystemException(file.toString(), null,
                        "it was changed or deleted while it was being written (by someone else)");
            }
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException ignored) {
                // the directory refused the temporary file too: nothing of ours is there
            }
            throw new IOException("cannot write " + file + ": " + reason(e, dir) + "; the file is unchanged", e);
        }
        forceDirectory(dir);
    }

    /** Deletes {@code file} (nothing if it is not there), durably. */
    static void delete(Path file) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        try {
            if (!Files.deleteIfExists(file)) {
                return;
            }
        } catch (IOException e) {
            throw new IOException("cannot delete " + file + ": " + reason(e, dir) + "; the file is unchanged", e);
        }
        forceDirectory(dir);
    }

    /** Deletes the temporary files a crash in {@link #write} left in {@code dir}. */
    static void removeLeftovers(Path dir) {
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir, ".*" + TMP_SUFFIX)) {
            for (Path p : s) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            // not there or not writable: nothing to clean, or nothing we may clean
        }
    }

    private static void keepPermissions(Path file, Path tmp) throws IOException {
        PosixFileAttributeView view = Files.getFileAttributeView(file, PosixFileAttributeView.class);
        if (view == null) {
            return;
        }
        Set<PosixFilePermission> perms;
        try {
            perms = view.readAttributes().permissions();
        } catch (NoSuchFileException e) {
            return; // a new file: the process's default
        }
        Files.setPosixFilePermissions(tmp, perms);
    }

    /** The rename (or unlink) is durable only once the directory is. */
    private static void forceDirectory(Path dir) {
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException e) {
            // a platform that cannot open a directory (not Linux): the rename is done and visible
        }
    }

    private static String reason(IOException e, Path dir) {
        String m = String.valueOf(e.getMessage());
        if (m.contains("No space left")) {
            return "no space left on the file system of " + dir;
        }
        if (m.contains("Read-only file system")) {
            return dir + " is on a read-only file system";
        }
        if (e instanceof AccessDeniedException) {
            return "permission denied in " + dir;
        }
        if (e instanceof FileSystemException f && f.getReason() != null) {
            return f.getReason();
        }
        return m;
    }
}
