package dev.strata.nbd.internal.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.InvalidArgumentException;
import dev.strata.nbd.internal.session.TlsMode;
import dev.strata.nbd.internal.tls.TlsConfig;
import dev.strata.nbd.internal.tls.TlsCredentials;
import dev.strata.nbd.testing.Certs;
import dev.strata.nbd.testing.MemoryDevice;
import dev.strata.nbd.testing.Tools;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Exports on a socket someone else bound, as socket activation hands one over (here the test
 * binds it, as systemd or libnbd would): real clients over Unix and TCP, TLS over TCP, the socket
 * surviving its last export (it cannot be made again), and never removing the socket file.
 */
class InheritedListenerTest {
    static final int SIZE = 4 << 20;
    @TempDir
    Path tmp;
    NbdServer server;
    ServerSocketChannel inherited;

    @BeforeEach
    void start() {
        Tools.require("nbdinfo", "libnbd-bin");
        server = new NbdServer();
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
        if (inherited != null) {
            inherited.close();
        }
    }

    private ServerSocketChannel unixSocket(Path path) throws Exception {
        ServerSocketChannel ch = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        ch.bind(UnixDomainSocketAddress.of(path));
        return ch;
    }

    private static String size(String uri) throws Exception {
        return Tools.ok(null, "nbdinfo", "--size", uri).strip();
    }

    @Test
    void aUnixSocketOutlivesItsLastExportAndItsFileIsLeftToItsOwner() throws Exception {
        Path sock = tmp.resolve("activation.sock");
        inherited = unixSocket(sock);
        Export a = server.addInheritedExport("a", "device a", new MemoryDevice(SIZE), inherited, false, TlsConfig.OFF,
                ExportLimits.NONE);
        assertTrue(a.inherited());
        assertEquals(sock, a.unixPath());
        // the empty name picks the only export, as libnbd's nbd_connect_systemd_socket_activation asks
        assertEquals(Integer.toString(SIZE), size("nbd+unix:///?socket=" + sock));

        assertTrue(server.removeExport("a", 10_000));
        assertTrue(inherited.isOpen(), "the inherited socket stays open without exports");
        Tools.Result none = Tools.run(null, "nbdinfo", "--size", "nbd+unix:///a?socket=" + sock);
        assertNotEquals(0, none.exit(), "no export left: refused, not hung: " + none.output());

        server.addInheritedExport("b", "device b", new MemoryDevice(2 * SIZE), inherited, true, TlsConfig.OFF,
                ExportLimits.NONE);
        assertEquals(Integer.toString(2 * SIZE), size("nbd+unix:///b?socket=" + sock));

        server.close();
        assertFalse(inherited.isOpen(), "closed with the server");
        assertTrue(Files.exists(sock), "the socket file belongs to whoever bound it (libnbd removes its own)");
    }

    @Test
    void tcpWithAndWithoutTls() throws Exception {
        inherited = ServerSocketChannel.open();
        inherited.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        int port = ((InetSocketAddress) inherited.getLocalAddress()).getPort();
        Export e = server.addInheritedExport("t", "device t", new MemoryDevice(SIZE), inherited, false, TlsConfig.OFF,
                ExportLimits.NONE);
        assertEquals(port, e.port());
        assertEquals(Integer.toString(SIZE), size("nbd://127.0.0.1:" + port + "/t"));

        Certs certs = Certs.make(tmp.resolve("certs"));
        TlsConfig tls = new TlsConfig(TlsMode.REQUIRE, TlsCredentials.load(certs.server()));
        InvalidArgumentException mixed = assertThrows(InvalidArgumentException.class, () -> server.addInheritedExport(
                "t2", "device t2", new MemoryDevice(SIZE), inherited, false, tls, ExportLimits.NONE));
        assertTrue(mixed.getMessage().startsWith("the inherited socket already serves exports with TLS off"), mixed.getMessage());

        // once its exports are gone, the socket takes the TLS setting of the next one
        server.removeExport("t", 10_000);
        server.addInheritedExport("s", "device s", new MemoryDevice(SIZE), inherited, false, tls, ExportLimits.NONE);
        assertEquals(Integer.toString(SIZE), size("nbds://127.0.0.1:" + port + "/s?tls-certificates=" + certs.client()));
        Tools.Result plain = Tools.run(null, "nbdinfo", "--size", "nbd://127.0.0.1:" + port + "/s");
        assertNotEquals(0, plain.exit(), "TLS required: " + plain.output());
    }

    @Test
    void tlsOnAnInheritedUnixSocketIsRefusedWithOneLine() throws Exception {
        inherited = unixSocket(tmp.resolve("tls.sock"));
        Certs certs = Certs.make(tmp.resolve("certs"));
        TlsConfig tls = new TlsConfig(TlsMode.REQUIRE, TlsCredentials.load(certs.server()));
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> server.addInheritedExport(
                "u", "device u", new MemoryDevice(SIZE), inherited, false, tls, ExportLimits.NONE));
        assertEquals("TLS is not supported on the inherited Unix socket; let the socket file's mode say who may"
                + " connect, or give the .socket unit a TCP ListenStream= for TLS", e.getMessage());
        assertTrue(server.exports().isEmpty(), "nothing started");
    }
}
