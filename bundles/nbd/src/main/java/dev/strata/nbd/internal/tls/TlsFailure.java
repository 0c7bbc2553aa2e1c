package dev.strata.nbd.internal.tls;

import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.util.Locale;
import org.bouncycastle.tls.AlertDescription;
import org.bouncycastle.tls.TlsFatalAlert;
import org.bouncycastle.tls.TlsFatalAlertReceived;

/**
 * Turns a failed TLS handshake into one line a user can act on: JSSE and BouncyCastle report
 * certificate and key problems as nested exceptions with their own wording.
 */
public final class TlsFailure {
    private TlsFailure() {
    }

    /** What went wrong in a client's handshake with {@code server}, as one sentence. */
    public static String describe(Throwable e, String server) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof CertificateExpiredException) {
                return "the TLS certificate of " + server + " has expired (" + t.getMessage() + ")";
            }
            if (t instanceof CertificateNotYetValidException) {
                return "the TLS certificate of " + server + " is not valid yet (" + t.getMessage() + ")";
            }
            if (t instanceof CertPathValidatorException v && v.getReason() != null
                    && v.getReason().toString().contains("EXPIRED")) {
                return "the TLS certificate of " + server + " has expired";
            }
            String m = t.getMessage() == null ? "" : t.getMessage();
            String lower = m.toLowerCase(Locale.ROOT);
            if (lower.contains("unable to find valid certification path")
                    || t instanceof java.security.cert.CertPathBuilderException) {
                return "the TLS certificate of " + server + " is not signed by the CA in the client's ca-cert.pem"
                        + " (self-signed or another CA's)";
            }
            if (lower.contains("no subject alternative") || lower.contains("doesn't match any of the subject")) {
                return "the TLS certificate of " + server + " does not name that host (" + m
                        + "); connect by a name in its certificate or give tls-hostname=";
            }
            if (t instanceof TlsFatalAlertReceived r) {
                return "the server " + server + " refused the TLS handshake (alert "
                        + AlertDescription.getText(r.getAlertDescription()) + ")"
                        + pskHint(r.getAlertDescription());
            }
            if (t instanceof TlsFatalAlert a && a.getAlertDescription() != AlertDescription.internal_error) {
                return "the TLS handshake with " + server + " failed (" + AlertDescription.getText(a.getAlertDescription())
                        + (m.isEmpty() || m.equals(AlertDescription.getText(a.getAlertDescription())) ? "" : ": " + m)
                        + ")" + pskHint(a.getAlertDescription());
            }
        }
        String m = e.getMessage();
        return "the TLS handshake with " + server + " failed" + (m == null || m.isBlank() ? "" : ": " + m);
    }

    /**
     * Why the server refused a client's X.509 handshake, as one sentence saying what to do;
     * {@code e}'s own message when it is not about the client's certificate.
     *
     * @param ca the export's ca-cert.pem, which client certificates must be signed by
     */
    public static String describeClient(Throwable e, java.nio.file.Path ca) {
        String renew = "; give the client a certificate signed by " + ca;
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof CertificateExpiredException
                    || t instanceof CertPathValidatorException v && v.getReason() != null
                    && v.getReason().toString().contains("EXPIRED")) {
                return "the client's certificate has expired" + renew;
            }
            if (t instanceof CertificateNotYetValidException) {
                return "the client's certificate is not valid yet (" + t.getMessage() + "); check the clocks" + renew;
            }
            String m = t.getMessage() == null ? "" : t.getMessage();
            if (m.contains("unable to find valid certification path")
                    || t instanceof java.security.cert.CertPathBuilderException) {
                return "the client's certificate is not signed by the CA in " + ca + " (self-signed or another CA's)"
                        + renew;
            }
            if (m.contains("Empty client certificate chain")) {
                return "the client sent no certificate, and this export verifies clients (--tls-verify-peer or"
                        + " --allow): give it client-cert.pem and client-key.pem signed by " + ca
                        + " (libnbd: ?tls-certificates=DIR; qemu: tls-creds-x509,dir=DIR)";
            }
        }
        return e.getMessage();
    }

    private static String pskHint(short alert) {
        return alert == AlertDescription.decrypt_error || alert == AlertDescription.handshake_failure
                || alert == AlertDescription.unknown_psk_identity
                ? "; check the PSK user name and key" : "";
    }
}
