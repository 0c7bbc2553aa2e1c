package dev.strata.nbd.internal.session;

import java.io.IOException;
import java.nio.channels.ByteChannel;

/**
 * How the negotiation turns the plaintext connection into a TLS one after it acknowledged
 * {@code NBD_OPT_STARTTLS}. The transport belongs to the server layer; the session only decides
 * when to call it and resets what was negotiated before.
 */
public interface TlsUpgrade {
    TlsMode mode();

    /**
     * Runs the server side of the TLS handshake on the connection.
     *
     * @return the channel that carries the rest of the connection, encrypted
     * @throws IOException if the handshake failed (the caller drops the connection)
     */
    ByteChannel startTls() throws IOException;
}
