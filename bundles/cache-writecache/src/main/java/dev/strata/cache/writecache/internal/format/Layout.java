package dev.strata.cache.writecache.internal.format;

/**
 * Geometry of format version 1 of a writecache cache device (pure arithmetic, no I/O).
 *
 * <pre>
 * cache device
 * +--------------+---------------------------------+------------+------------+---- ...
 * | superblock   | metadata: one 512-byte sector    | slot 0     | slot 1     |
 * | 0 .. 4 KiB   | per 31 slots, padded to a block  | (block)    | (block)    |
 * +--------------+---------------------------------+------------+------------+---- ...
 *  0             METADATA_OFFSET                    dataOffset
 * </pre>
 *
 * The superblock's fields lie in its first sector, and a metadata sector is one sector: a disk
 * writes a sector whole or not at all, so neither can be torn by a power cut (the rest of the
 * superblock's 4 KiB is always zero). All integers are little-endian. See
 * {@code docs/formats/writecache.md}.
 */
public record Layout(int blockSize, long slots) {

    /** Format version written by this code. */
    public static final int VERSION = 1;
    /** Policy name in the superblock. */
    public static final String POLICY = "writecache";
    public static final int SECTOR = 512;
    /** Bytes reserved for the superblock at offset 0, whatever the block size. */
    public static final int SUPERBLOCK_BYTES = 4096;
    /** Offset of metadata sector 0. */
    public static final long METADATA_OFFSET = SUPERBLOCK_BYTES;
    /** Bytes of one metadata entry: backing block (8) and seq_count (8). */
    public static final int ENTRY_BYTES = 16;
    /** Header of a metadata sector: magic, CRC, sector index. */
    public static final int SECTOR_HEADER = 16;
    /** Slots described by one metadata sector. */
    public static final int ENTRIES_PER_SECTOR = (SECTOR - SECTOR_HEADER) / ENTRY_BYTES;

    public Layout {
        if (blockSize != 512 && blockSize != 4096) {
            throw new IllegalArgumentException("block size " + blockSize);
        }
        if (slots < 1) {
            throw new IllegalArgumentException("slots " + slots);
        }
    }

    /** Metadata sectors for {@code slots} slots. */
    public static long metadataSectors(long slots) {
        return (slots + ENTRIES_PER_SECTOR - 1) / ENTRIES_PER_SECTOR;
    }

    /** Offset of the first data slot for {@code slots} slots of {@code blockSize}. */
    public static long dataOffset(int blockSize, long slots) {
        long end = METADATA_OFFSET + metadataSectors(slots) * SECTOR;
        return (end + blockSize - 1) / blockSize * blockSize;
    }

    /**
     * The layout with the most slots that fits in {@code cacheBytes}, or null when not even one
     * slot fits.
     */
    public static Layout fit(int blockSize, long cacheBytes) {
        // Each slot costs a block plus 1/31 of a sector; start from that estimate and step down.
        long n = Math.max(0, (cacheBytes - METADATA_OFFSET) * ENTRIES_PER_SECTOR
                / ((long) blockSize * ENTRIES_PER_SECTOR + SECTOR));
        while (n > 0 && dataOffset(blockSize, n) + n * blockSize > cacheBytes) {
            n--;
        }
        return n < 1 ? null : new Layout(blockSize, n);
    }

    /** Smallest cache device that holds one slot of {@code blockSize}. */
    public static long minimumCacheBytes(int blockSize) {
        return dataOffset(blockSize, 1) + blockSize;
    }

    public long metadataSectors() {
        return metadataSectors(slots);
    }

    public long dataOffset() {
        return dataOffset(blockSize, slots);
    }

    /** Byte offset of slot {@code slot}'s data. */
    public long slotOffset(long slot) {
        return dataOffset() + slot * blockSize;
    }

    /** Byte offset of metadata sector {@code sector}. */
    public static long sectorOffset(long sector) {
        return METADATA_OFFSET + sector * SECTOR;
    }

    /** The metadata sector that holds slot {@code slot}'s entry. */
    public static long sectorOf(long slot) {
        return slot / ENTRIES_PER_SECTOR;
    }

    /** Bytes of the cache device this layout uses. */
    public long usedBytes() {
        return dataOffset() + slots * blockSize;
    }
}
