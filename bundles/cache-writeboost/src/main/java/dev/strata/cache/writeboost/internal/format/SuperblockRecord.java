package dev.strata.cache.writeboost.internal.format;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The superblock record: how far the log has been written back and reclaimed. Written
 * alternately to two slots (block 1 and block 2 of the cache device, by {@code sequence % 2}),
 * so a torn update leaves the other slot intact; the valid slot with the higher sequence wins.
 *
 * <p>Segments up to {@code writtenBackSegment} have been written back to the backing device (and
 * the backing device flushed). Segments up to {@code reclaimedSegment} ({@code <= writtenBackSegment})
 * may be overwritten. Recovery scans record headers from segment {@code reclaimedSegment + 1} on:
 * segments up to {@code writtenBackSegment} yield clean blocks, later ones dirty blocks. Each
 * scan starts with a record whose id is the anchor id + 1 and whose previous-header CRC is the
 * anchor CRC.
 *
 * <pre>
 * offset size field
 *      0    8 magic "STRATAWR"
 *      8    4 CRC32C of bytes [12, 4096)
 *     12    4 zero
 *     16    8 sequence (incremented by every update)
 *     24    8 written-back segment id (-1: none)
 *     32    8 id of the last record of that segment (0: none)
 *     40    4 header CRC of that record (0: none)
 *     44    4 zero
 *     48    8 reclaimed segment id (-1: none)
 *     56    8 id of the last record of that segment
 *     64    4 header CRC of that record
 *     68    4 zero
 *     72    8 cache UUID hash (as in every record header)
 *     80    8 durable id: every record up to this id, written in the session below, is durable
 *     88    4 session of the run that wrote this record (a later run's records are not covered)
 *     92 4004 zero
 * </pre>
 */
public record SuperblockRecord(long sequence, long writtenBackSegment, long writtenBackLastRecordId,
        int writtenBackLastCrc, long reclaimedSegment, long reclaimedLastRecordId, int reclaimedLastCrc,
        long uuidHash, long durableId, int session) {

    public static final byte[] MAGIC = "STRATAWR".getBytes(StandardCharsets.US_ASCII);
    /** First byte the CRC covers (it ends at the end of the structure; the CRC sits in the 4 bytes before). */
    public static final int CRC_FROM = 12;

    /** The record of a freshly formatted cache. */
    public static SuperblockRecord initial(long uuidHash) {
        return new SuperblockRecord(0, -1, 0, 0, -1, 0, 0, uuidHash, 0, 0);
    }

    /** Byte offset of the slot this record is written to. */
    public long slotOffset() {
        return (sequence & 1) == 0 ? Layout.RECORD_SLOT_0 : Layout.RECORD_SLOT_1;
    }

    /** Encodes into {@code b} (absolute, from index 0; 4096 bytes). */
    public void encode(ByteBuffer block) {
        ByteBuffer b = block.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < Layout.BLOCK; i += 8) {
            b.putLong(i, 0);
        }
        b.put(0, MAGIC);
        b.putLong(16, sequence);
        b.putLong(24, writtenBackSegment);
        b.putLong(32, writtenBackLastRecordId);
        b.putInt(40, writtenBackLastCrc);
        b.putLong(48, reclaimedSegment);
        b.putLong(56, reclaimedLastRecordId);
        b.putInt(64, reclaimedLastCrc);
        b.putLong(72, uuidHash);
        b.putLong(80, durableId);
        b.putInt(88, session);
        b.putInt(8, Crc.of(b, CRC_FROM, Layout.BLOCK - CRC_FROM));
    }

    public ByteBuffer encode() {
        ByteBuffer b = ByteBuffer.allocate(Layout.BLOCK);
        encode(b);
        return b;
    }

    /** Decodes a slot; null if the slot is not a valid record of the cache with {@code uuidHash}. */
    public static SuperblockRecord decode(ByteBuffer block, long uuidHash) {
        ByteBuffer b = block.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < MAGIC.length; i++) {
            if (b.get(i) != MAGIC[i]) {
                return null;
            }
        }
        if (b.getInt(8) != Crc.of(b, CRC_FROM, Layout.BLOCK - CRC_FROM) || b.getLong(72) != uuidHash) {
            return null;
        }
        SuperblockRecord r = new SuperblockRecord(b.getLong(16), b.getLong(24), b.getLong(32), b.getInt(40),
                b.getLong(48), b.getLong(56), b.getInt(64), uuidHash, b.getLong(80), b.getInt(88));
        if (r.sequence < 0 || r.reclaimedSegment > r.writtenBackSegment || r.reclaimedSegment < -1) {
            return null;
        }
        return r;
    }

    /** The newer of two decoded slots (either may be null). */
    public static SuperblockRecord newer(SuperblockRecord a, SuperblockRecord b) {
        if (a == null) {
            return b;
        }
        if (b == null) {
            return a;
        }
        return a.sequence >= b.sequence ? a : b;
    }
}
