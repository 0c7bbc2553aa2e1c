package dev.strata.nbd.internal.tls;

import dev.strata.api.InvalidArgumentException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * TLS-PSK keys in the file format {@code psktool} (gnutls-bin) writes and qemu, nbdkit and libnbd
 * read: one {@code username:hexkey} line per user. A directory stands for its {@code keys.psk},
 * as qemu's {@code tls-creds-psk,dir=DIR} reads it. The server admits exactly the users in the
 * file, each with its own key; a client takes its user's line.
 */
public final class PskKeys {
    /** The file name qemu's tls-creds-psk looks for in its directory. */
    public static final String FILE = "keys.psk";

    private final Path file;
    private final Map<String, byte[]> keys;

    private PskKeys(Path file, Map<String, byte[]> keys) {
        this.file = file;
        this.keys = keys;
    }

    /**
     * Reads a key file (or {@code DIR/keys.psk}).
     *
     * @throws InvalidArgumentException one line naming the file (and line) and what to do
     */
    public static PskKeys load(Path path) {
        Path file = path != null && Files.isDirectory(path) ? path.resolve(FILE) : path;
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new InvalidArgumentException("TLS-PSK: " + file + " does not exist; make one with"
                    + " psktool -u USER -p " + (file == null ? "keys.psk" : file.getFileName()));
        } catch (IOException | RuntimeException e) {
            throw new InvalidArgumentException("TLS-PSK: cannot read " + file + ": " + e.getMessage());
        }
        Map<String, byte[]> keys = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty()) {
                continue;
            }
            int colon = line.lastIndexOf(':');
            String user = colon < 0 ? "" : line.substring(0, colon);
            byte[] key = colon < 0 ? null : hex(line.substring(colon + 1));
            if (user.isEmpty() || key == null || key.length == 0) {
                throw new InvalidArgumentException("TLS-PSK: " + file + " line " + (i + 1)
                        + " is not username:hexkey; make the file with psktool -u USER -p " + file.getFileName());
            }
            if (keys.putIfAbsent(user, key) != null) {
                throw new InvalidArgumentException("TLS-PSK: " + file + " line " + (i + 1) + " repeats user '"
                        + user + "'; keep one key per user");
            }
        }
        if (keys.isEmpty()) {
            throw new InvalidArgumentException("TLS-PSK: " + file + " holds no key; add one with psktool -u USER -p "
                    + file.getFileName());
        }
        return new PskKeys(file, Map.copyOf(keys));
    }

    private static byte[] hex(String s) {
        try {
            return HexFormat.of().parseHex(s.strip());
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** The key file read (the directory's keys.psk when a directory was given). */
    public Path file() {
        return file;
    }

    /** A copy of the user's key, or null if the user is not in the file. */
    public byte[] key(String user) {
        byte[] k = keys.get(user);
        return k == null ? null : k.clone();
    }

    /** The user's key for a client; refused with one line when the file has no such user. */
    public byte[] clientKey(String user) {
        byte[] k = key(user);
        if (k == null) {
            throw new InvalidArgumentException("TLS-PSK: " + file + " has no key for user '" + user
                    + "'; give the user with tls-username= (or user@ in the URI) or add it with psktool -u " + user);
        }
        return k;
    }

    public int size() {
        return keys.size();
    }

    @Override
    public String toString() {
        return file + " (" + keys.size() + (keys.size() == 1 ? " user)" : " users)");
    }
}
