package dev.strata.nbd.internal.tls;

import dev.strata.api.InvalidArgumentException;
import dev.strata.nbd.internal.session.TlsMode;
import java.io.IOException;
import java.nio.channels.SocketChannel;
import java.util.List;

/**
 * A listener's TLS setting: the mode and, unless it is OFF, either X.509 credentials (JSSE) or a
 * PSK key file (BouncyCastle). Both are re-read when their files change ({@link Reloading}), at
 * the next handshake: live connections keep the session they negotiated.
 */
public final class TlsConfig {
    public static final TlsConfig OFF = new TlsConfig(TlsMode.OFF, null);

    private final TlsMode mode;
    private final boolean verifyPeer;
    private final ClientAllowList allow;
    private final Reloading<TlsCredentials> credentials;
    private final Reloading<PskKeys> psk;

    /** Server authentication only. */
    public TlsConfig(TlsMode mode, TlsCredentials credentials) {
        this(mode, credentials, false, new ClientAllowList(List.of()));
    }

    /**
     * X.509.
     *
     * @param verifyPeer clients must present a certificate signed by the credentials' CA
     * @param allow      client subjects admitted (implies verifyPeer); empty or null: any the CA signed
     */
    public TlsConfig(TlsMode mode, TlsCredentials credentials, boolean verifyPeer, ClientAllowList allow) {
        this(mode, credentials, verifyPeer, allow, null);
    }

    /** PSK: the users of the key file, each with its key. */
    public static TlsConfig psk(TlsMode mode, PskKeys keys) {
        if (keys == null) {
            throw new InvalidArgumentException("nbd:export: --tls=" + mode.text() + " needs --tls-psk FILE");
        }
        return new TlsConfig(mode, null, false, null, keys);
    }

    private TlsConfig(TlsMode mode, TlsCredentials credentials, boolean verifyPeer, ClientAllowList allow,
            PskKeys psk) {
        if (allow == null) {
            allow = new ClientAllowList(List.of());
        }
        verifyPeer |= !allow.isEmpty();
        if (mode == null) {
            mode = TlsMode.OFF;
        }
        if (mode != TlsMode.OFF && credentials == null && psk == null) {
            throw new InvalidArgumentException("nbd:export: --tls=" + mode.text()
                    + " needs --tls-creds DIR (a directory with server-cert.pem and server-key.pem) or --tls-psk FILE");
        }
        if (verifyPeer && mode != TlsMode.REQUIRE) {
            // with ON a plaintext client would walk around the client check
            throw new InvalidArgumentException("nbd:export: --tls-verify-peer and --allow need --tls=require");
        }
        if (mode == TlsMode.OFF) {
            credentials = null;
            psk = null;
        }
        if (verifyPeer && psk != null) {
            throw new InvalidArgumentException("nbd:export: --tls-verify-peer and --allow are for client certificates;"
                    + " with --tls-psk the key file's users are the allow-list");
        }
        if (verifyPeer && !credentials.canVerifyClients()) {
            throw new InvalidArgumentException("nbd:export: --tls-verify-peer needs the CA that signs client certificates"
                    + " as ca-cert.pem in " + credentials.dir());
        }
        this.mode = mode;
        this.verifyPeer = verifyPeer;
        this.allow = allow;
        TlsCredentials c = credentials;
        this.credentials = c == null ? null : new Reloading<>(c, TlsCredentials.files(c.dir()),
                () -> TlsCredentials.load(c.dir()), "TLS credentials in " + c.dir());
        PskKeys k = psk;
        this.psk = k == null ? null : new Reloading<>(k, List.of(k.file()), () -> PskKeys.load(k.file()),
                "TLS-PSK keys in " + k.file());
    }

    public TlsMode mode() {
        return mode;
    }

    /** The X.509 credentials now in use (re-read if their files changed); null for PSK or OFF. */
    public TlsCredentials credentials() {
        return credentials == null ? null : credentials.get();
    }

    /** The PSK keys now in use (re-read if the file changed); null for X.509 or OFF. */
    public PskKeys psk() {
        return psk == null ? null : psk.get();
    }

    public boolean verifyPeer() {
        return verifyPeer;
    }

    public ClientAllowList allow() {
        return allow;
    }

    /**
     * Runs the server side of the TLS handshake on an accepted socket and checks the client
     * (allow-list for X.509; for PSK the key file already decided).
     *
     * @throws IOException if the handshake fails or the client is not admitted; the caller drops the connection
     */
    public TlsChannel serverHandshake(SocketChannel raw) throws IOException {
        if (psk != null) {
            return PskTls.serverHandshake(raw, psk::get);
        }
        TlsCredentials c = credentials.get();
        TlsChannel t;
        try {
            t = TlsChannel.serverHandshake(raw, c.context(), new TlsOptions(verifyPeer));
        } catch (IOException e) {
            String why = verifyPeer ? TlsFailure.describeClient(e, c.dir().resolve(TlsCredentials.CA_CERT)) : null;
            if (why == null || why.equals(e.getMessage())) {
                throw e;
            }
            throw new IOException(why, e);
        }
        allow.check(t.session());
        return t;
    }

    /** Whether two exports may share a listener: same mode, client checks and credentials. */
    public boolean sameAs(TlsConfig o) {
        return mode == o.mode && verifyPeer == o.verifyPeer && allow.entries().equals(o.allow.entries())
                && java.util.Objects.equals(source(), o.source());
    }

    private String source() {
        return credentials != null ? "x509:" + credentials.first().dir() : psk != null ? "psk:" + psk.first().file() : null;
    }

    public String describe() {
        if (mode == TlsMode.OFF) {
            return "off";
        }
        String what = psk != null ? "PSK " + psk.first().file() : credentials.first().dir().toString();
        return mode.text() + " (" + what + (verifyPeer ? ", client certificates verified" : "")
                + (allow.isEmpty() ? "" : ", allow " + allow.entries()) + ")";
    }
}
