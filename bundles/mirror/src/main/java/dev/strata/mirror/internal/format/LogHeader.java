package dev.strata.mirror.internal.format;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;

/**
 * The header of a {@code disk:} region log: geometry and which legs are in sync. Pure
 * encode/decode, no I/O.
 *
 * <pre>
 *   offset size  field (little endian)
 *   0      8     magic "STRMIRLG"
 *   8      4     version (1)
 *   12     4     leg count
 *   16     8     region size in bytes
 *   24     8     region count
 *   32     8     sequence (rises with every header write; the valid copy with the higher one wins)
 *   40     4     in-sync mask: bit i set = leg i holds every acknowledged write
 *   44     8     legs identity: a hash of the legs' device identities in order (0 = not known)
 *   52     4040  zero
 *   4092   4     CRC32C of bytes 0..4091
 * </pre>
 */
public record LogHeader(int legs, long regionSize, long regions, long sequence, int inSyncMask, long legsId) {
    public static final int VERSION = 1;
    public static final byte[] MAGIC = "STRMIRLG".getBytes(StandardCharsets.US_ASCII);
    /** The CRC32C of bytes [0, CRC_OFFSET) sits here. */
    public static final int CRC_OFFSET = LogLayout.HEADER_SIZE - 4;

    public LogHeader {
        if (legs < 2 || legs > 31) {
            throw new IllegalArgumentException("legs " + legs);
        }
    }

    public LogHeader withSequence(long s) {
        return new LogHeader(legs, regionSize, regions, s, inSyncMask, legsId);
    }

    public LogHeader withInSyncMask(int mask) {
        return new LogHeader(legs, regionSize, regions, sequence, mask, legsId);
    }

    /**
     * The legs identity of {@code ids} (the legs' device identities in order): FNV-1a 64 over
     * them, never 0; 0 if any is unknown.
     */
    public static long legsId(java.util.List<String> ids) {
        long h = 0xcbf29ce484222325L;
        for (String id : ids) {
            if (id == null) {
                return 0;
            }
            for (byte x : (id + "\n").getBytes(StandardCharsets.UTF_8)) {
                h = (h ^ (x & 0xff)) * 0x100000001b3L;
            }
        }
        return h == 0 ? 1 : h;
    }

    public boolean inSync(int leg) {
        return (inSyncMask & (1 << leg)) != 0;
    }

    /** The 4096-byte block. */
    public ByteBuffer encode() {
        ByteBuffer b = ByteBuffer.allocate(LogLayout.HEADER_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        b.put(MAGIC).putInt(VERSION).putInt(legs).putLong(regionSize).putLong(regions).putLong(sequence).putInt(inSyncMask).putLong(legsId);
        b.putInt(CRC_OFFSET, crc(b));
        return b.clear();
    }

    /** Whether the block is all zero (a device never formatted as a log). */
    public static boolean isBlank(ByteBuffer block) {
        for (int i = 0; i < LogLayout.HEADER_SIZE; i++) {
            if (block.get(i) != 0) {
                return false;
            }
        }
        return true;
    }

    /** Decodes a 4096-byte block (absolute indices; the buffer's position is not moved). */
    public static LogHeader decode(ByteBuffer block) throws FormatException {
        if (block.limit() < LogLayout.HEADER_SIZE) {
            throw new FormatException("header block is " + block.limit() + " bytes, not " + LogLayout.HEADER_SIZE);
        }
        ByteBuffer b = block.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < MAGIC.length; i++) {
            if (b.get(i) != MAGIC[i]) {
                throw new FormatException("no mirror log magic");
            }
        }
        int stored = b.getInt(CRC_OFFSET);
        if (stored != crc(b)) {
            throw new FormatException("header checksum mismatch");
        }
        int version = b.getInt(8);
        if (version != VERSION) {
            throw new FormatException("log version " + version + " is not supported (this build reads version " + VERSION + ")");
        }
        int legs = b.getInt(12);
        long regionSize = b.getLong(16);
        long regions = b.getLong(24);
        if (legs < 2 || legs > 31 || regionSize < 4096 || Long.bitCount(regionSize) != 1 || regions <= 0) {
            throw new FormatException("header geometry is invalid (legs " + legs + ", region size " + regionSize
                    + ", regions " + regions + ")");
        }
        return new LogHeader(legs, regionSize, regions, b.getLong(32), b.getInt(40), b.getLong(44));
    }

    private static int crc(ByteBuffer b) {
        CRC32C c = new CRC32C();
        c.update(b.duplicate().position(0).limit(CRC_OFFSET));
        return (int) c.getValue();
    }
}
