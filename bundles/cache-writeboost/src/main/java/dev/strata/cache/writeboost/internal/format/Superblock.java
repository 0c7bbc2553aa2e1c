package dev.strata.cache.writeboost.internal.format;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * The superblock: block 0 of the cache device. Written once, when the device is formatted.
 *
 * <pre>
 * offset size field
 *      0    8 magic "STRATASB" (ASCII; the same for every Strata policy)
 *      8    4 CRC32C of bytes [12, 4096)
 *     12    4 format version (1)
 *     16   16 policy name, ASCII, NUL-padded ("writeboost")
 *     32    4 block size in bytes (4096)
 *     36    4 segment size in bytes (1048576)
 *     40    8 segment count
 *     48    8 offset of segment 0 in bytes (1048576)
 *     56    8 cache UUID, most significant half
 *     64    8 cache UUID, least significant half
 *     72    8 backing device size in bytes
 *     80    8 format time, ms since the epoch
 *     88    8 backing device identity (UUID), most significant half (0 and 0: none recorded)
 *     96    8 backing device identity (UUID), least significant half
 *    104 3992 zero
 * </pre>
 * The backing identity lives in what version 1 left zero (and covered by the CRC), so it needs no
 * new version: a superblock written before it existed reads as "none recorded", and an older
 * bundle reads a superblock with one (it ignores the bytes).
 */
public record Superblock(int version, String policy, int blockSize, int segmentSize, long segmentCount,
        long firstSegmentOffset, UUID uuid, long backingSize, long formatTimeMillis, UUID backingId) {

    /** A superblock that records no backing device identity. */
    public Superblock(int version, String policy, int blockSize, int segmentSize, long segmentCount,
            long firstSegmentOffset, UUID uuid, long backingSize, long formatTimeMillis) {
        this(version, policy, blockSize, segmentSize, segmentCount, firstSegmentOffset, uuid, backingSize,
                formatTimeMillis, null);
    }

    public static final byte[] MAGIC = "STRATASB".getBytes(StandardCharsets.US_ASCII);
    /** First byte the CRC covers (it ends at the end of the structure; the CRC sits in the 4 bytes before). */
    public static final int CRC_FROM = 12;
    static final int POLICY_LEN = 16;

    /** A version-1 writeboost superblock for a cache of {@code segmentCount} segments. */
    public static Superblock create(long segmentCount, UUID uuid, long backingSize, long now) {
        return create(segmentCount, uuid, backingSize, now, null);
    }

    /** As {@link #create(long, UUID, long, long)}, recording the backing device's identity (null: none). */
    public static Superblock create(long segmentCount, UUID uuid, long backingSize, long now, UUID backingId) {
        return new Superblock(Layout.VERSION, Layout.POLICY, Layout.BLOCK, Layout.SEGMENT_SIZE, segmentCount,
                Layout.FIRST_SEGMENT_OFFSET, uuid, backingSize, now, backingId);
    }

    /** A 64-bit digest of the UUID, stamped into every record header of this cache. */
    public long uuidHash() {
        return uuid.getMostSignificantBits() ^ Long.rotateLeft(uuid.getLeastSignificantBits(), 17);
    }

    /** Encodes into a fresh 4096-byte buffer (position 0, limit 4096). */
    public ByteBuffer encode() {
        ByteBuffer b = ByteBuffer.allocate(Layout.BLOCK).order(ByteOrder.LITTLE_ENDIAN);
        b.put(0, MAGIC);
        b.putInt(12, version);
        byte[] name = policy.getBytes(StandardCharsets.US_ASCII);
        b.put(16, name, 0, Math.min(name.length, POLICY_LEN));
        b.putInt(32, blockSize);
        b.putInt(36, segmentSize);
        b.putLong(40, segmentCount);
        b.putLong(48, firstSegmentOffset);
        b.putLong(56, uuid.getMostSignificantBits());
        b.putLong(64, uuid.getLeastSignificantBits());
        b.putLong(72, backingSize);
        b.putLong(80, formatTimeMillis);
        if (backingId != null) {
            b.putLong(88, backingId.getMostSignificantBits());
            b.putLong(96, backingId.getLeastSignificantBits());
        }
        b.putInt(8, Crc.of(b, CRC_FROM, Layout.BLOCK - CRC_FROM));
        return b;
    }

    /**
     * Decodes and checks a 4096-byte block (absolute indices from 0). Checks, in order: all zero
     * (BLANK), magic (FOREIGN), CRC (CORRUPT), version (VERSION), policy (POLICY), then geometry
     * (CORRUPT).
     */
    public static Superblock decode(ByteBuffer block) throws FormatException {
        ByteBuffer b = block.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        if (b.capacity() < Layout.BLOCK) {
            throw new IllegalArgumentException("superblock buffer shorter than a block");
        }
        boolean zero = true;
        for (int i = 0; i < Layout.BLOCK; i += 8) {
            if (b.getLong(i) != 0) {
                zero = false;
                break;
            }
        }
        if (zero) {
            throw new FormatException(FormatException.Kind.BLANK, "the cache device is blank");
        }
        for (int i = 0; i < MAGIC.length; i++) {
            if (b.get(i) != MAGIC[i]) {
                throw new FormatException(FormatException.Kind.FOREIGN,
                        "the cache device holds data that is not a Strata cache");
            }
        }
        if (b.getInt(8) != Crc.of(b, CRC_FROM, Layout.BLOCK - CRC_FROM)) {
            throw new FormatException(FormatException.Kind.CORRUPT, "the cache device's superblock is corrupt (CRC mismatch)");
        }
        int version = b.getInt(12);
        byte[] name = new byte[POLICY_LEN];
        b.get(16, name);
        int len = 0;
        while (len < POLICY_LEN && name[len] != 0) {
            len++;
        }
        String policy = new String(name, 0, len, StandardCharsets.US_ASCII);
        if (!Layout.POLICY.equals(policy)) {
            throw new FormatException(FormatException.Kind.POLICY,
                    "the cache device is formatted for the '" + policy + "' policy, not writeboost");
        }
        if (version != Layout.VERSION) {
            throw new FormatException(FormatException.Kind.VERSION,
                    "the cache device has writeboost format version " + version + "; this bundle reads version " + Layout.VERSION);
        }
        Superblock sb = new Superblock(version, policy, b.getInt(32), b.getInt(36), b.getLong(40), b.getLong(48),
                new UUID(b.getLong(56), b.getLong(64)), b.getLong(72), b.getLong(80),
                b.getLong(88) == 0 && b.getLong(96) == 0 ? null : new UUID(b.getLong(88), b.getLong(96)));
        if (sb.blockSize != Layout.BLOCK || sb.segmentSize != Layout.SEGMENT_SIZE
                || sb.firstSegmentOffset != Layout.FIRST_SEGMENT_OFFSET || sb.segmentCount < Layout.MIN_SEGMENTS
                || sb.segmentCount > Integer.MAX_VALUE / Layout.SEGMENT_BLOCKS) {
            throw new FormatException(FormatException.Kind.CORRUPT, "the cache device's superblock has an impossible geometry");
        }
        return sb;
    }

    /** Bytes the superblock and its segments occupy. */
    public long usedBytes() {
        return firstSegmentOffset + segmentCount * segmentSize;
    }
}
