package dev.strata.nbd.internal.tls;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.GatheringByteChannel;
import java.nio.channels.SocketChannel;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;

/**
 * A TLS connection over an accepted socket, as a blocking channel: an {@link SSLSocket} layered
 * on the socket (JSSE does records, post-handshake messages and alerts; one reader and one
 * writer may run at once, as the connection's read and write locks guarantee), seen through
 * a channel so that the rest of the server reads and writes the same way with or without TLS.
 *
 * <p>Nothing is read from the socket before the TLS handshake but what the handshake itself
 * reads, so bytes sent in plaintext after STARTTLS can only be taken as (bad) TLS records.
 * {@link #close()} closes the socket underneath without waiting on the peer: it is also how a
 * stalled handshake or an unexport drops the connection.
 */
public final class TlsChannel implements ByteChannel, GatheringByteChannel {
    /** Largest TLS record payload: writes are cut into pieces no larger, so each is one record. */
    private static final int RECORD = 16 * 1024;

    private final SocketChannel raw;
    private final SSLSocket ssl;
    private final InputStream in;
    private final OutputStream out;
    private final byte[] readBuf = new byte[RECORD];
    private final byte[] writeBuf = new byte[RECORD];
    private volatile boolean open = true;

    private TlsChannel(SocketChannel raw, SSLSocket ssl) throws IOException {
        this.raw = raw;
        this.ssl = ssl;
        this.in = ssl.getInputStream();
        this.out = ssl.getOutputStream();
    }

    /**
     * Runs the server side of the handshake on {@code raw} (a blocking socket channel).
     *
     * @throws IOException if the handshake fails; the caller closes {@code raw}
     */
    public static TlsChannel serverHandshake(SocketChannel raw, SSLContext context, TlsOptions options)
            throws IOException {
        SSLSocket s = (SSLSocket) context.getSocketFactory().createSocket(raw.socket(),
                raw.socket().getInetAddress().getHostAddress(), raw.socket().getPort(), true);
        s.setUseClientMode(false);
        options.apply(s);
        s.startHandshake();
        return new TlsChannel(raw, s);
    }

    /** The finished handshake's session (peer certificates, protocol). */
    public javax.net.ssl.SSLSession session() {
        return ssl.getSession();
    }

    /** The negotiated protocol, e.g. TLSv1.3. */
    public String protocol() {
        return ssl.getSession().getProtocol();
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        if (!open) {
            throw new ClosedChannelException();
        }
        int want = Math.min(dst.remaining(), readBuf.length);
        if (want == 0) {
            return 0;
        }
        int n = in.read(readBuf, 0, want);
        if (n > 0) {
            dst.put(readBuf, 0, n);
        }
        return n;
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        return (int) write(new ByteBuffer[] {src}, 0, 1);
    }

    @Override
    public long write(ByteBuffer[] srcs) throws IOException {
        return write(srcs, 0, srcs.length);
    }

    /** Writes everything given (blocking); small buffers are joined into full records. */
    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        if (!open) {
            throw new ClosedChannelException();
        }
        long total = 0;
        int fill = 0;
        for (int i = offset; i < offset + length; i++) {
            ByteBuffer b = srcs[i];
            while (b.hasRemaining()) {
                int n = Math.min(b.remaining(), writeBuf.length - fill);
                b.get(writeBuf, fill, n);
                fill += n;
                total += n;
                if (fill == writeBuf.length) {
                    out.write(writeBuf, 0, fill);
                    fill = 0;
                }
            }
        }
        if (fill > 0) {
            out.write(writeBuf, 0, fill);
        }
        out.flush();
        return total;
    }

    @Override
    public boolean isOpen() {
        return open && raw.isOpen();
    }

    @Override
    public void close() throws IOException {
        open = false;
        raw.close();
    }
}
