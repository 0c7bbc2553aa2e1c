package dev.strata.nbd.internal.server;

import dev.strata.api.InvalidArgumentException;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * The file of a Unix-domain listening socket: binding it safely and removing it again.
 *
 * <p>A socket file left by a process that died would make every later bind fail, so a dead one
 * is replaced; but a live one (something answers a connect) belongs to someone else and is
 * refused, and anything that is not a socket is never touched.
 */
final class UnixSocketFile {
    /** S_IFMT and S_IFSOCK from stat(2). */
    private static final int S_IFMT = 0170000;
    private static final int S_IFSOCK = 0140000;

    private UnixSocketFile() {
    }

    /** Parses a mode such as {@code 0660} (octal); null or empty: the umask decides. */
    static Set<PosixFilePermission> parseMode(String mode) {
        if (mode == null || mode.isBlank()) {
            return null;
        }
        int m;
        try {
            m = Integer.parseInt(mode.trim(), 8);
        } catch (NumberFormatException e) {
            m = -1;
        }
        if (m < 0 || m > 0777) {
            throw new InvalidArgumentException("nbd:export: --unix-mode " + mode + " is not a file mode; use octal digits such as 0660");
        }
        StringBuilder s = new StringBuilder();
        String rwx = "rwx";
        for (int bit = 8; bit >= 0; bit--) {
            s.append((m & (1 << bit)) != 0 ? rwx.charAt(2 - bit % 3) : '-');
        }
        return PosixFilePermissions.fromString(s.toString());
    }

    /**
     * Binds a listening socket at {@code path}.
     *
     * @throws InvalidArgumentException when the directory is missing, the path is not a socket,
     *         or a live socket is there; nothing on disk is changed then
     */
    static ServerSocketChannel bind(Path path, Set<PosixFilePermission> mode, int backlog) throws IOException {
        Path dir = path.toAbsolutePath().getParent();
        if (dir == null || !Files.isDirectory(dir)) {
            throw new InvalidArgumentException("nbd:export: --unix " + path + ": directory " + dir
                    + " does not exist; create it or choose another path");
        }
        if (Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
            if (!isSocket(path)) {
                throw new InvalidArgumentException("nbd:export: --unix " + path
                        + " exists and is not a socket; it is left alone: choose another path");
            }
            if (isLive(path)) {
                throw new InvalidArgumentException("nbd:export: --unix " + path
                        + " is a socket another server is listening on; choose another path");
            }
            // nobody listens: the remains of a server that did not clean up
            Files.delete(path);
        }
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            server.bind(UnixDomainSocketAddress.of(path), backlog);
        } catch (IOException e) {
            server.close();
            throw new InvalidArgumentException("nbd:export: cannot listen on " + path + ": " + e.getMessage()
                    + "; choose another --unix path");
        }
        if (mode != null) {
            try {
                Files.setPosixFilePermissions(path, mode);
            } catch (IOException | UnsupportedOperationException e) {
                server.close();
                Files.deleteIfExists(path);
                throw new InvalidArgumentException("nbd:export: cannot set mode of " + path + ": " + e.getMessage());
            }
        }
        return server;
    }

    /** The identity (device and inode) of the file at {@code path}, or null if unknown. */
    static Object fileKey(Path path) {
        try {
            return Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * Removes the socket file if it is still the one bound ({@code key} from {@link #fileKey}):
     * another server may have replaced it meanwhile, and its socket is not ours to delete.
     */
    static void remove(Path path, Object key) {
        try {
            if (isSocket(path) && (key == null || key.equals(fileKey(path)))) {
                Files.delete(path);
            }
        } catch (IOException e) {
            // gone already, or not ours to remove: either way nothing to do
        }
    }

    static boolean isSocket(Path path) throws IOException {
        try {
            Object mode = Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS);
            return ((Integer) mode & S_IFMT) == S_IFSOCK;
        } catch (UnsupportedOperationException | IllegalArgumentException e) {
            // no "unix" view: "other" is the closest the basic view gets
            BasicFileAttributes a = Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            return a.isOther();
        }
    }

    private static boolean isLive(Path path) {
        try (SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            c.connect(UnixDomainSocketAddress.of(path));
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
