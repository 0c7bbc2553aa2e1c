package dev.strata.nbd.internal.tls;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.nbd.internal.session.TlsMode;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The PSK handshake itself, both ends ours: TLS 1.3, the user known on both sides, a wrong key refused by both. */
class PskTlsTest {
    @TempDir
    Path tmp;

    /** Runs a server handshake on one end of a loopback connection and a client handshake on the other. */
    private static TlsChannel[] pair(TlsConfig server, String user, byte[] key) throws Exception {
        try (ServerSocketChannel ss = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            SocketChannel c = SocketChannel.open(ss.getLocalAddress());
            SocketChannel s = ss.accept();
            CompletableFuture<TlsChannel> srv = CompletableFuture.supplyAsync(() -> {
                try {
                    return server.serverHandshake(s);
                } catch (IOException e) {
                    try {
                        s.close();
                    } catch (IOException ignored) {
                        // closing is all that is left to do
                    }
                    throw new java.io.UncheckedIOException(e);
                }
            });
            try {
                TlsChannel client = PskTls.clientHandshake(c, user, key, 10_000);
                return new TlsChannel[] {srv.get(10, TimeUnit.SECONDS), client};
            } catch (IOException e) {
                c.close();
                throw e;
            }
        }
    }

    @Test
    void tls13WithTheUserKnownOnBothSidesAndDataBothWays() throws Exception {
        Path f = Files.writeString(tmp.resolve("keys.psk"), "alice:00112233445566778899aabbccddeeff\n");
        PskKeys keys = PskKeys.load(f);
        TlsChannel[] p = pair(TlsConfig.psk(TlsMode.REQUIRE, keys), "alice", keys.clientKey("alice"));
        try {
            assertEquals("TLSv1.3", p[0].protocol());
            assertEquals("TLSv1.3", p[1].protocol());
            assertEquals("alice", p[0].pskIdentity(), "the server knows who connected");
            p[1].write(ByteBuffer.wrap("ping".getBytes(StandardCharsets.US_ASCII)));
            ByteBuffer b = ByteBuffer.allocate(4);
            while (b.hasRemaining()) {
                p[0].read(b);
            }
            assertEquals("ping", new String(b.array(), StandardCharsets.US_ASCII));
        } finally {
            p[0].close();
            p[1].close();
        }
    }

    @Test
    void aWrongKeyFailsBothEnds() throws Exception {
        Path f = Files.writeString(tmp.resolve("keys.psk"), "alice:00112233445566778899aabbccddeeff\n");
        TlsConfig server = TlsConfig.psk(TlsMode.REQUIRE, PskKeys.load(f));
        IOException e = assertThrows(IOException.class, () -> pair(server, "alice", new byte[16]));
        assertTrue(TlsFailure.describe(e, "s").contains("check the PSK user name and key"), TlsFailure.describe(e, "s"));
    }
}
