package dev.strata.nbd.internal.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.InvalidArgumentException;
import dev.strata.nbd.internal.protocol.Nbd;
import dev.strata.nbd.internal.session.TlsMode;
import dev.strata.nbd.internal.tls.ClientAllowList;
import dev.strata.nbd.internal.tls.TlsConfig;
import dev.strata.nbd.internal.tls.TlsCredentials;
import dev.strata.nbd.testing.Certs;
import dev.strata.nbd.testing.MemoryDevice;
import dev.strata.nbd.testing.RawClient;
import dev.strata.nbd.testing.Tools;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * STARTTLS with X.509: real clients (nbdinfo, nbdcopy, qemu-io) against certificates certtool
 * makes for the test, and raw-socket probes for the protocol's exact replies and for the
 * STARTTLS injection check.
 */
class TlsServerTest {
    static final long SIZE = 8L << 20;
    @TempDir
    static Path certDir;
    static Certs certs;
    @TempDir
    Path tmp;
    NbdServer server;
    MemoryDevice device;

    @BeforeAll
    static void makeCertificates() throws Exception {
        certs = Certs.make(certDir);
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    private int serve(TlsMode mode, Path creds) throws IOException {
        return serve(new TlsConfig(mode, creds == null ? null : TlsCredentials.load(creds)));
    }

    private int serve(TlsConfig tls) throws IOException {
        server = new NbdServer();
        device = new MemoryDevice(SIZE);
        return server.addExport("disk", "TLS test disk", device, new InetSocketAddress("127.0.0.1", 0), false, tls)
                .port();
    }

    private String tlsUri(int port, Path clientDir) {
        return "nbds://127.0.0.1:" + port + "/disk?tls-certificates=" + clientDir;
    }

    @Test
    void nbdinfoOverTlsSeesTheExport() throws Exception {
        Tools.require("nbdinfo", "libnbd-bin");
        int port = serve(TlsMode.REQUIRE, certs.server());
        String json = Tools.ok(tmp, "nbdinfo", "--json", tlsUri(port, certs.client()));
        assertTrue(json.contains("\"export-size\": " + SIZE), json);
        assertTrue(json.contains("\"TLS\": true"), json);
    }

    @Test
    void nbdcopyMovesDataBothWaysOverTls() throws Exception {
        Tools.require("nbdcopy", "libnbd-bin");
        int port = serve(TlsMode.REQUIRE, certs.server());
        byte[] data = new byte[(int) SIZE];
        new Random(17).nextBytes(data);
        Path in = Files.write(tmp.resolve("in.img"), data);
        Tools.ok(tmp, "nbdcopy", in.toString(), tlsUri(port, certs.client()));
        byte[] onDevice = new byte[(int) SIZE];
        device.read(0, ByteBuffer.wrap(onDevice));
        assertArrayEquals(data, onDevice, "the device holds what nbdcopy wrote over TLS");
        Path out = tmp.resolve("out.img");
        Tools.ok(tmp, "nbdcopy", tlsUri(port, certs.client()), out.toString());
        assertArrayEquals(data, Files.readAllBytes(out), "nbdcopy read back over TLS what it wrote");
    }

    @Test
    void qemuIoWritesAndVerifiesOverTls() throws Exception {
        Tools.require("qemu-io", "qemu-utils");
        int port = serve(TlsMode.REQUIRE, certs.server());
        String object = "tls-creds-x509,id=tls0,endpoint=client,dir=" + certs.client();
        String image = "driver=nbd,server.type=inet,server.host=127.0.0.1,server.port=" + port
                + ",export=disk,tls-creds=tls0";
        String out = Tools.ok(tmp, "qemu-io", "--object", object, "--image-opts", image,
                "-c", "write -P 0xa5 4096 1M", "-c", "flush", "-c", "read -P 0xa5 4096 1M", "-c", "read -P 0 0 4096");
        assertTrue(!out.contains("Pattern verification failed"), out);
        byte[] b = new byte[1 << 20];
        device.read(4096, ByteBuffer.wrap(b));
        for (byte x : b) {
            assertEquals((byte) 0xa5, x, "qemu-io's pattern is on the device");
        }
    }

    /** qemu's client certificate (certtool's default RSA key) on an allow-listed export, whatever the JDK. */
    @Test
    void qemuIoWithAClientCertificateIsAdmittedByAnAllowList() throws Exception {
        Tools.require("qemu-io", "qemu-utils");
        int port = serve(new TlsConfig(TlsMode.REQUIRE, TlsCredentials.load(certs.server()), true,
                new ClientAllowList(List.of("CN=alice"))));
        String image = "driver=nbd,server.type=inet,server.host=127.0.0.1,server.port=" + port
                + ",export=disk,tls-creds=tls0";
        String out = Tools.ok(tmp, "qemu-io", "--object", "tls-creds-x509,id=tls0,endpoint=client,dir=" + certs.alice(),
                "--image-opts", image, "-c", "write -P 0x5a 0 64k", "-c", "read -P 0x5a 0 64k");
        assertTrue(!out.contains("Pattern verification failed"), out);
        Tools.Result r = Tools.run(tmp, "qemu-io", "--object", "tls-creds-x509,id=tls0,endpoint=client,dir="
                + certs.mallory(), "--image-opts", image, "-c", "read 0 4k");
        assertNotEquals(0, r.exit(), "mallory is not on the list: " + r.output());
    }

    @Test
    void plaintextNbdinfoIsRefusedByARequireExport() throws Exception {
        Tools.require("nbdinfo", "libnbd-bin");
        int port = serve(TlsMode.REQUIRE, certs.server());
        Tools.Result r = Tools.run(tmp, "nbdinfo", "nbd://127.0.0.1:" + port + "/disk");
        assertNotEquals(0, r.exit(), r.output());
        assertTrue(r.output().contains("without TLS"), r.output());
    }

    @Test
    void clientsRefuseAServerCertificateFromAnotherCa() throws Exception {
        Tools.require("nbdinfo", "libnbd-bin");
        int port = serve(TlsMode.REQUIRE, certs.server());
        Tools.Result r = Tools.run(tmp, "nbdinfo", tlsUri(port, certs.wrongCa()));
        assertNotEquals(0, r.exit(), "a client trusting another CA must refuse the server: " + r.output());
        assertTrue(r.output().contains("certificate verification"), r.output());
    }

    @Test
    void clientsRefuseASelfSignedServerCertificate() throws Exception {
        Tools.require("nbdinfo", "libnbd-bin");
        int port = serve(TlsMode.REQUIRE, certs.selfSigned());
        Tools.Result r = Tools.run(tmp, "nbdinfo", tlsUri(port, certs.client()));
        assertNotEquals(0, r.exit(), "a self-signed server certificate must be refused: " + r.output());
        assertTrue(r.output().contains("certificate verification"), r.output());
        // the same client directory works against the CA-signed server: the refusal is about the certificate
        stop();
        int good = serve(TlsMode.REQUIRE, certs.server());
        Tools.ok(tmp, "nbdinfo", tlsUri(good, certs.client()));
    }

    @Test
    void clientsRefuseAnExpiredServerCertificate() throws Exception {
        Tools.require("nbdinfo", "libnbd-bin");
        int port = serve(TlsMode.REQUIRE, certs.expired());
        Tools.Result r = Tools.run(tmp, "nbdinfo", tlsUri(port, certs.client()));
        assertNotEquals(0, r.exit(), "an expired server certificate must be refused: " + r.output());
        assertTrue(r.output().contains("certificate verification"), r.output());
    }

    @Test
    void verifyPeerRefusesAnExpiredClientCertificate() throws Exception {
        Tools.require("nbdinfo", "libnbd-bin");
        int port = serve(new TlsConfig(TlsMode.REQUIRE, TlsCredentials.load(certs.server()), true,
                new ClientAllowList(List.of("CN=alice"))));
        Tools.Result r = Tools.run(tmp, "nbdinfo", "--size", tlsUri(port, certs.expiredAlice()));
        assertNotEquals(0, r.exit(), "alice's expired certificate must be refused: " + r.output());
        // the same name with a valid certificate gets in: the refusal is about the expiry
        Tools.ok(tmp, "nbdinfo", "--size", tlsUri(port, certs.alice()));
    }

    @Test
    void verifyPeerWithAnAllowListAdmitsOnlyListedClientsTheCaSigned() throws Exception {
        Tools.require("nbdinfo", "libnbd-bin");
        int port = serve(new TlsConfig(TlsMode.REQUIRE, TlsCredentials.load(certs.server()), true,
                new ClientAllowList(List.of("CN=alice"))));
        String size = Tools.ok(tmp, "nbdinfo", "--size", tlsUri(port, certs.alice()));
        assertEquals(Long.toString(SIZE), size.trim());
        for (Path refused : List.of(certs.mallory(), certs.strangerAlice(), certs.client())) {
            Tools.Result r = Tools.run(tmp, "nbdinfo", "--size", tlsUri(port, refused));
            assertNotEquals(0, r.exit(), refused.getFileName() + " must be refused: " + r.output());
        }
    }

    @Test
    void verifyPeerWithoutAllowListAdmitsAnyClientTheCaSigned() throws Exception {
        Tools.require("nbdinfo", "libnbd-bin");
        int port = serve(new TlsConfig(TlsMode.REQUIRE, TlsCredentials.load(certs.server()), true, null));
        Tools.ok(tmp, "nbdinfo", "--size", tlsUri(port, certs.alice()));
        Tools.ok(tmp, "nbdinfo", "--size", tlsUri(port, certs.mallory()));
        for (Path refused : List.of(certs.strangerAlice(), certs.client())) {
            Tools.Result r = Tools.run(tmp, "nbdinfo", "--size", tlsUri(port, refused));
            assertNotEquals(0, r.exit(), refused.getFileName() + " must be refused: " + r.output());
        }
    }

    @Test
    void allowListEntriesAreCheckedWhenTheExportStarts() {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> new ClientAllowList(List.of("alice")));
        assertTrue(e.getMessage().contains("write CN=client-name"), e.getMessage());
        e = assertThrows(InvalidArgumentException.class, () -> new TlsConfig(TlsMode.OFF, null, true, null));
        assertTrue(e.getMessage().contains("need --tls=require"), e.getMessage());
    }

