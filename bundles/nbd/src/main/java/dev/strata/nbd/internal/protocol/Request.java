package dev.strata.nbd.internal.protocol;

/**
 * A decoded transmission request header (mutable, reused by its reader: no object per request).
 * <pre>
 *  0      4       6      8                16              24       28
 *  +------+-------+------+----------------+---------------+--------+
 *  | magic| flags | type |     cookie     |    offset     | length |
 *  +------+-------+------+----------------+---------------+--------+
 * </pre>
 */
public final class Request {
    public int flags;
    public int type;
    public long cookie;
    /** Unsigned 64-bit offset; negative when the client sent a value of 2^63 or more. */
    public long offset;
    /** Unsigned 32-bit length, 0 to 2^32-1. */
    public long length;

    public Request set(int flags, int type, long cookie, long offset, long length) {
        this.flags = flags;
        this.type = type;
        this.cookie = cookie;
        this.offset = offset;
        this.length = length;
        return this;
    }

    public void copyFrom(Request o) {
        set(o.flags, o.type, o.cookie, o.offset, o.length);
    }

    @Override
    public String toString() {
        return Nbd.commandName(type) + "(flags=" + flags + ", cookie=" + cookie + ", offset=" + Long.toUnsignedString(offset)
                + ", length=" + length + ")";
    }
}
