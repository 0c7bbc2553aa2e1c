package dev.strata.cache.writecache.internal.format;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The superblock: the first 4 KiB of the cache device, rewritten by every commit with the next
 * {@code seq_count}. Metadata entries whose seq_count is below the superblock's are committed.
 *
 * <pre>
 * offset size field
 *      0    8 magic "STRATASB" (ASCII; the same for every Strata policy)
 *      8    4 CRC32C of bytes [12, 4096)
 *     12    4 format version (1)
 *     16   16 policy name, ASCII, NUL-padded ("writecache")
 *     32    4 block size in bytes (512 or 4096)
 *     36    4 zero
 *     40    8 slot count
 *     48    8 offset of metadata sector 0 in bytes (4096)
 *     56    8 offset of slot 0 in bytes
 *     64    8 seq_count: entries with a lower seq_count are committed
 *     72    8 backing device size in bytes
 *     80    8 format time, ms since the epoch
 *     88    2 length n of the backing device's identity (0..64; 0 = none recorded)
 *     90    n backing device identity, UTF-8
 *  90+n  ..4096 zero (everything from byte 512 on is always zero: the fields fit one sector)
 * </pre>
 */
public record Superblock(int version, int blockSize, long slots, long seqCount, long backingSize, String backingId,
        long formatTimeMillis) {

    public static final byte[] MAGIC = "STRATASB".getBytes(StandardCharsets.US_ASCII);
    public static final int MAX_ID_BYTES = 64;
    /** First byte the CRC covers (it ends at the end of the structure; the CRC sits in the 4 bytes before). */
    public static final int CRC_FROM = 12;
    static final int POLICY_LEN = 16;

    public Superblock {
        backingId = backingId == null ? "" : backingId;
    }

    /** A fresh version-1 superblock (seq_count 0: nothing committed). */
    public static Superblock create(Layout layout, long backingSize, String backingId, long now) {
        return new Superblock(Layout.VERSION, layout.blockSize(), layout.slots(), 0, backingSize, backingId, now);
    }

    public Layout layout() {
        return new Layout(blockSize, slots);
    }

    public Superblock withSeqCount(long seq) {
        return new Superblock(version, blockSize, slots, seq, backingSize, backingId, formatTimeMillis);
    }

    /** Encodes into a fresh 4096-byte buffer (position 0, limit 4096). */
    public ByteBuffer encode() {
        ByteBuffer b = ByteBuffer.allocate(Layout.SUPERBLOCK_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        b.put(0, MAGIC);
        b.putInt(12, version);
        b.put(16, Layout.POLICY.getBytes(StandardCharsets.US_ASCII));
        b.putInt(32, blockSize);
        b.putLong(40, slots);
        b.putLong(48, Layout.METADATA_OFFSET);
        b.putLong(56, Layout.dataOffset(blockSize, slots));
        b.putLong(64, seqCount);
        b.putLong(72, backingSize);
        b.putLong(80, formatTimeMillis);
        byte[] id = backingId.getBytes(StandardCharsets.UTF_8);
        if (id.length > MAX_ID_BYTES) {
            throw new IllegalArgumentException("backing identity longer than " + MAX_ID_BYTES + " bytes");
        }
        b.putShort(88, (short) id.length);
        b.put(90, id);
        b.putInt(8, Crc.of(b, CRC_FROM, Layout.SUPERBLOCK_BYTES - CRC_FROM));
        return b;
    }

    /**
     * Decodes and checks 4096 bytes (absolute indices from 0). Checks, in order: all zero (BLANK),
     * magic (FOREIGN), CRC (CORRUPT), policy (POLICY), version (VERSION), then geometry (CORRUPT).
     */
    public static Superblock decode(ByteBuffer block) throws FormatException {
        ByteBuffer b = block.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        if (b.capacity() < Layout.SUPERBLOCK_BYTES) {
            throw new IllegalArgumentException("superblock buffer shorter than 4096 bytes");
        }
        boolean zero = true;
        for (int i = 0; i < Layout.SUPERBLOCK_BYTES && zero; i += 8) {
            zero = b.getLong(i) == 0;
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
        if (b.getInt(8) != Crc.of(b, CRC_FROM, Layout.SUPERBLOCK_BYTES - CRC_FROM)) {
            throw new FormatException(FormatException.Kind.CORRUPT, "the cache device's superblock is corrupt (CRC mismatch)");
        }
        byte[] name = new byte[POLICY_LEN];
        b.get(16, name);
        int len = 0;
        while (len < POLICY_LEN && name[len] != 0) {
            len++;
        }
        String policy = new String(name, 0, len, StandardCharsets.US_ASCII);
        if (!Layout.POLICY.equals(policy)) {
            throw new FormatException(FormatException.Kind.POLICY,
                    "the cache device is formatted for the '" + policy + "' policy, not writecache");
        }
        int version = b.getInt(12);
        if (version != Layout.VERSION) {
            throw new FormatException(FormatException.Kind.VERSION, "the cache device has writecache format version "
                    + version + "; this bundle reads version " + Layout.VERSION);
        }
        int blockSize = b.getInt(32);
        long slots = b.getLong(40);
        int idLen = b.getShort(88) & 0xFFFF;
        if ((blockSize != 512 && blockSize != 4096) || b.getInt(36) != 0 || slots < 1 || slots > Integer.MAX_VALUE
                || b.getLong(48) != Layout.METADATA_OFFSET || b.getLong(56) != Layout.dataOffset(blockSize, slots)
                || b.getLong(64) < 0 || b.getLong(72) <= 0 || idLen > MAX_ID_BYTES) {
            throw new FormatException(FormatException.Kind.CORRUPT, "the cache device's superblock has an impossible geometry");
        }
        byte[] id = new byte[idLen];
        b.get(90, id);
        return new Superblock(version, blockSize, slots, b.getLong(64), b.getLong(72),
                new String(id, StandardCharsets.UTF_8), b.getLong(80));
    }
}
