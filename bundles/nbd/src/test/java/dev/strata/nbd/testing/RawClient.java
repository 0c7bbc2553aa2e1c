package dev.strata.nbd.testing;

import dev.strata.nbd.internal.protocol.Nbd;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * A hand-written NBD client for protocol tests: sends exactly the bytes a test asks for,
 * well-formed or not, and decodes what comes back. Independent of the server's codecs.
 */
public final class RawClient implements Closeable {
    public final SocketChannel ch;
    /** The TLS socket after {@link #startTls}; null in plaintext. */
    private javax.net.ssl.SSLSocket tls;

    public RawClient(InetSocketAddress address) throws IOException {
        ch = SocketChannel.open(address);
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        ch.socket().setSoTimeout(30_000);
    }

    /**
     * Runs a TLS client handshake on the connection (after the server acknowledged STARTTLS);
     * every later read and write is encrypted.
     */
    public void startTls(javax.net.ssl.SSLContext context) throws IOException {
        javax.net.ssl.SSLSocket s = (javax.net.ssl.SSLSocket) context.getSocketFactory().createSocket(ch.socket(),
                "localhost", ch.socket().getPort(), true);
        s.setUseClientMode(true);
        s.startHandshake();
        tls = s;
    }

    /** The negotiated TLS protocol, or null in plaintext. */
    public String tlsProtocol() {
        return tls == null ? null : tls.getSession().getProtocol();
    }

    private java.io.InputStream in() throws IOException {
        return tls != null ? tls.getInputStream() : ch.socket().getInputStream();
    }

    /** Reads the greeting and sends client flags. Returns the handshake flags. */
    public int greet(int clientFlags) throws IOException {
        ByteBuffer b = read(18);
        if (b.getLong() != Nbd.NBDMAGIC || b.getLong() != Nbd.IHAVEOPT) {
            throw new IOException("bad greeting");
        }
        int flags = b.getShort() & 0xffff;
        send(ByteBuffer.allocate(4).putInt(clientFlags).flip());
        return flags;
    }

