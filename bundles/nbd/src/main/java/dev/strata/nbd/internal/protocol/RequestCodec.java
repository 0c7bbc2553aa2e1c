package dev.strata.nbd.internal.protocol;

import java.nio.ByteBuffer;

/**
 * Encodes and decodes transmission request headers. {@link #feed} accepts input in pieces of any
 * size (down to one byte at a time) and reports when a whole header has been decoded.
 */
public final class RequestCodec {
    private final ByteBuffer pending = ByteBuffer.allocate(Nbd.REQUEST_HEADER_SIZE);

    /**
     * Consumes bytes from {@code in} until a header is complete.
     *
     * @return true when {@code out} holds a newly decoded header
     * @throws ProtocolException on a bad magic (the connection must be dropped)
     */
    public boolean feed(ByteBuffer in, Request out) throws ProtocolException {
        int n = Math.min(in.remaining(), pending.remaining());
        if (n > 0) {
            ByteBuffer part = in.duplicate();
            part.limit(part.position() + n);
            pending.put(part);
            in.position(in.position() + n);
        }
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

    /** Whether part of a header has been fed but not yet completed. */
    public boolean hasPartial() {
        return pending.position() > 0;
    }

    /** Decodes one header from the next 28 bytes of {@code in}. */
    public static void decode(ByteBuffer in, Request out) throws ProtocolException {
        int magic = in.getInt();
        if (magic != Nbd.REQUEST_MAGIC) {
            throw new ProtocolException(String.format("bad request magic 0x%08x", magic));
        }
        int flags = in.getShort() & 0xffff;
        int type = in.getShort() & 0xffff;
        long cookie = in.getLong();
        long offset = in.getLong();
        long length = in.getInt() & 0xffffffffL;
        out.set(flags, type, cookie, offset, length);
    }

    /** Encodes a header into the next 28 bytes of {@code dst}. */
    public static void encode(ByteBuffer dst, int flags, int type, long cookie, long offset, long length) {
        dst.putInt(Nbd.REQUEST_MAGIC).putShort((short) flags).putShort((short) type).putLong(cookie).putLong(offset)
                .putInt((int) length);
    }
}
