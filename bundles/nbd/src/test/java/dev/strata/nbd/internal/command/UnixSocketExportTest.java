package dev.strata.nbd.internal.command;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.InvalidArgumentException;
import dev.strata.nbd.internal.client.NbdTarget;
import dev.strata.nbd.internal.client.NbdUri;
import dev.strata.nbd.internal.server.Export;
import dev.strata.nbd.internal.server.NbdServer;
import dev.strata.nbd.internal.session.TlsMode;
import dev.strata.nbd.testing.MemoryDevice;
import dev.strata.nbd.testing.SimpleDeviceManager;
import dev.strata.nbd.testing.Tools;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code nbd:export --unix}: real clients over the socket, the nbd target importing it, stale and bad paths. */
class UnixSocketExportTest {
    static final int SIZE = 8 << 20;
    @TempDir
    Path tmp;
    final SimpleDeviceManager devices = new SimpleDeviceManager();
    final MemoryExportStore store = new MemoryExportStore();
    final Map<String, ExportSpec> stored = store.stored;
    final MemoryDevice disk = new MemoryDevice(SIZE);
    NbdServer server;
    ExportService service;

    @BeforeEach
    void start() {
        devices.add("disk0", disk);
        server = new NbdServer();
        service = new ExportService(devices, store, server, null, 20);
    }

    @AfterEach
    void stop() {
        service.close();
        server.close();
    }

    private Export exportUnix(Path sock, String mode) throws IOException {
        return service.export("disk0", "d", null, ExportSpec.DEFAULT_PORT, false, TlsMode.OFF, "", false, "",
                sock.toString(), mode);
    }

    @Test
    void realClientsOverTheSocketModeAndRemovalOnUnexport() throws Exception {
        Tools.require("nbdinfo", "libnbd-bin");
        Tools.require("qemu-io", "qemu-utils");
        Path sock = tmp.resolve("nbd.sock");
        Export e = exportUnix(sock, "0660");
        assertEquals(sock.toAbsolutePath(), e.unixPath());
        assertEquals("rw-rw----", PosixFilePermissions.toString(Files.getPosixFilePermissions(sock)));
        assertEquals("unix:" + sock, service.status().get(0).get("address"));
        assertEquals(sock.toString(), stored.values().iterator().next().unix());
        String uri = "nbd+unix:///d?socket=" + sock;
        String json = Tools.ok(tmp, "nbdinfo", "--json", uri);
        assertTrue(json.matches("(?s).*\"export-size\":\\s*" + SIZE + "\\b.*"), json);
        String out = Tools.ok(tmp, "qemu-io", "-f", "raw", uri, "-c", "write -P 0x5a 4096 64k", "-c",
                "read -P 0x5a 4096 64k", "-c", "flush");
        assertFalse(out.contains("Pattern verification failed"), out);
        byte[] expect = new byte[65536];
        java.util.Arrays.fill(expect, (byte) 0x5a);
        assertArrayEquals(expect, disk.bytes(4096, 65536), "the write reached the device");
        service.unexport("d");
        assertFalse(Files.exists(sock), "the socket file is removed on unexport");
        assertTrue(devices.holders.isEmpty());
        exportUnix(sock, "");
        assertTrue(Files.exists(sock));
        service.close();
        assertFalse(Files.exists(sock), "and when the service stops");
    }

    @Test
    void theNbdTargetImportsAUnixSocketExport() throws Exception {
        Path sock = tmp.resolve("imp.sock");
        exportUnix(sock, "");
        byte[] data = new byte[1 << 20];
        new Random(7).nextBytes(data);
        NbdUri uri = NbdUri.parse("nbd+unix:///d?socket=" + sock);
        assertEquals(new NbdUri("", 0, "d", sock.toString()), uri);
        try (NbdTarget t = new NbdTarget("remote", uri, 10_000, 2)) {
            assertEquals(SIZE, t.size());
            t.write(1 << 20, ByteBuffer.wrap(data), 0);
            t.flush();
            ByteBuffer back = ByteBuffer.allocate(data.length);
            t.read(1 << 20, back);
            assertArrayEquals(data, back.array());
        }
        assertArrayEquals(data, disk.bytes(1 << 20, data.length));
        assertThrows(InvalidArgumentException.class, () -> NbdUri.parse("nbd+unix:///d"));
        assertThrows(InvalidArgumentException.class, () -> NbdUri.parse("nbd+unix://host/d?socket=/x"));
    }

