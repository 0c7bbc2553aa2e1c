package dev.strata.nbd.internal.tls;

import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Vector;
import java.util.function.Supplier;
import org.bouncycastle.tls.AlertDescription;
import org.bouncycastle.tls.BasicTlsPSKExternal;
import org.bouncycastle.tls.BasicTlsPSKIdentity;
import org.bouncycastle.tls.CipherSuite;
import org.bouncycastle.tls.KeyExchangeAlgorithm;
import org.bouncycastle.tls.PSKTlsClient;
import org.bouncycastle.tls.PSKTlsServer;
import org.bouncycastle.tls.ProtocolVersion;
import org.bouncycastle.tls.PskIdentity;
import org.bouncycastle.tls.TlsAuthentication;
import org.bouncycastle.tls.TlsClientProtocol;
import org.bouncycastle.tls.TlsFatalAlert;
import org.bouncycastle.tls.TlsPSKExternal;
import org.bouncycastle.tls.TlsPSKIdentityManager;
import org.bouncycastle.tls.TlsServerProtocol;
import org.bouncycastle.tls.TlsUtils;
import org.bouncycastle.tls.crypto.TlsCrypto;
import org.bouncycastle.tls.crypto.impl.bc.BcTlsCrypto;

/**
 * TLS-PSK with BouncyCastle's TLS API (the JDK's JSSE has no external pre-shared keys), over the
 * socket's own streams. TLS 1.3 with {@code psk_dhe_ke} (the PSK plus an ECDHE/DHE exchange, so
 * a leaked key does not open recorded sessions) is preferred; TLS 1.2 falls back to the
 * {@code ECDHE_PSK} and {@code DHE_PSK} suites. Plain {@code PSK} suites (no forward secrecy) and
 * anything older than TLS 1.2 are not offered. The PSK identity is the user name, as GnuTLS
 * (qemu, nbdkit, libnbd) sends it; external PSKs use SHA-256, GnuTLS's default.
 *
 * <p>The crypto is BouncyCastle's lightweight one ({@link BcTlsCrypto}): nothing is registered
 * with the JCA.
 */
public final class PskTls {
    /** TLS 1.3 suites whose hash is SHA-256, the external PSKs' hash; then the TLS 1.2 (EC)DHE-PSK ones. */
    private static final int[] SUITES = {
        CipherSuite.TLS_AES_128_GCM_SHA256,
        CipherSuite.TLS_CHACHA20_POLY1305_SHA256,
        CipherSuite.TLS_ECDHE_PSK_WITH_CHACHA20_POLY1305_SHA256,
        CipherSuite.TLS_ECDHE_PSK_WITH_AES_128_CBC_SHA256,
        CipherSuite.TLS_ECDHE_PSK_WITH_AES_256_CBC_SHA384,
        CipherSuite.TLS_DHE_PSK_WITH_AES_256_GCM_SHA384,
        CipherSuite.TLS_DHE_PSK_WITH_AES_128_GCM_SHA256,
        CipherSuite.TLS_DHE_PSK_WITH_CHACHA20_POLY1305_SHA256,
    };

    private static final SecureRandom RANDOM = new SecureRandom();

    private PskTls() {
    }

    private static TlsCrypto crypto() {
        return new BcTlsCrypto(RANDOM);
    }

    /**
     * Runs the server side of a PSK handshake on {@code raw}: the client's identity must be a user
     * of {@code keys} and its key that user's key.
     *
     * @throws IOException if the handshake fails (unknown user, wrong key, no common suite); the caller closes the socket
     */
    public static TlsChannel serverHandshake(java.nio.channels.SocketChannel raw, Supplier<PskKeys> keys)
            throws IOException {
        Socket s = raw.socket();
        TlsServerProtocol protocol = new TlsServerProtocol(s.getInputStream(), s.getOutputStream());
        Server server = new Server(crypto(), keys.get());
        protocol.accept(server);
        return new TlsChannel(raw, null, version(server.version()), server.user,
                protocol.getInputStream(), protocol.getOutputStream());
    }

    /**
     * Runs the client side of a PSK handshake as {@code user} with {@code key}.
     *
     * @throws IOException if the server refuses (another key, unknown user) or offers no PSK
     */
    public static TlsChannel clientHandshake(java.nio.channels.SocketChannel raw, String user, byte[] key,
            int timeoutMillis) throws IOException {
        Socket s = raw.socket();
        s.setSoTimeout(timeoutMillis);
        TlsClientProtocol protocol = new TlsClientProtocol(s.getInputStream(), s.getOutputStream());
        Client client = new Client(crypto(), user, key);
        protocol.connect(client);
        s.setSoTimeout(0);
        return new TlsChannel(raw, null, version(client.version()), user,
                protocol.getInputStream(), protocol.getOutputStream());
    }

