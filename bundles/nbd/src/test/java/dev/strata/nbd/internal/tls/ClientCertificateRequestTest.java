package dev.strata.nbd.internal.tls;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.nbd.internal.session.TlsMode;
import dev.strata.nbd.testing.Certs;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server's request for a client certificate, seen from a JSSE client: it names no CA (so
 * gnutls clients send the one certificate they have whatever JDK the server runs on; see
 * {@link ClientCertificateTrust}), the CA is still enforced, and each refusal is one line.
 * The same with libnbd itself is in TlsServerTest.
 */
class ClientCertificateRequestTest {
    @TempDir
    static Path dir;
    static Certs certs;

    @BeforeAll
    static void make() throws Exception {
        certs = Certs.make(dir);
    }

    private static TlsConfig verifyPeer() {
        return new TlsConfig(TlsMode.REQUIRE, TlsCredentials.load(certs.server()), true, null);
    }

    /** A client key manager for {@code clientDir}'s certificate that records the CAs the server asked for. */
    private static final class Recording extends X509ExtendedKeyManager {
        final List<List<Principal>> asked = new CopyOnWriteArrayList<>();
        private final X509ExtendedKeyManager keys;

        Recording(Path clientDir) throws Exception {
            PrivateKey k = PemFiles.privateKey(clientDir.resolve("client-key.pem"));
            List<X509Certificate> chain = PemFiles.certificates(clientDir.resolve("client-cert.pem"));
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            ks.setKeyEntry("client", k, new char[0], chain.toArray(X509Certificate[]::new));
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, new char[0]);
            keys = (X509ExtendedKeyManager) kmf.getKeyManagers()[0];
        }

        @Override
        public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
            asked.add(issuers == null ? List.of() : List.of(issuers));
            return keys.chooseClientAlias(keyType, issuers, socket);
        }

        @Override
        public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
            return chooseClientAlias(keyType, issuers, null);
        }

        @Override
        public String[] getClientAliases(String keyType, Principal[] issuers) {
            return keys.getClientAliases(keyType, issuers);
        }

        @Override
        public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
            return null;
        }

        @Override
        public String[] getServerAliases(String keyType, Principal[] issuers) {
            return null;
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            return keys.getCertificateChain(alias);
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            return keys.getPrivateKey(alias);
        }
    }

    private static SSLContext client(Recording keys) throws Exception {
        TlsCredentials server = TlsCredentials.load(certs.server());
        KeyStore ts = KeyStore.getInstance("PKCS12");
        ts.load(null, null);
        ts.setCertificateEntry("ca", PemFiles.certificates(server.dir().resolve(TlsCredentials.CA_CERT)).get(0));
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ts);
        SSLContext c = SSLContext.getInstance("TLS");
        c.init(keys == null ? null : new Recording[] {keys}, tmf.getTrustManagers(), null);
        return c;
    }

    /**
     * Handshakes {@code server} with a client of {@code context} speaking only {@code protocol}.
     *
     * @return the protocol negotiated
     * @throws IOException what the server's handshake threw
     */
    private static String handshake(TlsConfig server, SSLContext context, String protocol) throws Exception {
        try (ServerSocketChannel ss = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
                SocketChannel c = SocketChannel.open(ss.getLocalAddress());
                SocketChannel s = ss.accept()) {
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
            SSLSocket cs = (SSLSocket) context.getSocketFactory().createSocket(c.socket(), "127.0.0.1",
                    c.socket().getPort(), true);
            cs.setUseClientMode(true);
            SSLParameters p = cs.getSSLParameters();
            p.setProtocols(new String[] {protocol});
            cs.setSSLParameters(p);
            cs.setSoTimeout(10_000);
            try {
                cs.startHandshake();
                cs.getInputStream().available(); // TLS 1.3: the server's verdict on the certificate comes after Finished
            } catch (IOException e) {
                // the server's side says why
            }
            try {
                return srv.get(10, TimeUnit.SECONDS).protocol();
            } catch (ExecutionException e) {
                throw (IOException) e.getCause().getCause();
            }
        }
    }

    @Test
    void theRequestNamesNoCaAndTheClientsCertificateIsVerifiedAndAdmitted() throws Exception {
        for (String protocol : List.of("TLSv1.3", "TLSv1.2")) {
            Recording alice = new Recording(certs.alice());
            assertEquals(protocol, handshake(verifyPeer(), client(alice), protocol));
            assertEquals(List.of(List.of()), alice.asked, protocol + ": the CAs the server named");
        }
    }

    @Test
    void aClientWithoutACertificateIsRefusedWithOneLineSayingWhatToDo() throws Exception {
        for (String protocol : List.of("TLSv1.3", "TLSv1.2")) {
            IOException e = assertThrows(IOException.class, () -> handshake(verifyPeer(), client(null), protocol));
            assertTrue(e.getMessage().startsWith("the client sent no certificate, and this export verifies clients"),
                    protocol + ": " + e.getMessage());
            assertTrue(e.getMessage().contains(certs.server().resolve("ca-cert.pem").toString()), e.getMessage());
            assertFalse(e.getMessage().contains("Exception"), e.getMessage());
        }
    }

    @Test
    void certificatesOfAnotherCaOrExpiredAreRefusedSayingSo() throws Exception {
        IOException e = assertThrows(IOException.class,
                () -> handshake(verifyPeer(), client(new Recording(certs.strangerAlice())), "TLSv1.3"));
        assertTrue(e.getMessage().startsWith("the client's certificate is not signed by the CA in "), e.getMessage());
        e = assertThrows(IOException.class,
                () -> handshake(verifyPeer(), client(new Recording(certs.expiredAlice())), "TLSv1.3"));
        assertTrue(e.getMessage().startsWith("the client's certificate has expired; give the client a certificate"
                + " signed by "), e.getMessage());
    }
}