    @Test
    void aDeadSocketFileIsReplacedALiveOneRefused() throws Exception {
        Path dead = tmp.resolve("dead.sock");
        ServerSocketChannel gone = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        gone.bind(UnixDomainSocketAddress.of(dead));
        gone.close(); // the JDK leaves the file behind, like a crashed server
        assertTrue(Files.exists(dead));
        exportUnix(dead, "");
        try (SocketChannel c = SocketChannel.open(UnixDomainSocketAddress.of(dead))) {
            ByteBuffer greeting = ByteBuffer.allocate(8);
            while (greeting.hasRemaining() && c.read(greeting) >= 0) {
                // read the server's "NBDMAGIC"
            }
            assertEquals("NBDMAGIC", new String(greeting.array(), java.nio.charset.StandardCharsets.US_ASCII));
        }
        service.unexport("d");

        Path live = tmp.resolve("live.sock");
        try (ServerSocketChannel other = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            other.bind(UnixDomainSocketAddress.of(live));
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> exportUnix(live, ""));
            assertTrue(e.getMessage().startsWith("nbd:export: ") && e.getMessage().contains("another server is listening"), e.getMessage());
            assertOneLine(e);
            assertTrue(Files.exists(live), "someone else's socket is left alone");
            try (SocketChannel c = SocketChannel.open(UnixDomainSocketAddress.of(live))) {
                assertTrue(c.isConnected(), "and still works");
            }
        }
        assertTrue(stored.isEmpty());
        assertTrue(devices.holders.isEmpty());
    }

    @Test
    void unexportLeavesASocketThatReplacedOursAlone() throws Exception {
        Path sock = tmp.resolve("r.sock");
        exportUnix(sock, "");
        Files.delete(sock);
        try (ServerSocketChannel other = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            other.bind(UnixDomainSocketAddress.of(sock));
            service.unexport("d");
            assertTrue(Files.exists(sock), "another server's socket at the same path is not ours to remove");
            try (SocketChannel c = SocketChannel.open(UnixDomainSocketAddress.of(sock))) {
                assertTrue(c.isConnected());
            }
        }
    }

    @Test
    void badPathsChangeNothing() throws Exception {
        Path file = tmp.resolve("data.img");
        Files.writeString(file, "precious");
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> exportUnix(file, ""));
        assertTrue(e.getMessage().startsWith("nbd:export: ") && e.getMessage().contains("is not a socket"), e.getMessage());
        assertOneLine(e);
        assertEquals("precious", Files.readString(file), "a file that is not a socket is never deleted");

        Path missing = tmp.resolve("no/such/dir/nbd.sock");
        e = assertThrows(InvalidArgumentException.class, () -> exportUnix(missing, ""));
        assertTrue(e.getMessage().startsWith("nbd:export: ") && e.getMessage().contains("does not exist"), e.getMessage());
        assertOneLine(e);
        assertFalse(Files.exists(tmp.resolve("no")));

        e = assertThrows(InvalidArgumentException.class, () -> exportUnix(tmp.resolve("m.sock"), "0999"));
        assertTrue(e.getMessage().startsWith("nbd:export: ") && e.getMessage().contains("--unix-mode 0999"), e.getMessage());
        e = assertThrows(InvalidArgumentException.class, () -> service.export("disk0", "d", null, 10809, false,
                TlsMode.REQUIRE, tmp.toString(), false, "", tmp.resolve("t.sock").toString(), ""));
        assertTrue(e.getMessage().startsWith("nbd:export: ") && e.getMessage().contains("not supported on a --unix socket"), e.getMessage());
        e = assertThrows(InvalidArgumentException.class, () -> service.export("disk0", "d", "127.0.0.1", 10809, false,
                TlsMode.OFF, "", false, "", tmp.resolve("b.sock").toString(), ""));
        assertTrue(e.getMessage().startsWith("nbd:export: ") && e.getMessage().contains("exclude each other"), e.getMessage());
        assertFalse(Files.exists(tmp.resolve("m.sock")));
        assertTrue(stored.isEmpty());
        assertTrue(server.exports().isEmpty());
        assertTrue(devices.holders.isEmpty());
    }

    @Test
    void aStoredUnixExportRoundTrips() {
        ExportSpec s = new ExportSpec("disk0", "d", "127.0.0.1", 10809, false, TlsMode.OFF, "", false, "",
                "/run/strata/nbd.sock", "0660", 4, 300_000);
        assertEquals(s, ExportSpec.fromProperties(s.toProperties()));
        java.util.Hashtable<String, Object> p = new java.util.Hashtable<>();
        p.put("device", "disk0");
        p.put("max-connections", "8");
        p.put("idle-timeout", "5m");
        ExportSpec f = ExportSpec.fromProperties(p);
        assertEquals(8, f.maxConnections());
        assertEquals(300_000, f.idleTimeoutMillis());
    }

    @Test
    void badLimitsChangeNothing() {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> service.export("disk0", "d",
                null, 10809, false, TlsMode.OFF, "", false, "", "", "", -1, 0));
        assertTrue(e.getMessage().startsWith("nbd:export: ") && e.getMessage().contains("--max-connections -1 is out of range"), e.getMessage());
        assertOneLine(e);
        e = assertThrows(InvalidArgumentException.class, () -> ExportSpec.duration("--idle-timeout", "soon"));
        assertTrue(e.getMessage().startsWith("nbd:export: ") && e.getMessage().contains("--idle-timeout soon is not a duration"), e.getMessage());
        assertOneLine(e);
        assertEquals(600_000, ExportSpec.duration("--idle-timeout", "10m"));
        assertEquals(0, ExportSpec.duration("--idle-timeout", "0"));
        assertTrue(stored.isEmpty());
        assertTrue(server.exports().isEmpty());
        assertTrue(devices.holders.isEmpty());
    }

    private static void assertOneLine(Exception e) {
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
        assertFalse(e.getMessage().contains("Exception"), e.getMessage());
    }
}
