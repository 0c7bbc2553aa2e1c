package dev.strata.cache.writeboost.internal.format;

/**
 * Fixed geometry of format version 1 of a writeboost cache device.
 *
 * <pre>
 * cache device
 * +-------------+--------------+--------------+---------- ... ---+-----------+-----------+----
 * | superblock  | record slot 0| record slot 1|   (unused)       | segment 0 | segment 1 | ...
 * | 0 .. 4 KiB  | 4 .. 8 KiB   | 8 .. 12 KiB  |   12 KiB..1 MiB  | 1 MiB     | 2 MiB     |
 * +-------------+--------------+--------------+---------- ... ---+-----------+-----------+----
 *
 * segment (1 MiB = 256 blocks of 4 KiB), holding one or more log records back to back:
 * +--------+------+------+-----+--------+------+-----+-----------------+
 * | header | data | data | ... | header | data | ... | (unused tail)   |
 * +--------+------+------+-----+--------+------+-----+-----------------+
 *  record n (span = 1 + data)   record n+1
 * </pre>
 *
 * All integers are little-endian. See {@code docs/formats/writeboost.md}.
 */
public final class Layout {
    private Layout() {
    }

    /** Format version written by this code. */
    public static final int VERSION = 1;
    /** Policy name in the superblock. */
    public static final String POLICY = "writeboost";
    /** Cache block size in bytes. */
    public static final int BLOCK = 4096;
    public static final int BLOCK_SHIFT = 12;
    /** Sectors per block: the valid-bits byte has one bit per 512-byte sector. */
    public static final int SECTORS_PER_BLOCK = BLOCK / 512;
    /** All sectors valid. */
    public static final int FULL = 0xFF;
    /** Blocks per segment (the header block included). */
    public static final int SEGMENT_BLOCKS = 256;
    public static final int SEGMENT_SIZE = SEGMENT_BLOCKS * BLOCK;
    /** Offset of the superblock. */
    public static final long SUPERBLOCK_OFFSET = 0;
    /** Offsets of the two record slots. */
    public static final long RECORD_SLOT_0 = BLOCK;
    public static final long RECORD_SLOT_1 = 2L * BLOCK;
    /** Offset of segment 0. */
    public static final long FIRST_SEGMENT_OFFSET = SEGMENT_SIZE;
    /** Fewest segments a cache device may have. */
    public static final int MIN_SEGMENTS = 16;
    /** Smallest cache device: the metadata area and {@link #MIN_SEGMENTS} segments. */
    public static final long MIN_CACHE_SIZE = FIRST_SEGMENT_OFFSET + (long) MIN_SEGMENTS * SEGMENT_SIZE;
    /** Data blocks one record can carry (a record never crosses a segment). */
    public static final int MAX_DATA = SEGMENT_BLOCKS - 1;
}
