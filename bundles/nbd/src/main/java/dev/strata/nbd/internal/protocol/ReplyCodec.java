package dev.strata.nbd.internal.protocol;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Encoders for transmission replies (server side) and a feedable decoder of reply headers
 * (client side).
 * <pre>
 * simple:      magic 0x67446698 (4) | error (4) | cookie (8)
 * structured:  magic 0x668e33ef (4) | flags (2) | type (2) | cookie (8) | length (4) | payload
 *   OFFSET_DATA:  offset (8) | data          OFFSET_HOLE: offset (8) | hole size (4)
 *   BLOCK_STATUS: context id (4) | { length (4) | flags (4) }*
 *   ERROR:        errno (4) | message length (2) | message
 * </pre>
 */
public final class ReplyCodec {

    public static void simple(ByteBuffer dst, int errno, long cookie) {
        dst.putInt(Nbd.SIMPLE_REPLY_MAGIC).putInt(errno).putLong(cookie);
    }

    public static void structured(ByteBuffer dst, int flags, int type, long cookie, int length) {
        dst.putInt(Nbd.STRUCTURED_REPLY_MAGIC).putShort((short) flags).putShort((short) type).putLong(cookie)
                .putInt(length);
    }

    /** Header of a final OFFSET_DATA chunk carrying {@code dataLength} bytes at {@code offset}. */
    public static void offsetData(ByteBuffer dst, long cookie, long offset, int dataLength) {
        structured(dst, Nbd.REPLY_FLAG_DONE, Nbd.REPLY_TYPE_OFFSET_DATA, cookie, 8 + dataLength);
        dst.putLong(offset);
    }

    /** The bytes of an error message, cut to what fits in the 16-bit length (and to 4096 bytes). */
    public static byte[] messageBytes(String message) {
        byte[] b = message == null ? new byte[0] : message.getBytes(StandardCharsets.UTF_8);
        if (b.length > Nbd.MAX_STRING) {
            b = java.util.Arrays.copyOf(b, Nbd.MAX_STRING);
        }
        return b;
    }

    /** A final ERROR chunk. */
    public static void error(ByteBuffer dst, long cookie, int errno, byte[] message) {
        structured(dst, Nbd.REPLY_FLAG_DONE, Nbd.REPLY_TYPE_ERROR, cookie, 6 + message.length);
        dst.putInt(errno).putShort((short) message.length).put(message);
    }

    /** Header of a final BLOCK_STATUS chunk with {@code extents} (length, flags) pairs. */
    public static void blockStatusHeader(ByteBuffer dst, long cookie, int contextId, int extents) {
        structured(dst, Nbd.REPLY_FLAG_DONE, Nbd.REPLY_TYPE_BLOCK_STATUS, cookie, 4 + 8 * extents);
        dst.putInt(contextId);
    }

    /** A decoded reply header (mutable). */
    public static final class ReplyHeader {
        public boolean structured;
        public int error;
        public int flags;
        public int type;
        public long cookie;
        public long length;
    }

    /** Feedable reply-header decoder: accepts input in pieces of any size. */
    public static final class Decoder {
        private final ByteBuffer pending = ByteBuffer.allocate(Nbd.STRUCTURED_REPLY_HEADER_SIZE);
        private int need = 4;

        /** @return true when {@code out} holds a newly decoded header */
        public boolean feed(ByteBuffer in, ReplyHeader out) throws ProtocolException {
            while (in.hasRemaining()) {
                int n = Math.min(in.remaining(), need - pending.position());
                ByteBuffer part = in.duplicate();
                part.limit(part.position() + n);
                pending.put(part);
                in.position(in.position() + n);
                if (pending.position() < need) {
                    return false;
                }
                if (need == 4) {
                    int magic = pending.getInt(0);
                    if (magic == Nbd.SIMPLE_REPLY_MAGIC) {
                        need = Nbd.SIMPLE_REPLY_HEADER_SIZE;
                    } else if (magic == Nbd.STRUCTURED_REPLY_MAGIC) {
                        need = Nbd.STRUCTURED_REPLY_HEADER_SIZE;
                    } else {
                        pending.clear();
                        throw new ProtocolException(String.format("bad reply magic 0x%08x", magic));
                    }
                    continue;
                }
                pending.flip();
                pending.getInt();
                if (need == Nbd.SIMPLE_REPLY_HEADER_SIZE) {
                    out.structured = false;
                    out.error = pending.getInt();
                    out.cookie = pending.getLong();
                    out.flags = Nbd.REPLY_FLAG_DONE;
                    out.type = 0;
                    out.length = 0;
                } else {
                    out.structured = true;
                    out.error = 0;
                    out.flags = pending.getShort() & 0xffff;
                    out.type = pending.getShort() & 0xffff;
                    out.cookie = pending.getLong();
                    out.length = pending.getInt() & 0xffffffffL;
                }
                pending.clear();
                need = 4;
                return true;
            }
            return false;
        }
    }

    private ReplyCodec() {
    }
}