    @Test
    void tlsOnServesPlaintextAndTlsClients() throws Exception {
        Tools.require("nbdinfo", "libnbd-bin");
        int port = serve(TlsMode.ON, certs.server());
        Tools.ok(tmp, "nbdinfo", "nbd://127.0.0.1:" + port + "/disk");
        Tools.ok(tmp, "nbdinfo", tlsUri(port, certs.client()));
    }

    @Test
    void requireAnswersEveryOptionBeforeTlsWithTlsReqd() throws Exception {
        int port = serve(TlsMode.REQUIRE, certs.server());
        try (RawClient c = new RawClient(new InetSocketAddress("127.0.0.1", port))) {
            c.greet(Nbd.FLAG_C_FIXED_NEWSTYLE | Nbd.FLAG_C_NO_ZEROES);
            int[] options = {Nbd.OPT_LIST, Nbd.OPT_INFO, Nbd.OPT_GO, Nbd.OPT_STRUCTURED_REPLY,
                Nbd.OPT_LIST_META_CONTEXT, Nbd.OPT_SET_META_CONTEXT, 999};
            for (int opt : options) {
                byte[] data = opt == Nbd.OPT_INFO || opt == Nbd.OPT_GO ? RawClient.goData("disk")
                        : opt == Nbd.OPT_LIST_META_CONTEXT || opt == Nbd.OPT_SET_META_CONTEXT
                        ? RawClient.metaData("disk", Nbd.BASE_ALLOCATION) : new byte[0];
                c.option(opt, data);
                RawClient.OptReply r = c.optReply();
                assertEquals(opt, r.option());
                assertEquals(Nbd.REP_ERR_TLS_REQD, r.type(), "option " + Nbd.optionName(opt) + " before TLS");
            }
            c.option(Nbd.OPT_EXPORT_NAME, "disk".getBytes(StandardCharsets.UTF_8));
            assertTrue(c.closedByServer(), "EXPORT_NAME before TLS on a require export closes the connection");
        }
        try (RawClient c = new RawClient(new InetSocketAddress("127.0.0.1", port))) {
            c.greet(Nbd.FLAG_C_FIXED_NEWSTYLE | Nbd.FLAG_C_NO_ZEROES);
            c.option(Nbd.OPT_ABORT, new byte[0]);
            RawClient.expect(c.optReply(), Nbd.REP_ACK);
        }
    }

