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
 * destination.
 *
 * <p>After a large payload ({@link #STREAM_PAYLOAD} or more) the next header is read alone
 * (exactly the bytes it lacks): a buffered read there would pull up to a buffer's worth of the
 * following payload into this buffer, to be copied again into the payload's own buffer. For a
 * stream of 1 MiB writes that copy cost more CPU than the extra 28-byte read. Any other
 * request puts the reader back into buffered mode. Not thread-safe: the connection's read lock
 * guards it.
 */
final class SocketInput {
    /** A payload at least this long makes the next header be read alone. */
    static final int STREAM_PAYLOAD = 32 * 1024;

    private final ReadableByteChannel channel;
    private final ByteBuffer buf;
    /** The last request had a large payload: read the next header alone. */
    private boolean streaming;

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
            if (streaming) {
                buf.limit(Nbd.REQUEST_HEADER_SIZE); // position < header size after compact
            }
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
        streaming = false;
        return true;
    }

    /** Fills {@code dst} (position to limit) from buffered bytes and then the channel. */
    void readFully(ByteBuffer dst) throws IOException {
        streaming = dst.remaining() >= STREAM_PAYLOAD;
        if (buf.hasRemaining()) {
            int n = Math.min(buf.remaining(), dst.remaining());
            dst.put(dst.position(), buf, buf.position(), n);
            dst.position(dst.position() + n);
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
