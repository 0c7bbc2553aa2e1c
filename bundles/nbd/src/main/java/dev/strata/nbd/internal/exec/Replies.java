package dev.strata.nbd.internal.exec;

import dev.strata.nbd.internal.protocol.Request;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Where the executor sends the outcome of a request. The transmission layer turns each call into
 * a simple or structured reply on the wire; the executor never sees bytes of the protocol.
 */
public interface Replies {

    /** Success without data. */
    void ok(Request request) throws IOException;

    /** Failure with an errno value and a message for a human. */
    void error(Request request, int errno, String message) throws IOException;

    /**
     * Success of a READ: {@code data} holds exactly the requested bytes (position to limit). The
     * sink takes ownership of {@code data}, a {@link BufferPool} buffer, and releases it to the
     * pool once it has been sent (or dropped).
     */
    void data(Request request, ByteBuffer data) throws IOException;

    /**
     * Success of BLOCK_STATUS: {@code count} extents, {@code lengths[i]} bytes each with
     * {@code flags[i]} (NBD_STATE_*), for metadata context {@code contextId}.
     */
    void extents(Request request, int contextId, int[] lengths, int[] flags, int count) throws IOException;
}
