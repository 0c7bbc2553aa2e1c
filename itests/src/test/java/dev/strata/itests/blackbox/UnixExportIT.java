package dev.strata.itests.blackbox;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * {@code nbd:export --unix PATH --unix-mode 0600} (with limits given) typed into a running
 * {@code bin/strata --daemon}: nbdinfo and qemu-io use {@code nbd+unix://}; the socket file has
 * the mode asked for and is gone after the daemon stops.
 */
public class UnixExportIT {
    private static final long MiB = 1L << 20;
    private static Strata strata;
    private static Strata.Daemon daemon;
    private static Path sock;

    @BeforeClass
    public static void start() throws Exception {
        strata = Strata.copy("unix-export");
        // a short path: Unix socket paths are limited to ~107 bytes, the work directory may be longer
        sock = Files.createTempDirectory("strata-it").resolve("m0.sock");
        daemon = strata.daemon("--no-default-stack", "-c", String.join("; ",
                "dev:create m0 memory size=16M",
                "nbd:export m0 --unix " + sock + " --unix-mode 0600 --max-connections 4 --idle-timeout 10m"));
        Strata.poll("the socket " + sock + " exists", Strata.START_SECONDS, () -> Files.exists(sock), daemon::diagnostics);
    }

    @AfterClass
    public static void stop() throws Exception {
        if (daemon != null) {
            try {
                assertEquals("clean stop on SIGTERM" + daemon.diagnostics(), 0, daemon.stop());
                assertFalse("the socket file is removed when strata stops", Files.exists(sock));
            } finally {
                daemon.close();
                Files.deleteIfExists(sock);
                Files.deleteIfExists(sock.getParent());
            }
        }
    }

    private static String uri() {
        return "nbd+unix:///m0?socket=" + sock;
    }

    @Test
    public void realClientsUseTheSocket() throws Exception {
        Clients.Out o = Clients.run(strata.work, "nbdinfo", "--json", uri()).ok();
        assertEquals(o.toString(), 16 * MiB, Clients.number(o.text(), "export-size", o));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(sock)));
        Clients.Out q = Clients.run(strata.work, "qemu-io", "-f", "raw", uri(), "-c", "write -P 0x61 1M 256k", "-c",
                "read -P 0x61 1M 256k").ok();
        assertFalse(q.toString(), q.text().contains("verification failed"));
    }
}
