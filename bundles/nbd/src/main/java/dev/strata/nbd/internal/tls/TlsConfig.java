package dev.strata.nbd.internal.tls;

import dev.strata.api.InvalidArgumentException;
import dev.strata.nbd.internal.session.TlsMode;

/**
 * A listener's TLS setting: the mode and, unless it is OFF, the credentials.
 *
 * @param mode         off, on (STARTTLS offered) or require
 * @param credentials  null exactly when the mode is OFF
 */
public record TlsConfig(TlsMode mode, TlsCredentials credentials) {
    public static final TlsConfig OFF = new TlsConfig(TlsMode.OFF, null);

    public TlsConfig {
        if (mode == null) {
            mode = TlsMode.OFF;
        }
        if (mode != TlsMode.OFF && credentials == null) {
            throw new InvalidArgumentException("nbd export: --tls=" + mode.text()
                    + " needs --tls-creds DIR (a directory with server-cert.pem and server-key.pem)");
        }
        if (mode == TlsMode.OFF) {
            credentials = null;
        }
    }

    /** Whether two exports may share a listener: same mode and the same credentials directory. */
    public boolean sameAs(TlsConfig o) {
        return mode == o.mode && (credentials == null ? o.credentials == null
                : o.credentials != null && credentials.dir().equals(o.credentials.dir()));
    }

    public String describe() {
        return mode == TlsMode.OFF ? "off" : mode.text() + " (" + credentials.dir() + ")";
    }
}
