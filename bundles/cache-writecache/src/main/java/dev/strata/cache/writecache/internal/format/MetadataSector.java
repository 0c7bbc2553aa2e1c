package dev.strata.cache.writecache.internal.format;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One metadata sector: the entries of {@value Layout#ENTRIES_PER_SECTOR} consecutive slots.
 * Metadata sector {@code i} describes slots {@code [31 i, 31 i + 31)}; entries past the last
 * slot are free.
 *
 * <pre>
 * offset size field
 *      0    4 magic "SWCM"
 *      4    4 CRC32C of bytes [8, 512)
 *      8    8 sector index (i): a sector written to the wrong place does not validate
 *     16  16k entry k (k = 0..30):
 *               +0 8 backing block number, or -1 for a free slot
 *               +8 8 seq_count of the write that filled the slot (0 when free)
 * </pre>
 * An entry is valid iff it is not free and its seq_count is below the superblock's.
 * Only the static methods of this class touch the bytes; they use absolute indices from
 * {@code base} and never move the buffer's position.
 */
public final class MetadataSector {
    public static final int MAGIC = 0x4D435753; // "SWCM" little-endian
    public static final long FREE = -1;
    /** First byte the CRC covers (it ends at the end of the structure; the CRC sits in the 4 bytes before). */
    public static final int CRC_FROM = 8;

    private MetadataSector() {
    }

    private static ByteBuffer le(ByteBuffer b) {
        return b.order() == ByteOrder.LITTLE_ENDIAN ? b : b.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Writes entry {@code k} of the sector at {@code base} (call {@link #seal} afterwards). */
    public static void putEntry(ByteBuffer buf, int base, int k, long backingBlock, long seqCount) {
        ByteBuffer b = le(buf);
        int at = base + Layout.SECTOR_HEADER + k * Layout.ENTRY_BYTES;
        b.putLong(at, backingBlock);
        b.putLong(at + 8, backingBlock == FREE ? 0 : seqCount);
    }

    public static long entryBlock(ByteBuffer buf, int base, int k) {
        return le(buf).getLong(base + Layout.SECTOR_HEADER + k * Layout.ENTRY_BYTES);
    }

    public static long entrySeq(ByteBuffer buf, int base, int k) {
        return le(buf).getLong(base + Layout.SECTOR_HEADER + k * Layout.ENTRY_BYTES + 8);
    }

    /** Fills in magic, index and CRC of the sector at {@code base} (entries already written). */
    public static void seal(ByteBuffer buf, int base, long sectorIndex) {
        ByteBuffer b = le(buf);
        b.putInt(base, MAGIC);
        b.putLong(base + 8, sectorIndex);
        b.putInt(base + 4, Crc.of(b, base + CRC_FROM, Layout.SECTOR - CRC_FROM));
    }

    /**
     * Checks the sector at {@code base}: magic, CRC, index, and that every entry is free
     * (block -1, seq 0) or names a block below {@code backingBlocks} with a seq_count ≥ 0, and
     * that entries past {@code slots} are free.
     *
     * @throws FormatException CORRUPT, naming the sector
     */
    public static void check(ByteBuffer buf, int base, long sectorIndex, long slots, long backingBlocks)
            throws FormatException {
        ByteBuffer b = le(buf);
        if (b.getInt(base) != MAGIC || b.getInt(base + 4) != Crc.of(b, base + CRC_FROM, Layout.SECTOR - CRC_FROM)
                || b.getLong(base + 8) != sectorIndex) {
            throw corrupt(sectorIndex, "bad magic, CRC or index");
        }
        for (int k = 0; k < Layout.ENTRIES_PER_SECTOR; k++) {
            long block = entryBlock(b, base, k);
            long seq = entrySeq(b, base, k);
            boolean beyond = sectorIndex * Layout.ENTRIES_PER_SECTOR + k >= slots;
            if (block == FREE ? seq != 0 : (beyond || block < 0 || block >= backingBlocks || seq < 0)) {
                throw corrupt(sectorIndex, "impossible entry " + k);
            }
        }
    }

    private static FormatException corrupt(long sector, String why) {
        return new FormatException(FormatException.Kind.CORRUPT,
                "the cache device's metadata sector " + sector + " is corrupt (" + why + ")");
    }
}