    @Test
    void startTlsThenOptionsAgainWithEveryNegotiatedStateReset() throws Exception {
        int port = serve(TlsMode.ON, certs.server());
        try (RawClient c = new RawClient(new InetSocketAddress("127.0.0.1", port))) {
            c.greet(Nbd.FLAG_C_FIXED_NEWSTYLE | Nbd.FLAG_C_NO_ZEROES);
            c.option(Nbd.OPT_STRUCTURED_REPLY, new byte[0]);
            RawClient.expect(c.optReply(), Nbd.REP_ACK);
            c.option(Nbd.OPT_STARTTLS, new byte[0]);
            RawClient.OptReply ack = RawClient.expect(c.optReply(), Nbd.REP_ACK);
            assertEquals(Nbd.OPT_STARTTLS, ack.option());
            c.startTls(Certs.clientContext(certs.client()));
            assertTrue(c.tlsProtocol().equals("TLSv1.3"), "TLS 1.3 preferred: " + c.tlsProtocol());
            // structured replies were agreed in plaintext: forgotten after the upgrade
            c.option(Nbd.OPT_SET_META_CONTEXT, RawClient.metaData("disk", Nbd.BASE_ALLOCATION));
            RawClient.expect(c.optReply(), Nbd.REP_ERR_INVALID);
            c.option(Nbd.OPT_STARTTLS, new byte[0]);
            RawClient.expect(c.optReply(), Nbd.REP_ERR_INVALID);
            // and a full session over TLS: write, read back
            assertEquals(SIZE, c.goAfterGreeting("disk", true, false));
            byte[] data = new byte[4096];
            new Random(5).nextBytes(data);
            c.request(0, Nbd.CMD_WRITE, 1, 8192, data.length, data);
            assertEquals(0, c.simple().error());
            c.request(0, Nbd.CMD_READ, 2, 8192, data.length, null);
            RawClient.Chunk chunk = c.any();
            assertEquals(2, chunk.cookie());
            ByteBuffer got = chunk.buf();
            got.getLong(); // offset
            byte[] back = new byte[data.length];
            got.get(back);
            assertArrayEquals(data, back);
        }
    }

