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
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSocket;

/**
 * A TLS connection over a socket, as a blocking channel: an {@link SSLSocket} layered on the
 * socket for X.509 (JSSE), or BouncyCastle's TLS protocol over the socket's streams for PSK
 * ({@link PskTls}); either does records, post-handshake messages and alerts, and lets one reader
 * and one writer run at once, as the connection's read and write locks guarantee. Seen through a
 * channel so that the rest of the server (and the client) reads and writes the same way with or
 * without TLS.
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
    private final SSLSession session;
    private final String protocol;
    private final String peer;
    private final InputStream in;
    private final OutputStream out;
    private final byte[] readBuf = new byte[RECORD];
    private final byte[] writeBuf = new byte[RECORD];
    private volatile boolean open = true;

    private TlsChannel(SocketChannel raw, SSLSocket ssl) throws IOException {
        this(raw, ssl.getSession(), ssl.getSession().getProtocol(), null, ssl.getInputStream(), ssl.getOutputStream());
    }

    /** A finished handshake's streams; {@code session} null for PSK, {@code peer} the PSK identity. */
    TlsChannel(SocketChannel raw, SSLSession session, String protocol, String peer, InputStream in,
            OutputStream out) {
        this.raw = raw;
        this.session = session;
        this.protocol = protocol;
        this.peer = peer;
        this.in = in;
        this.out = out;
    }

    /**
     * Runs the client side of an X.509 handshake on {@code raw}: the server's certificate must
     * chain to the context's trust anchors and name {@code hostname} (as HTTPS checks it).
     *
     * @throws IOException if the handshake fails (see {@link TlsFailure#describe}); the caller closes {@code raw}
     */
    public static TlsChannel clientHandshake(SocketChannel raw, SSLContext context, String hostname,
            int timeoutMillis) throws IOException {
        SSLSocket s = (SSLSocket) context.getSocketFactory().createSocket(raw.socket(), hostname,
                raw.socket().getPort(), true);
        s.setUseClientMode(true);
        TlsOptions.client(s, hostname);
        s.setSoTimeout(timeoutMillis);
        s.startHandshake();
        s.setSoTimeout(0);
        return new TlsChannel(raw, s);
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

    /** The finished X.509 handshake's session (peer certificates, protocol); null for PSK. */
    public SSLSession session() {
        return session;
    }

    /** The negotiated protocol, e.g. TLSv1.3. */
    public String protocol() {
        return protocol;
    }

    /** The PSK identity (user name) the handshake used; null for X.509. */
    public String pskIdentity() {
        return peer;
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
