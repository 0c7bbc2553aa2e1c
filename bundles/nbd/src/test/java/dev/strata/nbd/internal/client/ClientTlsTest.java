package dev.strata.nbd.internal.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.DeviceIOException;
import dev.strata.api.InvalidArgumentException;
import dev.strata.nbd.internal.server.NbdServer;
import dev.strata.nbd.internal.session.TlsMode;
import dev.strata.nbd.internal.tls.ClientAllowList;
import dev.strata.nbd.internal.tls.PskKeys;
import dev.strata.nbd.internal.tls.TlsConfig;
import dev.strata.nbd.internal.tls.TlsCredentials;
import dev.strata.nbd.testing.Certs;
import dev.strata.nbd.testing.MemoryDevice;
import dev.strata.nbd.testing.Nbdkit;
import dev.strata.nbd.testing.PskFiles;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code nbd} target over TLS: importing a Strata export and an {@code nbdkit --tls=require}
 * export, with X.509 and with PSK, data checked byte for byte; servers it must not trust refused
 * with one line; {@code tls=require} never falling back to plaintext.
 */
class ClientTlsTest {
    static final long SIZE = 4L << 20;
    @TempDir
    static Path credDir;
    static Certs certs;
    static PskFiles psk;
    @TempDir
    Path tmp;
    NbdServer server;
    MemoryDevice device;

    @BeforeAll
    static void makeCredentials() throws Exception {
        certs = Certs.make(credDir);
        psk = PskFiles.make(credDir);
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    private int serve(TlsConfig tls) throws IOException {
        server = new NbdServer();
        device = new MemoryDevice(SIZE);
        return server.addExport("disk", "", device, new InetSocketAddress("127.0.0.1", 0), false, tls).port();
    }

    static NbdTarget target(String... kv) throws IOException {
        Map<String, String> args = new HashMap<>();
        args.put("timeout", "10s");
        for (int i = 0; i < kv.length; i += 2) {
            args.put(kv[i], kv[i + 1]);
        }
        NbdTargetFactory.Parsed p = NbdTargetFactory.parse(args);
        return new NbdTarget("remote", p.uri(), p.timeoutMillis(), p.connections(), p.tls());
    }

    /** Writes random data through the target and reads it back; returns what was written. */
    static byte[] roundTrip(NbdTarget t, long offset, int seed) throws IOException {
        byte[] data = new byte[256 << 10];
        new Random(seed).nextBytes(data);
        t.write(offset, ByteBuffer.wrap(data), 0);
        t.flush();
        ByteBuffer back = ByteBuffer.allocate(data.length);
        t.read(offset, back);
        assertArrayEquals(data, back.array(), "read back what was written over TLS");
        return data;
    }

    /** The one-line reason a target could not connect. */
    static String refusal(String... kv) {
        DeviceIOException e = assertThrows(DeviceIOException.class, () -> target(kv).close());
        assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
        assertFalse(e.getMessage().contains("Exception"), "no exception class names: " + e.getMessage());
        return e.getMessage();
    }

    @Test
    void importsAStrataX509ExportOverNbds() throws Exception {
        int port = serve(new TlsConfig(TlsMode.REQUIRE, TlsCredentials.load(certs.server())));
        try (NbdTarget t = target("uri", "nbds://127.0.0.1:" + port + "/disk", "tls-creds", certs.client().toString(),
                "connections", "2")) {
            byte[] data = roundTrip(t, 8192, 1);
            assertArrayEquals(data, device.bytes(8192, data.length), "the export's device holds the data");
            assertTrue(t.status().get("tls").startsWith("require (X.509"), t.status().toString());
            assertEquals("nbds://127.0.0.1:" + port + "/disk", t.status().get("uri"));
        }
    }

    @Test
    void libnbdStyleUriParametersWorkToo() throws Exception {
        int port = serve(new TlsConfig(TlsMode.REQUIRE, TlsCredentials.load(certs.server())));
        try (NbdTarget t = target("uri", "nbds://localhost:" + port + "/disk?tls-certificates=" + certs.client())) {
            roundTrip(t, 0, 2);
        }
        stop();
        int pskPort = serve(TlsConfig.psk(TlsMode.REQUIRE, PskKeys.load(psk.server())));
        try (NbdTarget t = target("uri", "nbds://alice@127.0.0.1:" + pskPort + "/disk?tls-psk-file="
                + PskFiles.file(psk.alice()))) {
            roundTrip(t, 0, 3);
            assertTrue(t.status().get("tls").contains("PSK user alice"), t.status().toString());
        }
    }

    @Test
    void presentsAClientCertificateTheServerChecks() throws Exception {
        int port = serve(new TlsConfig(TlsMode.REQUIRE, TlsCredentials.load(certs.server()), true,
                new ClientAllowList(List.of("CN=alice"))));
        try (NbdTarget t = target("uri", "nbds://127.0.0.1:" + port + "/disk", "tls-creds", certs.alice().toString())) {
            roundTrip(t, 4096, 4);
        }
        String m = refusal("uri", "nbds://127.0.0.1:" + port + "/disk", "tls-creds", certs.mallory().toString());
        assertTrue(m.contains("may not admit this client"), m);
        m = refusal("uri", "nbds://127.0.0.1:" + port + "/disk", "tls-creds", certs.client().toString());
        assertTrue(m.contains("may not admit this client"), m);
    }

    @Test
    void importsAStrataPskExport() throws Exception {
        int port = serve(TlsConfig.psk(TlsMode.REQUIRE, PskKeys.load(psk.server())));
        try (NbdTarget t = target("uri", "nbd://127.0.0.1:" + port + "/disk", "tls", "require", "tls-psk",
                PskFiles.file(psk.server()).toString(), "tls-username", "bob")) {
            byte[] data = roundTrip(t, 0, 5);
            assertArrayEquals(data, device.bytes(0, data.length));
        }
        String m = refusal("uri", "nbds://alice@127.0.0.1:" + port + "/disk", "tls-psk", psk.wrongKey().toString());
        assertTrue(m.contains("TLS") && m.contains("PSK"), m);
        m = refusal("uri", "nbds://carol@127.0.0.1:" + port + "/disk", "tls-psk", psk.carol().toString());
        assertTrue(m.contains("unknown_psk_identity"), m);
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> target("uri",
                "nbds://dave@127.0.0.1:" + port + "/disk", "tls-psk", psk.alice().toString()));
        assertTrue(e.getMessage().contains("no key for user 'dave'"), e.getMessage());
    }

