package dev.strata.nbd.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * TLS-PSK key files made with {@code psktool} (gnutls-bin) for the tests, in qemu's
 * {@code tls-creds-psk} layout (a directory holding {@code keys.psk}).
 *
 * @param server   keys.psk with users alice and bob, as the export reads it
 * @param alice    a client directory with alice's line only (what qemu's client endpoint reads)
 * @param wrongKey a client directory with a line for alice whose key is another one
 * @param carol    a client directory for a user the server does not know
 */
public record PskFiles(Path server, Path alice, Path wrongKey, Path carol) {

    public static PskFiles make(Path dir) throws IOException, InterruptedException {
        Tools.require("psktool", "gnutls-bin");
        Path server = Files.createDirectories(dir.resolve("psk-server"));
        Path alice = Files.createDirectories(dir.resolve("psk-alice"));
        Path wrong = Files.createDirectories(dir.resolve("psk-wrong"));
        Path carol = Files.createDirectories(dir.resolve("psk-carol"));
        psk(server, "alice");
        psk(server, "bob");
        String aliceLine = Files.readAllLines(file(server)).stream().filter(l -> l.startsWith("alice:")).findFirst()
                .orElseThrow();
        Files.writeString(file(alice), aliceLine + "\n");
        psk(wrong, "alice");
        psk(carol, "carol");
        return new PskFiles(server, alice, wrong, carol);
    }

    /** Adds (or renews) a user's random key in {@code dir/keys.psk}. */
    public static void psk(Path dir, String user) throws IOException, InterruptedException {
        Tools.ok(dir, "psktool", "-u", user, "-p", file(dir).toString());
    }

    public static Path file(Path dir) {
        return dir.resolve("keys.psk");
    }
}
