package dev.strata.nbd.internal.server;

import dev.strata.nbd.internal.protocol.Nbd;
import dev.strata.nbd.internal.protocol.Request;
import dev.strata.nbd.internal.protocol.RequestCodec;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;

/**
 * Buffered reading of requests from a blocking channel: one {@code read} call fetches as many
 * headers (and small payloads) as the client has sent, so a deep queue of small requests costs
 * far fewer system calls than one read per header. Large payloads are read straight into their
 * destination. Not thread-safe: the connection's read lock guards it.
 */
final class SocketInput {
    private final ReadableByteChannel channel;
    private final ByteBuffer buf;

    SocketInput(ReadableByteChannel channel, int capacity) {
        this.channel = channel;
        this.buf = ByteBuffer.allocateDirect(capacity);
        this.buf.flip();
    }

    /**
     * Reads the next header.
     *
     * @return false on a clean end of stream between requests
     * @throws EOFException if the stream ends inside a header
     */
    boolean readHeader(Request out) throws IOException {
        while (buf.remaining() < Nbd.REQUEST_HEADER_SIZE) {
            buf.compact();
            int n;
            try {
                n = channel.read(buf);
            } finally {
                buf.flip();
            }
            if (n < 0) {
                if (buf.hasRemaining()) {
                    throw new EOFException("connection closed inside a request header");
                }
                return false;
            }
        }
        RequestCodec.decode(buf, out);
        return true;
    }

    /** Fills {@code dst} (position to limit) from buffered bytes and then the channel. */
    void readFully(ByteBuffer dst) throws IOException {
        if (buf.hasRemaining()) {
            int n = Math.min(buf.remaining(), dst.remaining());
            ByteBuffer part = buf.duplicate();
            part.limit(part.position() + n);
            dst.put(part);
            buf.position(buf.position() + n);
        }
        while (dst.hasRemaining()) {
            if (channel.read(dst) < 0) {
                throw new EOFException("connection closed inside a write payload");
            }
        }
    }

    /** Discards {@code n} bytes of payload without storing them. */
    void skip(long n) throws IOException {
        while (n > 0) {
            if (!buf.hasRemaining()) {
                buf.clear();
                int r;
                try {
                    r = channel.read(buf);
                } finally {
                    buf.flip();
                }
                if (r < 0) {
                    throw new EOFException("connection closed inside a write payload");
                }
            }
            int k = (int) Math.min(n, buf.remaining());
            buf.position(buf.position() + k);
            n -= k;
        }
    }
}