    private static String version(ProtocolVersion v) {
        return v == null ? "TLS" : v.getName().replace(" ", "v"); // "TLS 1.3" -> "TLSv1.3", as JSSE names it
    }

    private static ProtocolVersion[] versions() {
        return ProtocolVersion.TLSv13.downTo(ProtocolVersion.TLSv12);
    }

    /** Looks the identity up in the key file, for TLS 1.3 (external PSK) and 1.2 (PSK key exchange). */
    private static final class Server extends PSKTlsServer {
        private final PskKeys keys;
        volatile String user;
        private String offered = "(none)";

        Server(TlsCrypto crypto, PskKeys keys) {
            super(crypto, new Identities(keys));
            this.keys = keys;
        }

        @Override
        protected ProtocolVersion[] getSupportedVersions() {
            return versions();
        }

        @Override
        protected int[] getSupportedCipherSuites() {
            return TlsUtils.getSupportedCipherSuites(getCrypto(), SUITES);
        }

        ProtocolVersion version() {
            return context.getServerVersion();
        }

        @Override
        public TlsPSKExternal getExternalPSK(Vector identities) {
            StringBuilder names = new StringBuilder();
            for (Object o : identities) {
                byte[] id = ((PskIdentity) o).getIdentity();
                String name = new String(id, StandardCharsets.UTF_8);
                names.append(names.length() == 0 ? "'" : ", '").append(name).append('\'');
                byte[] key = keys.key(name);
                if (key != null) {
                    user = name;
                    return new BasicTlsPSKExternal(id, getCrypto().createSecret(key));
                }
            }
            offered = names.length() == 0 ? "(none)" : names.toString();
            return null; // unknown user: no PSK, and getCredentials refuses
        }

        @Override
        public org.bouncycastle.tls.TlsCredentials getCredentials() throws IOException {
            if (context.getSecurityParametersHandshake().getKeyExchangeAlgorithm() == KeyExchangeAlgorithm.NULL) {
                // TLS 1.3 without an accepted PSK: there is no certificate to fall back on
                throw new TlsFatalAlert(AlertDescription.unknown_psk_identity,
                        "the client's PSK user " + offered + " is not in " + keys.file());
            }
            return super.getCredentials();
        }

        @Override
        public void notifyHandshakeComplete() throws IOException {
            super.notifyHandshakeComplete();
            if (user == null) {
                byte[] id = context.getSecurityParametersConnection().getPSKIdentity();
                user = id == null ? null : new String(id, StandardCharsets.UTF_8);
            }
        }
    }

    private record Identities(PskKeys keys) implements TlsPSKIdentityManager {
        @Override
        public byte[] getHint() {
            return null;
        }

        @Override
        public byte[] getPSK(byte[] identity) {
            return keys.key(new String(identity, StandardCharsets.UTF_8));
        }
    }

    /** Offers the key as a TLS 1.3 external PSK and for TLS 1.2's PSK key exchange; never accepts a certificate instead. */
    private static final class Client extends PSKTlsClient {
        private final byte[] identity;
        private final byte[] key;

        Client(TlsCrypto crypto, String user, byte[] key) {
            super(crypto, new BasicTlsPSKIdentity(user, key));
            this.identity = user.getBytes(StandardCharsets.UTF_8);
            this.key = key;
        }

        @Override
        protected ProtocolVersion[] getSupportedVersions() {
            return versions();
        }

        @Override
        protected int[] getSupportedCipherSuites() {
            return TlsUtils.getSupportedCipherSuites(getCrypto(), SUITES);
        }

        ProtocolVersion version() {
            return context.getServerVersion();
        }

        @Override
        public Vector getExternalPSKs() {
            Vector<TlsPSKExternal> v = new Vector<>();
            v.add(new BasicTlsPSKExternal(identity, getCrypto().createSecret(key)));
            return v;
        }

        @Override
        public TlsAuthentication getAuthentication() throws IOException {
            // only reached when the server did not take the PSK and sent a certificate instead
            throw new TlsFatalAlert(AlertDescription.handshake_failure, "the server did not accept the PSK");
        }
    }
}
