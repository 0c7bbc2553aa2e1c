package dev.strata.nbd.internal.tls;

import dev.strata.api.InvalidArgumentException;
import dev.strata.nbd.internal.session.TlsMode;
import java.io.IOException;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * How the {@code nbd} target speaks TLS to a server: X.509 in libnbd's client layout (a directory
 * with {@code ca-cert.pem}, the CA the server's certificate must chain to, and optionally
 * {@code client-cert.pem} + {@code client-key.pem}; no directory: the JDK's default trust
 * anchors), the server's certificate also having to name {@code hostname}; or PSK as
 * {@code user} with that user's key from a psktool file. Credentials are read once, when the
 * target is created, so a typo fails {@code dev:create} at once.
 */
public final class ClientTls {
    public static final ClientTls OFF = new ClientTls(TlsMode.OFF, null, null, null, null, null);

    private final TlsMode mode;
    private final SSLContext context;
    private final String hostname;
    private final String user;
    private final byte[] key;
    private final String describe;

    private ClientTls(TlsMode mode, SSLContext context, String hostname, String user, byte[] key, String describe) {
        this.mode = mode;
        this.context = context;
        this.hostname = hostname;
        this.user = user;
        this.key = key;
        this.describe = describe;
    }

    /** X.509; {@code dir} may be null for the JDK's default trust anchors. */
    public static ClientTls x509(TlsMode mode, Path dir, String hostname) {
        try {
            KeyManager[] keys = null;
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            if (dir == null) {
                tmf.init((KeyStore) null);
            } else {
                if (!Files.isDirectory(dir)) {
                    throw new InvalidArgumentException("nbd: tls-creds=" + dir + " is not a directory; give the"
                            + " directory holding ca-cert.pem (and client-cert.pem, client-key.pem if the server asks)");
                }
                Path ca = dir.resolve(TlsCredentials.CA_CERT);
                if (!Files.exists(ca)) {
                    throw new InvalidArgumentException("nbd: " + ca + " does not exist; the client needs the CA"
                            + " that signed the server's certificate as ca-cert.pem");
                }
                KeyStore ts = KeyStore.getInstance("PKCS12");
                ts.load(null, null);
                int i = 0;
                for (X509Certificate c : PemFiles.certificates(ca)) {
                    ts.setCertificateEntry("ca" + i++, c);
                }
                tmf.init(ts);
                Path cert = dir.resolve("client-cert.pem");
                Path pk = dir.resolve("client-key.pem");
                if (Files.exists(cert) != Files.exists(pk)) {
                    throw new InvalidArgumentException("nbd: " + dir + " has only one of client-cert.pem and"
                            + " client-key.pem; give both, or neither");
                }
                if (Files.exists(cert)) {
                    List<X509Certificate> chain = PemFiles.certificates(cert);
                    PrivateKey k = PemFiles.privateKey(pk);
                    KeyStore ks = KeyStore.getInstance("PKCS12");
                    ks.load(null, null);
                    ks.setKeyEntry("client", k, new char[0], chain.toArray(X509Certificate[]::new));
                    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                    kmf.init(ks, new char[0]);
                    keys = kmf.getKeyManagers();
                }
            }
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(keys, tmf.getTrustManagers(), null);
            return new ClientTls(mode, ctx, hostname, null, null,
                    "X.509" + (dir == null ? ", the JDK's trusted CAs" : ", CA " + dir.resolve(TlsCredentials.CA_CERT))
                            + (keys == null ? "" : ", client certificate"));
        } catch (GeneralSecurityException | IOException e) {
            throw new InvalidArgumentException("nbd: the TLS credentials in " + dir + " cannot be used: " + e.getMessage());
        }
    }

    /** PSK as {@code user}, whose key must be in {@code keys}. */
    public static ClientTls psk(TlsMode mode, PskKeys keys, String user) {
        return new ClientTls(mode, null, null, user, keys.clientKey(user), "PSK user " + user + " from " + keys.file());
    }

    public TlsMode mode() {
        return mode;
    }

    /**
     * Runs the client side of the TLS handshake after the server acknowledged STARTTLS.
     *
     * @param server for messages: host:port
     * @throws IOException with one line saying why (certificate expired, another CA, wrong key, …)
     */
    public TlsChannel handshake(SocketChannel raw, String server, int timeoutMillis) throws IOException {
        try {
            return context != null ? TlsChannel.clientHandshake(raw, context, hostname, timeoutMillis)
                    : PskTls.clientHandshake(raw, user, key, timeoutMillis);
        } catch (IOException | RuntimeException e) {
            throw new IOException(TlsFailure.describe(e, server), e);
        }
    }

    @Override
    public String toString() {
        return mode == TlsMode.OFF ? "off" : mode.text() + " (" + describe + ")";
    }
}
