package dev.strata.nbd.internal.protocol;

import java.io.IOException;

/** The peer broke the protocol in a way that leaves no safe way to continue: the connection is dropped. */
public class ProtocolException extends IOException {
    private static final long serialVersionUID = 1L;

    public ProtocolException(String message) {
        super(message);
    }
}