    public void option(int option, byte[] data) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(16 + data.length);
        b.putLong(Nbd.IHAVEOPT).putInt(option).putInt(data.length).put(data).flip();
        send(b);
    }

    /** An option reply: type and data. */
    public record OptReply(int option, int type, byte[] data) {
        public ByteBuffer buf() {
            return ByteBuffer.wrap(data);
        }
    }

    public OptReply optReply() throws IOException {
        ByteBuffer h = read(20);
        long magic = h.getLong();
        if (magic != Nbd.OPTION_REPLY_MAGIC) {
            throw new IOException("bad option reply magic " + Long.toHexString(magic));
        }
        int opt = h.getInt();
        int type = h.getInt();
        int len = h.getInt();
        return new OptReply(opt, type, read(len).array());
    }

    public static byte[] goData(String name, int... infos) {
        byte[] n = name.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(4 + n.length + 2 + 2 * infos.length);
        b.putInt(n.length).put(n).putShort((short) infos.length);
        for (int i : infos) {
            b.putShort((short) i);
        }
        return b.array();
    }

    public static byte[] metaData(String name, String... queries) {
        byte[] n = name.getBytes(StandardCharsets.UTF_8);
        int len = 4 + n.length + 4;
        for (String q : queries) {
            len += 4 + q.getBytes(StandardCharsets.UTF_8).length;
        }
        ByteBuffer b = ByteBuffer.allocate(len);
        b.putInt(n.length).put(n).putInt(queries.length);
        for (String q : queries) {
            byte[] qb = q.getBytes(StandardCharsets.UTF_8);
            b.putInt(qb.length).put(qb);
        }
        return b.array();
    }

    /** Negotiates with GO (optionally structured replies and base:allocation). Returns the export size. */
    public long go(String name, boolean structured, boolean baseAllocation) throws IOException {
        greet(Nbd.FLAG_C_FIXED_NEWSTYLE | Nbd.FLAG_C_NO_ZEROES);
        return goAfterGreeting(name, structured, baseAllocation);
    }

    /** As {@link #go} on a connection that has greeted already (e.g. after STARTTLS). */
    public long goAfterGreeting(String name, boolean structured, boolean baseAllocation) throws IOException {
        if (structured) {
            option(Nbd.OPT_STRUCTURED_REPLY, new byte[0]);
            expect(optReply(), Nbd.REP_ACK);
        }
        if (baseAllocation) {
            option(Nbd.OPT_SET_META_CONTEXT, metaData(name, Nbd.BASE_ALLOCATION));
            expect(optReply(), Nbd.REP_META_CONTEXT);
            expect(optReply(), Nbd.REP_ACK);
        }
        option(Nbd.OPT_GO, goData(name));
        long size = -1;
        while (true) {
            OptReply r = optReply();
            if (r.type == Nbd.REP_ACK) {
                return size;
            }
            if (r.type != Nbd.REP_INFO) {
                throw new IOException("GO failed: reply type " + Integer.toHexString(r.type) + " "
                        + new String(r.data, StandardCharsets.UTF_8));
            }
            ByteBuffer d = r.buf();
            if (d.getShort() == Nbd.INFO_EXPORT) {
                size = d.getLong();
            }
        }
    }

    public static OptReply expect(OptReply r, int type) throws IOException {
        if (r.type != type) {
            throw new IOException("expected reply type " + Integer.toHexString(type) + " got "
                    + Integer.toHexString(r.type) + " " + new String(r.data, StandardCharsets.UTF_8));
        }
        return r;
    }

    public void request(int flags, int type, long cookie, long offset, long length, byte[] payload) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(28 + (payload == null ? 0 : payload.length));
        b.putInt(Nbd.REQUEST_MAGIC).putShort((short) flags).putShort((short) type).putLong(cookie).putLong(offset)
                .putInt((int) length);
        if (payload != null) {
            b.put(payload);
        }
        send(b.flip());
    }

    /** A simple reply header: error and cookie. */
    public record Simple(int error, long cookie) {
    }

    public Simple simple() throws IOException {
        ByteBuffer h = read(16);
        int magic = h.getInt();
        if (magic != Nbd.SIMPLE_REPLY_MAGIC) {
            throw new IOException("bad simple reply magic " + Integer.toHexString(magic));
        }
        return new Simple(h.getInt(), h.getLong());
    }

    /** A structured reply chunk. */
    public record Chunk(int flags, int type, long cookie, byte[] payload) {
        public ByteBuffer buf() {
            return ByteBuffer.wrap(payload);
        }

        public int errno() {
            return buf().getInt();
        }
    }

    /** Reads either kind of reply; simple replies come back as a chunk of type -1 whose payload is the errno. */
    public Chunk any() throws IOException {
        ByteBuffer m = read(4);
        int magic = m.getInt();
        if (magic == Nbd.SIMPLE_REPLY_MAGIC) {
            ByteBuffer h = read(12);
            int err = h.getInt();
            return new Chunk(Nbd.REPLY_FLAG_DONE, -1, h.getLong(), ByteBuffer.allocate(4).putInt(err).array());
        }
        if (magic != Nbd.STRUCTURED_REPLY_MAGIC) {
            throw new IOException("bad reply magic " + Integer.toHexString(magic));
        }
        ByteBuffer h = read(16);
        int flags = h.getShort() & 0xffff;
        int type = h.getShort() & 0xffff;
        long cookie = h.getLong();
        int len = h.getInt();
        return new Chunk(flags, type, cookie, read(len).array());
    }

    public ByteBuffer read(int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        var in = in();
        while (b.hasRemaining()) {
            int r = in.read(b.array(), b.position(), b.remaining());
            if (r < 0) {
                throw new EOFException("server closed the connection");
            }
            b.position(b.position() + r);
            if (System.nanoTime() > deadline) {
                throw new IOException("timed out");
            }
        }
        return b.flip();
    }

    public void send(ByteBuffer b) throws IOException {
        if (tls != null) {
            byte[] a = new byte[b.remaining()];
            b.get(a);
            tls.getOutputStream().write(a);
            tls.getOutputStream().flush();
            return;
        }
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }

    /** True if the server closes the connection (EOF or reset) within 30 s. */
    public boolean closedByServer() {
        try {
            var in = in();
            byte[] buf = new byte[65536];
            while (true) {
                if (in.read(buf) < 0) {
                    return true;
                }
            }
        } catch (java.net.SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true;
        }
    }

    @Override
    public void close() throws IOException {
        ch.close();
    }
}
