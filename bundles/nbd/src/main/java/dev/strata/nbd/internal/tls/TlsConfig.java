package dev.strata.nbd.internal.tls;

import dev.strata.api.InvalidArgumentException;
import dev.strata.nbd.internal.session.TlsMode;
import java.util.List;

/**
 * A listener's TLS setting: the mode and, unless it is OFF, the credentials.
 *
 * @param mode         off, on (STARTTLS offered) or require
 * @param credentials  null exactly when the mode is OFF
 * @param verifyPeer   clients must present a certificate signed by the credentials' CA
 * @param allow        client subjects admitted (implies verifyPeer); empty: any the CA signed
 */
public record TlsConfig(TlsMode mode, TlsCredentials credentials, boolean verifyPeer, ClientAllowList allow) {
    public static final TlsConfig OFF = new TlsConfig(TlsMode.OFF, null);

    /** Server authentication only. */
    public TlsConfig(TlsMode mode, TlsCredentials credentials) {
        this(mode, credentials, false, new ClientAllowList(List.of()));
    }

    public TlsConfig {
        if (allow == null) {
            allow = new ClientAllowList(List.of());
        }
        verifyPeer |= !allow.isEmpty();
        if (mode == null) {
            mode = TlsMode.OFF;
        }
        if (mode != TlsMode.OFF && credentials == null) {
            throw new InvalidArgumentException("nbd export: --tls=" + mode.text()
                    + " needs --tls-creds DIR (a directory with server-cert.pem and server-key.pem)");
        }
        if (verifyPeer && mode != TlsMode.REQUIRE) {
            // with ON a plaintext client would walk around the client check
            throw new InvalidArgumentException("nbd export: --tls-verify-peer and --allow need --tls=require");
        }
        if (mode == TlsMode.OFF) {
            credentials = null;
        }
        if (verifyPeer && !credentials.canVerifyClients()) {
            throw new InvalidArgumentException("nbd export: --tls-verify-peer needs the CA that signs client certificates"
                    + " as ca-cert.pem in " + credentials.dir());
        }
    }

    /** Whether two exports may share a listener: same mode and the same credentials directory. */
    public boolean sameAs(TlsConfig o) {
        return mode == o.mode && verifyPeer == o.verifyPeer && allow.entries().equals(o.allow.entries())
                && (credentials == null ? o.credentials == null
                : o.credentials != null && credentials.dir().equals(o.credentials.dir()));
    }

    public String describe() {
        return mode == TlsMode.OFF ? "off" : mode.text() + " (" + credentials.dir()
                + (verifyPeer ? ", client certificates verified" : "") + (allow.isEmpty() ? "" : ", allow " + allow.entries())
                + ")";
    }
}
