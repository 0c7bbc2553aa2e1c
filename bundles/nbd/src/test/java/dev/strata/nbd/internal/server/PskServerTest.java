package dev.strata.nbd.internal.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.nbd.internal.protocol.Nbd;
import dev.strata.nbd.internal.session.TlsMode;
import dev.strata.nbd.internal.tls.PskKeys;
import dev.strata.nbd.internal.tls.TlsConfig;
import dev.strata.nbd.testing.MemoryDevice;
import dev.strata.nbd.testing.PskFiles;
import dev.strata.nbd.testing.RawClient;
import dev.strata.nbd.testing.Tools;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * STARTTLS with pre-shared keys: nbdinfo, nbdcopy and qemu-io (all GnuTLS) against key files
 * psktool makes in the test; a wrong key and an unknown user refused.
 */
class PskServerTest {
    static final long SIZE = 8L << 20;
    @TempDir
    static Path keyDir;
    static PskFiles keys;
    @TempDir
    Path tmp;
    NbdServer server;
    MemoryDevice device;

    @BeforeAll
    static void makeKeys() throws Exception {
        keys = PskFiles.make(keyDir);
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    private int serve(TlsMode mode, Path keyFile) throws IOException {
        server = new NbdServer();
        device = new MemoryDevice(SIZE);
        return server.addExport("disk", "PSK test disk", device, new InetSocketAddress("127.0.0.1", 0), false,
                TlsConfig.psk(mode, PskKeys.load(keyFile))).port();
    }

    static String uri(String user, int port, Path clientDir) {
        return "nbds://" + user + "@127.0.0.1:" + port + "/disk?tls-psk-file=" + PskFiles.file(clientDir);
    }

    @Test
    void nbdinfoOverTls13WithPsk() throws Exception {
        Tools.require("nbdinfo", "libnbd-bin");
        int port = serve(TlsMode.REQUIRE, PskFiles.file(keys.server()));
        String json = Tools.ok(tmp, "nbdinfo", "--json", uri("alice", port, keys.alice()));
        assertTrue(json.contains("\"export-size\": " + SIZE), json);
        assertTrue(json.contains("\"TLS\": true"), json);
        // libnbd's debug output names the key exchange GnuTLS negotiated: the PSK with ECDHE, not the PSK alone
        String debug = Tools.ok(tmp, "env", "LIBNBD_DEBUG=1", "nbdinfo", "--size", uri("alice", port, keys.alice()));
        assertTrue(debug.contains("key exchange ECDHE-PSK"), "PSK with ECDHE: " + debug);
    }

    @Test
    void nbdcopyMovesDataBothWaysWithPsk() throws Exception {
        Tools.require("nbdcopy", "libnbd-bin");
        int port = serve(TlsMode.REQUIRE, keys.server()); // a directory: its keys.psk, as qemu reads it
        byte[] data = new byte[(int) SIZE];
        new Random(23).nextBytes(data);
        Path in = Files.write(tmp.resolve("in.img"), data);
        Tools.ok(tmp, "nbdcopy", in.toString(), uri("alice", port, keys.alice()));
        byte[] onDevice = new byte[(int) SIZE];
        device.read(0, ByteBuffer.wrap(onDevice));
        assertArrayEquals(data, onDevice, "the device holds what nbdcopy wrote over TLS-PSK");
        Path out = tmp.resolve("out.img");
        // bob, the file's other user, with his own key
        Tools.ok(tmp, "nbdcopy", uri("bob", port, keys.server()), out.toString());
        assertArrayEquals(data, Files.readAllBytes(out), "nbdcopy read back over TLS-PSK what it wrote");
    }

    @Test
    void qemuIoWritesAndVerifiesWithPsk() throws Exception {
        Tools.require("qemu-io", "qemu-utils");
        int port = serve(TlsMode.REQUIRE, keys.server());
        String object = "tls-creds-psk,id=tls0,endpoint=client,username=alice,dir=" + keys.alice();
        String image = "driver=nbd,server.type=inet,server.host=127.0.0.1,server.port=" + port
                + ",export=disk,tls-creds=tls0";
        String out = Tools.ok(tmp, "qemu-io", "--object", object, "--image-opts", image,
                "-c", "write -P 0x5a 8192 1M", "-c", "flush", "-c", "read -P 0x5a 8192 1M");
        assertFalse(out.contains("Pattern verification failed"), out);
        byte[] b = new byte[1 << 20];
        device.read(8192, ByteBuffer.wrap(b));
        for (byte x : b) {
            assertEquals((byte) 0x5a, x, "qemu-io's pattern is on the device");
        }
    }

    @Test
    void aWrongKeyIsRefused() throws Exception {
        Tools.require("nbdinfo", "libnbd-bin");
        int port = serve(TlsMode.REQUIRE, keys.server());
        Tools.Result r = Tools.run(tmp, "nbdinfo", uri("alice", port, keys.wrongKey()));
        assertNotEquals(0, r.exit(), "alice with another key must be refused: " + r.output());
        assertTrue(r.output().contains("handshake"), r.output());
    }

    @Test
    void anUnknownUserIsRefused() throws Exception {
        Tools.require("nbdinfo", "libnbd-bin");
        int port = serve(TlsMode.REQUIRE, keys.server());
        Tools.Result r = Tools.run(tmp, "nbdinfo", uri("carol", port, keys.carol()));
        assertNotEquals(0, r.exit(), "a user not in the server's key file must be refused: " + r.output());
        // and alice still gets in, so the refusal is about carol
        Tools.ok(tmp, "nbdinfo", uri("alice", port, keys.alice()));
    }

    @Test
    void qemuIoWithAWrongKeyIsRefused() throws Exception {
        Tools.require("qemu-io", "qemu-utils");
        int port = serve(TlsMode.REQUIRE, keys.server());
        String object = "tls-creds-psk,id=tls0,endpoint=client,username=alice,dir=" + keys.wrongKey();
        String image = "driver=nbd,server.type=inet,server.host=127.0.0.1,server.port=" + port
                + ",export=disk,tls-creds=tls0";
        Tools.Result r = Tools.run(tmp, "qemu-io", "--object", object, "--image-opts", image, "-c", "read 0 4096");
        assertTrue(r.exit() != 0 || r.output().contains("Could not open") || r.output().contains("failed"),
                "qemu-io with a wrong key must not open the export: " + r.output());
        assertFalse(r.output().contains("read 4096/4096 bytes"), r.output());
    }

    @Test
    void bytesSentAfterStartTlsBeforeThePskHandshakeAreNeverOptions() throws Exception {
        int port = serve(TlsMode.REQUIRE, keys.server());
        try (RawClient c = new RawClient(new InetSocketAddress("127.0.0.1", port))) {
            c.greet(Nbd.FLAG_C_FIXED_NEWSTYLE | Nbd.FLAG_C_NO_ZEROES);
            // STARTTLS and a plaintext LIST in one write, as a man in the middle would inject it
            ByteBuffer b = ByteBuffer.allocate(32);
            b.putLong(Nbd.IHAVEOPT).putInt(Nbd.OPT_STARTTLS).putInt(0);
            b.putLong(Nbd.IHAVEOPT).putInt(Nbd.OPT_LIST).putInt(0);
            c.send(b.flip());
            assertEquals(Nbd.OPT_STARTTLS, RawClient.expect(c.optReply(), Nbd.REP_ACK).option());
            byte[] rest = TlsServerTest.readToEnd(c);
            assertTrue(TlsServerTest.indexOf(rest, TlsServerTest.longBytes(Nbd.OPTION_REPLY_MAGIC)) < 0,
                    "no option reply after STARTTLS in plaintext; got " + rest.length + " bytes");
            assertTrue(rest.length == 0 || rest[0] == 0x15,
                    () -> "only a TLS alert may come back, got first byte " + rest[0]);
        }
    }

    @Test
    void tlsOnStillServesPlaintextClients() throws Exception {
        Tools.require("nbdinfo", "libnbd-bin");
        int port = serve(TlsMode.ON, keys.server());
        Tools.ok(tmp, "nbdinfo", "nbd://127.0.0.1:" + port + "/disk");
        String json = Tools.ok(tmp, "nbdinfo", "--json", uri("bob", port, keys.server()));
        assertTrue(json.contains("\"TLS\": true"), json);
    }
}
