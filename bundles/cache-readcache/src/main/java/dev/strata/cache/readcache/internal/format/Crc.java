package dev.strata.cache.readcache.internal.format;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/** CRC32C over a range of a buffer, without moving the buffer's position. */
final class Crc {
    private Crc() {
    }

    /** CRC32C of {@code buf[from, from+length)} (absolute indices). */
    static int of(ByteBuffer buf, int from, int length) {
        CRC32C crc = new CRC32C();
        crc.update(buf.duplicate().limit(from + length).position(from));
        return (int) crc.getValue();
    }
}