    @Test
    void bytesSentAfterStartTlsBeforeTheHandshakeAreNeverOptions() throws Exception {
        int port = serve(TlsMode.REQUIRE, certs.server());
        try (RawClient c = new RawClient(new InetSocketAddress("127.0.0.1", port))) {
            c.greet(Nbd.FLAG_C_FIXED_NEWSTYLE | Nbd.FLAG_C_NO_ZEROES);
            // STARTTLS and a plaintext LIST in one write, as a man in the middle would inject it
            ByteBuffer b = ByteBuffer.allocate(32);
            b.putLong(Nbd.IHAVEOPT).putInt(Nbd.OPT_STARTTLS).putInt(0);
            b.putLong(Nbd.IHAVEOPT).putInt(Nbd.OPT_LIST).putInt(0);
            c.send(b.flip());
            RawClient.OptReply ack = RawClient.expect(c.optReply(), Nbd.REP_ACK);
            assertEquals(Nbd.OPT_STARTTLS, ack.option());
            byte[] rest = readToEnd(c);
            assertTrue(indexOf(rest, longBytes(Nbd.OPTION_REPLY_MAGIC)) < 0,
                    "no option reply after STARTTLS in plaintext; got " + rest.length + " bytes");
            assertTrue(rest.length == 0 || rest[0] == 0x15, "only a TLS alert may come back, got first byte " + rest[0]);
        }
    }

    @Test
    void aClientThatStallsAfterStartTlsIsDropped() throws Exception {
        server = new NbdServer(new NbdServer.Settings(16, 500, 64 * 1024, 64L << 20));
        device = new MemoryDevice(SIZE);
        int port = server.addExport("disk", "", device, new InetSocketAddress("127.0.0.1", 0), false,
                new TlsConfig(TlsMode.REQUIRE, TlsCredentials.load(certs.server()))).port();
        try (RawClient stalled = new RawClient(new InetSocketAddress("127.0.0.1", port))) {
            stalled.greet(Nbd.FLAG_C_FIXED_NEWSTYLE | Nbd.FLAG_C_NO_ZEROES);
            stalled.option(Nbd.OPT_STARTTLS, new byte[0]);
            RawClient.expect(stalled.optReply(), Nbd.REP_ACK);
            // no ClientHello follows: the negotiation deadline (500 ms here) must drop it
            assertTrue(stalled.closedByServer(), "a stalled TLS handshake is dropped");
        }
    }

    @Test
    void exportsSharingAPortShareItsTlsSetting() throws Exception {
        int port = serve(TlsMode.REQUIRE, certs.server());
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> server.addExport("plain", "",
                new MemoryDevice(SIZE), new InetSocketAddress("127.0.0.1", port), false, TlsConfig.OFF));
        assertTrue(e.getMessage().contains("choose another --port"), e.getMessage());
    }

    static byte[] readToEnd(RawClient c) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        var in = c.ch.socket().getInputStream();
        byte[] buf = new byte[4096];
        try {
            for (int n; (n = in.read(buf)) >= 0; ) {
                out.write(buf, 0, n);
            }
        } catch (IOException e) {
            // reset by the server: the connection is gone, which is what is expected
        }
        return out.toByteArray();
    }

    static byte[] longBytes(long v) {
        return ByteBuffer.allocate(8).putLong(v).array();
    }

    static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
