package dev.strata.cache.writeboost.internal.format;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The header block of a log record. A record is this header followed by its data blocks, in one
 * segment; the next record starts {@code span} blocks after this one's header, or at block 0 of
 * the next segment when fewer than two blocks are left. Recovery reads headers only: the header
 * carries its own CRC and a separate CRC of the data blocks, checked only for records not yet
 * known to be flushed.
 *
 * <pre>
 * offset size field
 *      0    4 magic "SWBL"
 *      4    4 CRC32C of bytes [8, 4096)
 *      8    2 format version (1)
 *     10    2 flags: bit 0 PAD (no entries; fills the rest of the segment)
 *     12    2 entry count (at most 336)
 *     14    2 data block count (at most 255)
 *     16    8 record id (consecutive: each record's id is the previous record's + 1)
 *     24    8 segment id (monotonic; the segment's slot on the device is id % segment count)
 *     32    8 durable id: every record up to this id was written and the cache device flushed
 *               before this record was written
 *     40    4 header CRC of the previous record (chains the log; a stale header never links)
 *     44    4 CRC32C of the data blocks (0 when there are none)
 *     48    2 span: blocks this record occupies, header included (1 + data count, or the rest
 *               of the segment for a PAD record)
 *     50    2 first block of the record within its segment
 *     52    4 session: random, new each time the cache is opened
 *     56    8 cache UUID hash (see Superblock#uuidHash)
 *     64  12n entries, n = entry count:
 *               +0 8 backing block number (backing offset / 4096)
 *               +8 1 valid sectors: bit i set = sector i (512 bytes) of the block holds data
 *               +9 1 flags: bit 0 CLEAN (a read-cached block: never written back),
 *                           bit 1 INVALIDATE (no data block: drop cached copies of
 *                                 blocks [backing block, backing block + length))
 *              +10 2 length in blocks (1 for data entries)
 * </pre>
 * Data entries (no INVALIDATE flag) take the data blocks in order: the k-th data entry's data is
 * the record's k-th data block.
 *
 * <p>Only the static methods of this class touch the bytes; they work on absolute indices of a
 * buffer ({@code base} = index of the header block) and never move its position.
 */
public record RecordHeader(int flags, int entryCount, int dataCount, long recordId, long segmentId, long durableId,
        int prevCrc, int dataCrc, int span, int startBlock, int session, long uuidHash, int headerCrc) {

    public static final int MAGIC = 0x4C425753; // "SWBL" little-endian
    public static final int FLAG_PAD = 1;
    public static final int ENTRY_CLEAN = 1;
    public static final int ENTRY_INVALIDATE = 2;
    public static final int FIXED = 64;
    public static final int ENTRY_SIZE = 12;
    public static final int MAX_ENTRIES = (Layout.BLOCK - FIXED) / ENTRY_SIZE;
    public static final int MAX_INVALIDATE_LENGTH = 0xFFFF;
    /** First byte the CRC covers (it ends at the end of the structure; the CRC sits in the 4 bytes before). */
    public static final int CRC_FROM = 8;

    private static ByteBuffer le(ByteBuffer b) {
        return b.order() == ByteOrder.LITTLE_ENDIAN ? b : b.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Zeroes the header block at {@code base}. */
    public static void clear(ByteBuffer buf, int base) {
        ByteBuffer b = le(buf);
        for (int i = 0; i < Layout.BLOCK; i += 8) {
            b.putLong(base + i, 0);
        }
    }

    /** Writes entry {@code i} of the header at {@code base}. */
    public static void putEntry(ByteBuffer buf, int base, int i, long backingBlock, int valid, int flags, int length) {
        ByteBuffer b = le(buf);
        int at = base + FIXED + i * ENTRY_SIZE;
        b.putLong(at, backingBlock);
        b.put(at + 8, (byte) valid);
        b.put(at + 9, (byte) flags);
        b.putShort(at + 10, (short) length);
    }

    public static long entryBlock(ByteBuffer buf, int base, int i) {
        return le(buf).getLong(base + FIXED + i * ENTRY_SIZE);
    }

    public static int entryValid(ByteBuffer buf, int base, int i) {
        return buf.get(base + FIXED + i * ENTRY_SIZE + 8) & 0xFF;
    }

    public static int entryFlags(ByteBuffer buf, int base, int i) {
        return buf.get(base + FIXED + i * ENTRY_SIZE + 9) & 0xFF;
    }

    public static int entryLength(ByteBuffer buf, int base, int i) {
        return le(buf).getShort(base + FIXED + i * ENTRY_SIZE + 10) & 0xFFFF;
    }

    /**
     * Fills in the fixed fields of the header at {@code base} (its entries already written) and
     * its CRC; returns the header CRC.
     */
    public static int seal(ByteBuffer buf, int base, int flags, int entryCount, int dataCount, long recordId,
            long segmentId, long durableId, int prevCrc, int dataCrc, int span, int startBlock, int session,
            long uuidHash) {
        ByteBuffer b = le(buf);
        b.putInt(base, MAGIC);
        b.putShort(base + 8, (short) Layout.VERSION);
        b.putShort(base + 10, (short) flags);
        b.putShort(base + 12, (short) entryCount);
        b.putShort(base + 14, (short) dataCount);
        b.putLong(base + 16, recordId);
        b.putLong(base + 24, segmentId);
        b.putLong(base + 32, durableId);
        b.putInt(base + 40, prevCrc);
        b.putInt(base + 44, dataCrc);
        b.putShort(base + 48, (short) span);
        b.putShort(base + 50, (short) startBlock);
        b.putInt(base + 52, session);
        b.putLong(base + 56, uuidHash);
        int crc = Crc.of(b, base + CRC_FROM, Layout.BLOCK - CRC_FROM);
        b.putInt(base + 4, crc);
        return crc;
    }

    /**
     * Decodes the header at {@code base} if it is intact: magic, CRC, version, and internally
     * consistent counts. Returns null otherwise. (Whether it belongs in the log at this place is
     * the caller's question: segment id, record id, previous CRC, UUID.)
     */
    public static RecordHeader decode(ByteBuffer buf, int base) {
        ByteBuffer b = le(buf);
        if (b.getInt(base) != MAGIC) {
            return null;
        }
        int crc = b.getInt(base + 4);
        if (crc != Crc.of(b, base + CRC_FROM, Layout.BLOCK - CRC_FROM)) {
            return null;
        }
        if ((b.getShort(base + 8) & 0xFFFF) != Layout.VERSION) {
            return null;
        }
        int flags = b.getShort(base + 10) & 0xFFFF;
        int entries = b.getShort(base + 12) & 0xFFFF;
        int data = b.getShort(base + 14) & 0xFFFF;
        int span = b.getShort(base + 48) & 0xFFFF;
        int start = b.getShort(base + 50) & 0xFFFF;
        RecordHeader h = new RecordHeader(flags, entries, data, b.getLong(base + 16), b.getLong(base + 24),
                b.getLong(base + 32), b.getInt(base + 40), b.getInt(base + 44), span, start, b.getInt(base + 52),
                b.getLong(base + 56), crc);
        if (entries > MAX_ENTRIES || data > Layout.MAX_DATA || data > entries || start >= Layout.SEGMENT_BLOCKS - 1
                || span < 1 + data || start + span > Layout.SEGMENT_BLOCKS || (flags & ~FLAG_PAD) != 0
                || ((flags & FLAG_PAD) != 0 && (entries != 0 || start + span != Layout.SEGMENT_BLOCKS))
                || ((flags & FLAG_PAD) == 0 && span != 1 + data)) {
            return null;
        }
        int counted = 0;
        for (int i = 0; i < entries; i++) {
            int ef = entryFlags(b, base, i);
            if ((ef & ~(ENTRY_CLEAN | ENTRY_INVALIDATE)) != 0) {
                return null;
            }
            if ((ef & ENTRY_INVALIDATE) == 0) {
                counted++;
                if (entryLength(b, base, i) != 1 || entryValid(b, base, i) == 0) {
                    return null;
                }
            } else if (entryLength(b, base, i) == 0) {
                return null;
            }
            if (entryBlock(b, base, i) < 0) {
                return null;
            }
        }
        if (counted != data) {
            return null;
        }
        return h;
    }

    public boolean pad() {
        return (flags & FLAG_PAD) != 0;
    }

    /** Block index (within the segment) where the next record starts, or {@link Layout#SEGMENT_BLOCKS} for the next segment. */
    public int nextStart() {
        return nextStart(startBlock + span);
    }

    /** Where a record following one that ends at block {@code end} starts (deterministic: no skipping). */
    public static int nextStart(int end) {
        return end + 2 > Layout.SEGMENT_BLOCKS ? Layout.SEGMENT_BLOCKS : end;
    }
}
