package dev.strata.nbd.internal.tls;

import dev.strata.api.InvalidArgumentException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A server's X.509 credentials from a directory laid out as qemu and libnbd expect:
 * {@code server-cert.pem} (the server's certificate, optionally followed by intermediates),
 * {@code server-key.pem} (its private key) and {@code ca-cert.pem} (the CA, needed only to
 * verify client certificates; see {@link ClientCertificateTrust} for why it is not named to clients).
 */
public final class TlsCredentials {
    public static final String CA_CERT = "ca-cert.pem";
    public static final String SERVER_CERT = "server-cert.pem";
    public static final String SERVER_KEY = "server-key.pem";

    private final Path dir;
    private final SSLContext context;
    private final X509Certificate certificate;

    private final boolean canVerifyClients;

    private TlsCredentials(Path dir, SSLContext context, X509Certificate certificate, boolean canVerifyClients) {
        this.dir = dir;
        this.context = context;
        this.certificate = certificate;
        this.canVerifyClients = canVerifyClients;
    }

    /** Whether ca-cert.pem was there, so client certificates can be verified. */
    public boolean canVerifyClients() {
        return canVerifyClients;
    }

    /**
     * Loads and checks the credentials: the key must belong to the certificate.
     *
     * @throws InvalidArgumentException with one line saying what is wrong and what to do
     */
    public static TlsCredentials load(Path dir) {
        if (dir == null || !Files.isDirectory(dir)) {
            throw new InvalidArgumentException("TLS: --tls-creds " + dir + " is not a directory; give the directory"
                    + " holding server-cert.pem and server-key.pem");
        }
        List<X509Certificate> chain = PemFiles.certificates(dir.resolve(SERVER_CERT));
        PrivateKey key = PemFiles.privateKey(dir.resolve(SERVER_KEY));
        if (!matches(key, chain.get(0))) {
            throw new InvalidArgumentException("TLS: " + dir.resolve(SERVER_KEY) + " is not the key of the"
                    + " certificate in " + dir.resolve(SERVER_CERT) + "; give the pair that belongs together");
        }
        try {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            char[] pw = new char[0];
            ks.setKeyEntry("server", key, pw, chain.toArray(X509Certificate[]::new));
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, pw);
            javax.net.ssl.TrustManager[] trust = null;
            Path ca = dir.resolve(CA_CERT);
            if (Files.exists(ca)) {
                KeyStore ts = KeyStore.getInstance("PKCS12");
                ts.load(null, null);
                int i = 0;
                for (X509Certificate c : PemFiles.certificates(ca)) {
                    ts.setCertificateEntry("ca" + i++, c);
                }
                TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
                tmf.init(ts);
                trust = ClientCertificateTrust.wrap(tmf.getTrustManagers());
            }
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(kmf.getKeyManagers(), trust, null);
            return new TlsCredentials(dir, ctx, chain.get(0), trust != null);
        } catch (GeneralSecurityException | java.io.IOException e) {
            throw new InvalidArgumentException("TLS: the credentials in " + dir + " cannot be used: " + e.getMessage());
        }
    }

    /** Signs a probe with the key and checks it with the certificate's public key. */
    private static boolean matches(PrivateKey key, X509Certificate cert) {
        String alg = switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            case "RSASSA-PSS" -> null;
            default -> key.getAlgorithm(); // Ed25519, Ed448, EdDSA
        };
        if (alg == null) {
            return true; // PSS parameters vary; the handshake will tell
        }
        try {
            byte[] probe = "strata-nbd-key-check".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            java.security.Signature s = java.security.Signature.getInstance(alg);
            s.initSign(key);
            s.update(probe);
            byte[] sig = s.sign();
            s.initVerify(cert.getPublicKey());
            s.update(probe);
            return s.verify(sig);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    /** The files a directory's credentials are made of (watched for changes). */
    static List<Path> files(Path dir) {
        return List.of(dir.resolve(SERVER_CERT), dir.resolve(SERVER_KEY), dir.resolve(CA_CERT));
    }

    public Path dir() {
        return dir;
    }

    public SSLContext context() {
        return context;
    }

    /** The server certificate's subject, for logs and status. */
    public String subject() {
        return certificate.getSubjectX500Principal().getName();
    }
}