    @Test
    void importsNbdkitTlsExportsWithX509AndPsk() throws Exception {
        byte[] initial = new byte[(int) SIZE];
        new Random(6).nextBytes(initial);
        Path img = Files.write(tmp.resolve("disk.img"), initial);
        try (Nbdkit kit = Nbdkit.start(tmp, "--tls=require", "--tls-certificates=" + certs.server(), "file",
                "file=" + img)) {
            try (NbdTarget t = target("uri", "nbds://127.0.0.1:" + kit.port + "/", "tls-creds",
                    certs.client().toString())) {
                assertEquals(SIZE, t.size());
                ByteBuffer b = ByteBuffer.allocate((int) SIZE);
                t.read(0, b);
                assertArrayEquals(initial, b.array(), "read nbdkit's file over TLS");
                roundTrip(t, 1 << 20, 7);
            }
            String m = refusal("uri", "nbds://127.0.0.1:" + kit.port + "/", "tls-creds", certs.wrongCa().toString());
            assertTrue(m.contains("not signed by the CA"), m);
        }
        byte[] after = Files.readAllBytes(img);
        byte[] expect = new byte[256 << 10];
        new Random(7).nextBytes(expect);
        assertArrayEquals(expect, java.util.Arrays.copyOfRange(after, 1 << 20, (1 << 20) + expect.length),
                "what the target wrote reached nbdkit's file");
        try (Nbdkit kit = Nbdkit.start(tmp, "--tls=require", "--tls-psk=" + PskFiles.file(psk.server()), "file",
                "file=" + img)) {
            try (NbdTarget t = target("uri", "nbds://alice@127.0.0.1:" + kit.port + "/", "tls-psk",
                    psk.alice().toString())) {
                ByteBuffer b = ByteBuffer.allocate(expect.length);
                t.read(1 << 20, b);
                assertArrayEquals(expect, b.array(), "read nbdkit's file over TLS-PSK");
                roundTrip(t, 2 << 20, 8);
            }
            String m = refusal("uri", "nbds://alice@127.0.0.1:" + kit.port + "/", "tls-psk", psk.wrongKey().toString());
            assertTrue(m.contains("PSK"), m);
        }
    }

