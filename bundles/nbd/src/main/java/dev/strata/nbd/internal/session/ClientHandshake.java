package dev.strata.nbd.internal.session;

import dev.strata.nbd.internal.protocol.Nbd;
import dev.strata.nbd.internal.protocol.OptionCodec;
import dev.strata.nbd.internal.protocol.ProtocolException;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.charset.StandardCharsets;

/**
 * The client side of fixed-newstyle negotiation: STARTTLS when TLS is wanted, structured
 * replies, then GO asking for block sizes (EXPORT_NAME for a server that does not know GO).
 */
public final class ClientHandshake {

    /** What the server told us about the export. */
    public record Result(long size, int flags, boolean structured, int minBlock, int preferredBlock, int maxBlock) {
        public boolean has(int flag) {
            return (flags & flag) != 0;
        }
    }

    /** The server refused the export (unknown name, policy); not worth retrying. */
    public static final class Refused extends IOException {
        private static final long serialVersionUID = 1L;

        public Refused(String message) {
            super(message);
        }
    }

    private ByteChannel ch;
    private final ClientStartTls tls;

    public ClientHandshake(ByteChannel ch) {
        this(ch, null);
    }

    /** @param tls how to start TLS; null for plaintext */
    public ClientHandshake(ByteChannel ch, ClientStartTls tls) {
        this.ch = ch;
        this.tls = tls;
    }

    /** The channel the transmission phase uses: the TLS channel once STARTTLS succeeded. */
    public ByteChannel channel() {
        return ch;
    }

    public Result run(String exportName) throws IOException {
        ByteBuffer g = read(18);
        if (g.getLong() != Nbd.NBDMAGIC) {
            throw new ProtocolException("not an NBD server (bad magic)");
        }
        long second = g.getLong();
        if (second != Nbd.IHAVEOPT) {
            throw new ProtocolException("the server speaks oldstyle NBD; only fixed newstyle is supported");
        }
        int hflags = g.getShort() & 0xffff;
        if ((hflags & Nbd.FLAG_FIXED_NEWSTYLE) == 0) {
            throw new ProtocolException("the server does not offer fixed newstyle negotiation");
        }
        boolean noZeroes = (hflags & Nbd.FLAG_NO_ZEROES) != 0;
        write(ByteBuffer.allocate(4).putInt(Nbd.FLAG_C_FIXED_NEWSTYLE | (noZeroes ? Nbd.FLAG_C_NO_ZEROES : 0)).flip());
        if (tls != null) {
            startTls();
        }

        sendOption(Nbd.OPT_STRUCTURED_REPLY, new byte[0]);
        Reply r = reply(Nbd.OPT_STRUCTURED_REPLY);
        boolean structured = r.type == Nbd.REP_ACK;

        byte[] name = exportName.getBytes(StandardCharsets.UTF_8);
        ByteBuffer go = ByteBuffer.allocate(4 + name.length + 2 + 2);
        go.putInt(name.length).put(name).putShort((short) 1).putShort((short) Nbd.INFO_BLOCK_SIZE);
        sendOption(Nbd.OPT_GO, go.array());
        long size = -1;
        int flags = 0;
        int min = 1;
        int pref = 4096;
        int max = Nbd.MAX_BLOCK;
        while (true) {
            r = reply(Nbd.OPT_GO);
            if (r.type == Nbd.REP_ACK) {
                break;
            }
            if (r.type == Nbd.REP_INFO) {
                ByteBuffer d = ByteBuffer.wrap(r.data);
                if (d.remaining() < 2) {
                    throw new ProtocolException("short NBD_REP_INFO");
                }
                int info = d.getShort() & 0xffff;
                if (info == Nbd.INFO_EXPORT && d.remaining() >= 10) {
                    size = d.getLong();
                    flags = d.getShort() & 0xffff;
                } else if (info == Nbd.INFO_BLOCK_SIZE && d.remaining() >= 12) {
                    min = d.getInt();
                    pref = d.getInt();
                    max = d.getInt();
                }
                continue;
            }
            if (r.type == Nbd.REP_ERR_UNSUP) {
                // an old server: EXPORT_NAME cannot fail politely, but it is all there is
                sendOption(Nbd.OPT_EXPORT_NAME, name);
                ByteBuffer e = read(10 + (noZeroes ? 0 : 124));
                size = e.getLong();
                flags = e.getShort() & 0xffff;
                break;
            }
            String msg = new String(r.data, StandardCharsets.UTF_8);
            if (r.type == Nbd.REP_ERR_UNKNOWN || r.type == Nbd.REP_ERR_POLICY || r.type == Nbd.REP_ERR_TLS_REQD) {
                throw new Refused("the server refused export '" + exportName + "'" + (msg.isEmpty() ? "" : ": " + msg));
            }
            throw new IOException("GO for export '" + exportName + "' failed (reply 0x" + Integer.toHexString(r.type)
                    + ")" + (msg.isEmpty() ? "" : ": " + msg));
        }
        if (size < 0) {
            throw new ProtocolException("the server did not send the export size");
        }
        return new Result(size, flags, structured, min, pref, max);
    }

    /**
     * STARTTLS: an ACK (with no data) starts the handshake at once; any error reply means the
     * server will not do TLS, which ends the connection when TLS is required.
     */
    private void startTls() throws IOException {
        sendOption(Nbd.OPT_STARTTLS, new byte[0]);
        Reply r = reply(Nbd.OPT_STARTTLS);
        if (r.type == Nbd.REP_ACK) {
            if (r.data.length != 0) {
                throw new ProtocolException("the server acknowledged STARTTLS with " + r.data.length + " bytes of data");
            }
            ch = tls.startTls();
            return;
        }
        if ((r.type & 0x80000000) == 0) {
            throw new ProtocolException("the server answered STARTTLS with reply type 0x" + Integer.toHexString(r.type));
        }
        if (tls.required()) {
            String msg = new String(r.data, StandardCharsets.UTF_8);
            throw new Refused("the server does not do TLS (its answer to STARTTLS: "
                    + (r.type == Nbd.REP_ERR_UNSUP ? "unsupported" : r.type == Nbd.REP_ERR_POLICY ? "refused by policy"
                    : "error 0x" + Integer.toHexString(r.type)) + (msg.isEmpty() ? "" : ", " + msg)
                    + "); use nbd:// or tls=off to connect without encryption, or enable TLS on the server");
        }
        // tls=on: go on in plaintext, as the user allowed
    }

    private record Reply(int type, byte[] data) {
    }

    private Reply reply(int option) throws IOException {
        ByteBuffer h = read(20);
        if (h.getLong() != Nbd.OPTION_REPLY_MAGIC) {
            throw new ProtocolException("bad option reply magic");
        }
        int opt = h.getInt();
        int type = h.getInt();
        long len = h.getInt() & 0xffffffffL;
        if (opt != option) {
            throw new ProtocolException("reply for option " + opt + " while waiting for " + option);
        }
        if (len > 1 << 20) {
            throw new ProtocolException("option reply of " + len + " bytes");
        }
        return new Reply(type, read((int) len).array());
    }

    private void sendOption(int option, byte[] data) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(16 + data.length);
        OptionCodec.request(b, option, data.length);
        b.put(data).flip();
        write(b);
    }

    private ByteBuffer read(int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n);
        while (b.hasRemaining()) {
            if (ch.read(b) < 0) {
                throw new EOFException("the server closed the connection during negotiation");
            }
        }
        return b.flip();
    }

    private void write(ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }
}
