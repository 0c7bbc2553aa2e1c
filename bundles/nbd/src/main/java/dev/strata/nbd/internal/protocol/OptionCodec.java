package dev.strata.nbd.internal.protocol;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The negotiation phase on the wire.
 * <pre>
 * server greeting:  "NBDMAGIC" (8) | "IHAVEOPT" (8) | handshake flags (2)
 * client flags:     (4)
 * option request:   "IHAVEOPT" (8) | option (4) | length (4) | data
 * option reply:     0x0003e889045565a9 (8) | option (4) | reply type (4) | length (4) | data
 * EXPORT_NAME reply: size (8) | transmission flags (2) | 124 zero bytes unless NO_ZEROES
 * NBD_REP_INFO:     info type (2) | EXPORT: size (8) flags (2) | BLOCK_SIZE: min pref max (4 each)
 *                   | NAME/DESCRIPTION: string
 * </pre>
 */
public final class OptionCodec {

    /** A decoded option request header (mutable). */
    public static final class OptionHeader {
        public int option;
        public long length;
    }

    /** Feedable option-header decoder. */
    public static final class Decoder {
        private final ByteBuffer pending = ByteBuffer.allocate(Nbd.OPTION_HEADER_SIZE);

        public boolean feed(ByteBuffer in, OptionHeader out) throws ProtocolException {
            int n = Math.min(in.remaining(), pending.remaining());
            ByteBuffer part = in.duplicate();
            part.limit(part.position() + n);
            pending.put(part);
            in.position(in.position() + n);
            if (pending.hasRemaining()) {
                return false;
            }
            pending.flip();
            try {
                decode(pending, out);
            } finally {
                pending.clear();
            }
            return true;
        }
    }

    public static void decode(ByteBuffer in, OptionHeader out) throws ProtocolException {
        long magic = in.getLong();
        if (magic != Nbd.IHAVEOPT) {
            throw new ProtocolException(String.format("bad option magic 0x%016x", magic));
        }
        out.option = in.getInt();
        out.length = in.getInt() & 0xffffffffL;
    }

    public static void greeting(ByteBuffer dst, int handshakeFlags) {
        dst.putLong(Nbd.NBDMAGIC).putLong(Nbd.IHAVEOPT).putShort((short) handshakeFlags);
    }

    public static void request(ByteBuffer dst, int option, int length) {
        dst.putLong(Nbd.IHAVEOPT).putInt(option).putInt(length);
    }

    public static void replyHeader(ByteBuffer dst, int option, int type, int length) {
        dst.putLong(Nbd.OPTION_REPLY_MAGIC).putInt(option).putInt(type).putInt(length);
    }

    public static void infoExport(ByteBuffer dst, int option, long size, int transmissionFlags) {
        replyHeader(dst, option, Nbd.REP_INFO, 12);
        dst.putShort((short) Nbd.INFO_EXPORT).putLong(size).putShort((short) transmissionFlags);
    }

    public static void infoBlockSize(ByteBuffer dst, int option, int min, int preferred, int max) {
        replyHeader(dst, option, Nbd.REP_INFO, 14);
        dst.putShort((short) Nbd.INFO_BLOCK_SIZE).putInt(min).putInt(preferred).putInt(max);
    }

    public static void infoString(ByteBuffer dst, int option, int infoType, byte[] value) {
        replyHeader(dst, option, Nbd.REP_INFO, 2 + value.length);
        dst.putShort((short) infoType).put(value);
    }

    public static void server(ByteBuffer dst, int option, byte[] name, byte[] description) {
        replyHeader(dst, option, Nbd.REP_SERVER, 4 + name.length + description.length);
        dst.putInt(name.length).put(name).put(description);
    }

    public static void metaContext(ByteBuffer dst, int option, int id, byte[] name) {
        replyHeader(dst, option, Nbd.REP_META_CONTEXT, 4 + name.length);
        dst.putInt(id).put(name);
    }

    public static void error(ByteBuffer dst, int option, int type, String message) {
        byte[] m = ReplyCodec.messageBytes(message);
        replyHeader(dst, option, type, m.length);
        dst.put(m);
    }

    public static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Reads a length-prefixed string from the option data, checking that the length fits.
     *
     * @return null if the length prefix or the string is truncated or longer than {@link Nbd#MAX_STRING}
     */
    public static String string(ByteBuffer data) {
        if (data.remaining() < 4) {
            return null;
        }
        int len = data.getInt();
        if (len < 0 || len > Nbd.MAX_STRING || len > data.remaining()) {
            return null;
        }
        byte[] b = new byte[len];
        data.get(b);
        return new String(b, StandardCharsets.UTF_8);
    }

    private OptionCodec() {
    }
}