    @Test
    void serversWithUntrustedCertificatesAreRefusedWithOneLine() throws Exception {
        int port = serve(new TlsConfig(TlsMode.REQUIRE, TlsCredentials.load(certs.server())));
        String uri = "nbds://127.0.0.1:" + port + "/disk";
        String m = refusal("uri", uri, "tls-creds", certs.wrongCa().toString());
        assertTrue(m.contains("is not signed by the CA"), m);
        m = refusal("uri", uri, "tls-creds", certs.client().toString(), "tls-hostname", "nbd.example.com");
        assertTrue(m.contains("does not name that host"), m);
        stop();
        port = serve(new TlsConfig(TlsMode.REQUIRE, TlsCredentials.load(certs.selfSigned())));
        m = refusal("uri", "nbds://127.0.0.1:" + port + "/disk", "tls-creds", certs.client().toString());
        assertTrue(m.contains("is not signed by the CA"), m);
        stop();
        port = serve(new TlsConfig(TlsMode.REQUIRE, TlsCredentials.load(certs.expired())));
        m = refusal("uri", "nbds://127.0.0.1:" + port + "/disk", "tls-creds", certs.client().toString());
        assertTrue(m.contains("has expired"), m);
        assertEquals(0, device.flushes.get());
    }

    @Test
    void requireNeverFallsBackToPlaintext() throws Exception {
        int port = serve(TlsConfig.OFF);
        String m = refusal("uri", "nbds://127.0.0.1:" + port + "/disk", "tls-creds", certs.client().toString());
        assertTrue(m.contains("does not do TLS"), m);
        // tls=on takes plaintext when the server has no TLS, and TLS when it has
        try (NbdTarget t = target("uri", "nbd://127.0.0.1:" + port + "/disk", "tls", "on",
                "tls-creds", certs.client().toString())) {
            roundTrip(t, 0, 9);
        }
        stop();
        int tlsPort = serve(new TlsConfig(TlsMode.REQUIRE, TlsCredentials.load(certs.server())));
        try (NbdTarget t = target("uri", "nbd://127.0.0.1:" + tlsPort + "/disk", "tls", "on",
                "tls-creds", certs.client().toString())) {
            roundTrip(t, 0, 10);
        }
    }

    @Test
    void contradictoryArgumentsAreRefused() {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> NbdTargetFactory.parse(Map.of("uri", "nbds://h/x", "tls", "off")));
        assertTrue(e.getMessage().contains("asks for TLS"), e.getMessage());
        e = assertThrows(InvalidArgumentException.class,
                () -> NbdTargetFactory.parse(Map.of("uri", "nbd://h/x", "tls-creds", "/tmp")));
        assertTrue(e.getMessage().contains("TLS is off"), e.getMessage());
        e = assertThrows(InvalidArgumentException.class,
                () -> NbdTargetFactory.parse(Map.of("uri", "nbds://h/x", "tls-creds", "/nonexistent-dir")));
        assertTrue(e.getMessage().contains("not a directory"), e.getMessage());
        e = assertThrows(InvalidArgumentException.class,
                () -> NbdTargetFactory.parse(Map.of("uri", "nbd://h/x", "tls", "maybe")));
        assertTrue(e.getMessage().contains("tls=maybe"), e.getMessage());
    }
}
