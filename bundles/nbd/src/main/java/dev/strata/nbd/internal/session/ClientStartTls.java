package dev.strata.nbd.internal.session;

import java.io.IOException;
import java.nio.channels.ByteChannel;

/**
 * How the client side of the negotiation asks for TLS: it sends {@code NBD_OPT_STARTTLS} first
 * and, once acknowledged, hands the connection to the transport for the handshake. The session
 * decides what a refusal means: with {@link #required()} the connection is given up (never a
 * plaintext fallback), otherwise negotiation goes on in plaintext.
 */
public interface ClientStartTls {
    boolean required();

    /** Runs the client side of the TLS handshake; returns the channel for the rest of the negotiation. */
    ByteChannel startTls() throws IOException;
}
