package dev.strata.nbd.internal.tls;

import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * The server's check of client certificates: the JDK's PKIX trust manager for the export's
 * {@code ca-cert.pem}, unchanged, except that the CertificateRequest names no CA
 * ({@link #getAcceptedIssuers()} is empty, so JSSE sends no {@code certificate_authorities}).
 *
 * <p>Why: gnutls clients (libnbd, qemu; seen with gnutls 3.7) that are given a CA list pick
 * their certificate by CA <em>and</em> by key type, and take the key types from the request's
 * {@code signature_algorithms}, where TLS 1.3's {@code rsa_pss_rsae_*} count as RSA-PSS keys, not
 * RSA. JDK 25 lists in TLS 1.3 only the schemes RFC 8446 allows for CertificateVerify (no
 * {@code rsa_pkcs1_*}), so an ordinary RSA client certificate (certtool's default) matched
 * nothing and the client sent none. Without a CA list a gnutls client sends the one certificate
 * it has and signs with {@code rsa_pss_rsae_sha256}. Nothing is accepted that was not before:
 * the list is only a hint to the client; the chain is verified against the same CA.
 */
final class ClientCertificateTrust extends X509ExtendedTrustManager {
    private static final X509Certificate[] NONE = new X509Certificate[0];

    private final X509ExtendedTrustManager pkix;

    private ClientCertificateTrust(X509ExtendedTrustManager pkix) {
        this.pkix = pkix;
    }

    /** The factory's trust managers with each X.509 one wrapped. */
    static TrustManager[] wrap(TrustManager[] managers) {
        TrustManager[] out = managers.clone();
        for (int i = 0; i < out.length; i++) {
            if (out[i] instanceof X509ExtendedTrustManager x) {
                out[i] = new ClientCertificateTrust(x);
            }
        }
        return out;
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
        return NONE;
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        pkix.checkClientTrusted(chain, authType);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
            throws CertificateException {
        pkix.checkClientTrusted(chain, authType, socket);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
            throws CertificateException {
        pkix.checkClientTrusted(chain, authType, engine);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        pkix.checkServerTrusted(chain, authType);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
            throws CertificateException {
        pkix.checkServerTrusted(chain, authType, socket);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
            throws CertificateException {
        pkix.checkServerTrusted(chain, authType, engine);
    }
}
