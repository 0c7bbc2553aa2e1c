package dev.strata.nbd.internal.tls;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.DeviceIOException;
import dev.strata.nbd.internal.client.NbdTarget;
import dev.strata.nbd.internal.client.NbdUri;
import dev.strata.nbd.internal.server.NbdServer;
import dev.strata.nbd.internal.session.TlsMode;
import dev.strata.nbd.testing.Certs;
import dev.strata.nbd.testing.MemoryDevice;
import dev.strata.nbd.testing.PskFiles;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Certificates and PSK files changed under a running export: the next client gets the new
 * ones, connections already open go on with theirs, and files that do not load leave the old
 * credentials in use.
 */
class TlsReloadTest {
    @TempDir
    static Path credDir;
    static Certs certs;
    static PskFiles psk;
    @TempDir
    Path live;
    NbdServer server;
    MemoryDevice device;

    @BeforeAll
    static void make() throws Exception {
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
        device = new MemoryDevice(1 << 20);
        return server.addExport("disk", "", device, new InetSocketAddress("127.0.0.1", 0), false, tls).port();
    }

    private static void copyCredentials(Path from, Path to) throws IOException {
        for (String f : new String[] {TlsCredentials.SERVER_CERT, TlsCredentials.SERVER_KEY, TlsCredentials.CA_CERT}) {
            Files.copy(from.resolve(f), to.resolve(f), StandardCopyOption.REPLACE_EXISTING);
        }
    }

    private static NbdTarget x509(int port) throws IOException {
        return new NbdTarget("remote", NbdUri.parse("nbds://127.0.0.1:" + port + "/disk"), 5000, 1,
                ClientTls.x509(TlsMode.REQUIRE, certs.client(), "127.0.0.1"));
    }

    private static NbdTarget psk(int port, Path keys, String user) throws IOException {
        return new NbdTarget("remote", NbdUri.parse("nbds://127.0.0.1:" + port + "/disk"), 5000, 1,
                ClientTls.psk(TlsMode.REQUIRE, PskKeys.load(keys), user));
    }

    private static void roundTrip(NbdTarget t, int seed) throws IOException {
        byte[] data = new byte[64 << 10];
        new Random(seed).nextBytes(data);
        t.write(0, ByteBuffer.wrap(data), 0);
        ByteBuffer back = ByteBuffer.allocate(data.length);
        t.read(0, back);
        assertArrayEquals(data, back.array());
    }

    @Test
    void newCertificatesServeNewClientsWhileOpenConnectionsGoOn() throws Exception {
        copyCredentials(certs.server(), live);
        int port = serve(new TlsConfig(TlsMode.REQUIRE, TlsCredentials.load(live)));
        try (NbdTarget open = x509(port)) {
            roundTrip(open, 1);
            // the server's certificate replaced by one the client does not trust: new clients see it at once
            copyCredentials(certs.selfSigned(), live);
            DeviceIOException e = assertThrows(DeviceIOException.class, () -> x509(port).close());
            assertTrue(e.getMessage().contains("not signed by the CA"), e.getMessage());
            roundTrip(open, 2); // the open connection keeps its session
            // a half-written change (certificate without its key) is not taken: the previous ones stay
            Files.copy(certs.server().resolve(TlsCredentials.SERVER_CERT), live.resolve(TlsCredentials.SERVER_CERT),
                    StandardCopyOption.REPLACE_EXISTING);
            e = assertThrows(DeviceIOException.class, () -> x509(port).close());
            assertTrue(e.getMessage().contains("not signed by the CA"), "still the self-signed pair: " + e.getMessage());
            // the matching pair back: trusted again
            copyCredentials(certs.server(), live);
            try (NbdTarget again = x509(port)) {
                roundTrip(again, 3);
            }
            roundTrip(open, 4);
        }
    }

    @Test
    void pskUsersAddedAndRemovedTakeEffectForNewClients() throws Exception {
        Path keys = Files.copy(PskFiles.file(psk.alice()), live.resolve("keys.psk"));
        int port = serve(TlsConfig.psk(TlsMode.REQUIRE, PskKeys.load(keys)));
        try (NbdTarget alice = psk(port, keys, "alice")) {
            roundTrip(alice, 5);
            // bob is added with psktool while alice is connected
            PskFiles.psk(live, "bob");
            try (NbdTarget bob = psk(port, keys, "bob")) {
                roundTrip(bob, 6);
            }
            // alice's key renewed: her old key no longer gets in, her open connection goes on
            Path oldAlice = PskFiles.file(psk.alice());
            PskFiles.psk(live, "alice");
            DeviceIOException e = assertThrows(DeviceIOException.class, () -> psk(port, oldAlice, "alice").close());
            assertTrue(e.getMessage().contains("PSK"), e.getMessage());
            roundTrip(alice, 7);
            try (NbdTarget renewed = psk(port, keys, "alice")) {
                roundTrip(renewed, 8);
            }
        }
    }
}
