package dev.strata.cache.readcache.internal.format;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * The superblock: bytes [0, 4096) of the cache device, written once when the device is formatted.
 * The first 32 bytes are laid out as every Strata cache's (writeboost's too), so that a device
 * formatted for another policy is recognised as such.
 *
 * <pre>
 * offset size field
 *      0    8 magic "STRATASB" (ASCII; the same for every Strata policy)
 *      8    4 CRC32C of bytes [12, 4096)
 *     12    4 format version (1)
 *     16   16 policy name, ASCII, NUL-padded ("readcache")
 *     32    4 cache block (slot) size in bytes
 *     36    4 zero
 *     40    8 slot count
 *     48    8 metadata block count
 *     56    8 offset of data slot 0 in bytes
 *     64    8 cache UUID, most significant half
 *     72    8 cache UUID, least significant half
 *     80    8 origin device size in bytes
 *     88    8 format time, ms since the epoch
 *     96    1 length of the origin identity (0..64; 0: none was known)
 *     97   64 origin identity (the manager's UUID of the origin device), ASCII, NUL-padded
 *    161 3935 zero
 * </pre>
 */
public record Superblock(int version, int blockSize, long slots, UUID uuid, long originSize, String originId,
        long formatTimeMillis) {

    public static final byte[] MAGIC = "STRATASB".getBytes(StandardCharsets.US_ASCII);
    /** First byte the CRC covers (it ends at the end of the structure; the CRC sits in the 4 bytes before). */
    public static final int CRC_FROM = 12;
    static final int POLICY_LEN = 16;
    static final int ID_MAX = 64;

    public Superblock {
        originId = originId == null ? "" : originId;
        if (originId.length() > ID_MAX || !StandardCharsets.US_ASCII.newEncoder().canEncode(originId)) {
            throw new IllegalArgumentException("origin identity too long or not ASCII: " + originId);
        }
    }

    public static Superblock create(Layout layout, UUID uuid, long originSize, String originId, long now) {
        return new Superblock(Layout.VERSION, layout.blockSize(), layout.slots(), uuid, originSize, originId, now);
    }

    public Layout layout() {
        return new Layout(blockSize, slots);
    }

    /** A 64-bit digest of the UUID, folded into every slot entry's CRC. */
    public long uuidHash() {
        return uuid.getMostSignificantBits() ^ Long.rotateLeft(uuid.getLeastSignificantBits(), 17);
    }

    /** Encodes into a fresh 4096-byte buffer (position 0, limit 4096). */
    public ByteBuffer encode() {
        Layout l = layout();
        ByteBuffer b = ByteBuffer.allocate(Layout.META_BLOCK).order(ByteOrder.LITTLE_ENDIAN);
        b.put(0, MAGIC);
        b.putInt(12, version);
        b.put(16, Layout.POLICY.getBytes(StandardCharsets.US_ASCII));
        b.putInt(32, blockSize);
        b.putLong(40, slots);
        b.putLong(48, l.metaBlocks());
        b.putLong(56, l.dataOffset());
        b.putLong(64, uuid.getMostSignificantBits());
        b.putLong(72, uuid.getLeastSignificantBits());
        b.putLong(80, originSize);
        b.putLong(88, formatTimeMillis);
        byte[] id = originId.getBytes(StandardCharsets.US_ASCII);
        b.put(96, (byte) id.length);
        b.put(97, id);
        b.putInt(8, Crc.of(b, CRC_FROM, Layout.META_BLOCK - CRC_FROM));
        return b;
    }

    /**
     * Decodes and checks a 4096-byte block. Checks, in order: all zero (BLANK), magic (FOREIGN),
     * CRC (CORRUPT), policy (POLICY), version (VERSION), then geometry (CORRUPT).
     */
    public static Superblock decode(ByteBuffer block) throws FormatException {
        ByteBuffer b = block.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        if (b.capacity() < Layout.META_BLOCK) {
            throw new IllegalArgumentException("superblock buffer shorter than 4096 bytes");
        }
        boolean zero = true;
        for (int i = 0; i < Layout.META_BLOCK && zero; i += 8) {
            zero = b.getLong(i) == 0;
        }
        if (zero) {
            throw new FormatException(FormatException.Kind.BLANK, "the cache device is blank");
        }
        for (int i = 0; i < MAGIC.length; i++) {
            if (b.get(i) != MAGIC[i]) {
                throw new FormatException(FormatException.Kind.FOREIGN, "the cache device holds data that is not a Strata cache");
            }
        }
        if (b.getInt(8) != Crc.of(b, CRC_FROM, Layout.META_BLOCK - CRC_FROM)) {
            throw new FormatException(FormatException.Kind.CORRUPT, "the cache device's superblock is corrupt (CRC mismatch)");
        }
        String policy = ascii(b, 16, POLICY_LEN);
        if (!Layout.POLICY.equals(policy)) {
            throw new FormatException(FormatException.Kind.POLICY,
                    "the cache device is formatted for the '" + policy + "' policy, not readcache");
        }
        int version = b.getInt(12);
        if (version != Layout.VERSION) {
            throw new FormatException(FormatException.Kind.VERSION,
                    "the cache device has readcache format version " + version + "; this bundle reads version " + Layout.VERSION);
        }
        int bs = b.getInt(32);
        long slots = b.getLong(40);
        int idLen = b.get(96) & 0xff;
        if (Integer.bitCount(bs) != 1 || bs < Layout.MIN_BLOCK || bs > Layout.MAX_BLOCK || slots < 1
                || slots > Layout.MAX_SLOTS || idLen > ID_MAX || b.getInt(36) != 0) {
            throw new FormatException(FormatException.Kind.CORRUPT, "the cache device's superblock has an impossible geometry");
        }
        Layout l = new Layout(bs, slots);
        if (b.getLong(48) != l.metaBlocks() || b.getLong(56) != l.dataOffset()) {
            throw new FormatException(FormatException.Kind.CORRUPT, "the cache device's superblock has an impossible geometry");
        }
        return new Superblock(version, bs, slots, new UUID(b.getLong(64), b.getLong(72)), b.getLong(80),
                ascii(b, 97, idLen), b.getLong(88));
    }

    private static String ascii(ByteBuffer b, int at, int max) {
        byte[] x = new byte[max];
        b.get(at, x);
        int n = 0;
        while (n < max && x[n] != 0) {
            n++;
        }
        return new String(x, 0, n, StandardCharsets.US_ASCII);
    }
}
