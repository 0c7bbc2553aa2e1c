package dev.strata.tools.internal.format;

import dev.strata.cache.writeboost.internal.format.Layout;
import dev.strata.cache.writeboost.internal.format.RecordHeader;
import dev.strata.cache.writeboost.internal.format.Superblock;
import dev.strata.cache.writeboost.internal.format.SuperblockRecord;
import dev.strata.cache.writeboost.internal.recovery.Recovery;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Carries a writeboost log over headers damaged beyond mending, so that the intact records after
 * them are kept (a log is a chain: without this, one unreadable header would cut every later
 * record off).
 *
 * <p>The gap from the unreadable header to the next intact record of this log ({@link #next}) is
 * filled with empty records the format allows — a header-only record per block within a segment,
 * a PAD record to a segment's end — chained and numbered on from the last good record; then every
 * later header of the old chain is sealed again with its new id and previous-header CRC (its
 * entries and data CRC unchanged), and the durable ids that the headers and the superblock
 * record carry are mapped to the new numbering. What sat in the gap (the unreadable records'
 * data) is what is lost.
 */
final class LogRechain {
    private LogRechain() {
    }

    /** An intact header of this log found past the damage, and where. */
    record Found(long segment, int block, RecordHeader header) {
    }

    private static long offset(Superblock sb, long sid, int blk) {
        return sb.firstSegmentOffset() + (sid % sb.segmentCount()) * sb.segmentSize() + (long) blk * Layout.BLOCK;
    }

    private static RecordHeader header(byte[] b) {
        return RecordHeader.decode(ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN), 0);
    }

    /**
     * The first intact header of this log after block {@code blk} of segment {@code sid}: in the
     * rest of that segment or anywhere in the next (a lost record spans at most one segment, so
     * two lost records in a row are still bridged), at its own place (segment id and start block
     * match where it lies, so a header of an earlier pass of the log never qualifies) and with an
     * id above {@code lastId}. Null if none.
     */
    static Found next(Findings f, Superblock sb, long sid, int blk, long lastId) throws IOException {
        for (long s = sid; s <= sid + 1; s++) {
            int from = s == sid ? blk + 1 : 0;
            if (from >= Layout.SEGMENT_BLOCKS - 1) {
                continue;
            }
            for (int b = from; b < Layout.SEGMENT_BLOCKS - 1; b++) {
                // the first sector tells a header (magic) from data or a blank block: 1/8 of the reading
                byte[] first = f.read(offset(sb, s, b), 512);
                if (ByteBuffer.wrap(first).order(ByteOrder.LITTLE_ENDIAN).getInt(0) != RecordHeader.MAGIC) {
                    continue;
                }
                RecordHeader h = header(f.read(offset(sb, s, b), Layout.BLOCK));
                if (h != null && h.uuidHash() == sb.uuidHash() && h.segmentId() == s && h.startBlock() == b
                        && h.recordId() > lastId) {
                    return new Found(s, b, h);
                }
            }
        }
        return null;
    }

    /** What a bridge did: the ids the lost records had and the new superblock record (or null if unchanged). */
    record Bridged(long firstLostId, long lastLostId, int fillers, long resealed, SuperblockRecord rec) {
    }

    /**
     * Bridges the gap from block {@code blk} of segment {@code sid} (where record {@code lastId + 1}
     * chained to {@code lastCrc} was expected) to {@code to}, on the overlay.
     */
    static Bridged bridge(Findings f, Superblock sb, SuperblockRecord rec, long sid, int blk, long lastId, int lastCrc,
            Found to) throws IOException {
        long uuid = sb.uuidHash();
        int session = to.header().session();
        long id = lastId + 1;
        int prev = lastCrc;
        int fillers = 0;
        long s = sid;
        int b = blk;
        while (s < to.segment() || b < to.block()) {
            ByteBuffer h = ByteBuffer.allocate(Layout.BLOCK).order(ByteOrder.LITTLE_ENDIAN);
            boolean pad = s < to.segment();
            int span = pad ? Layout.SEGMENT_BLOCKS - b : 1;
            prev = RecordHeader.seal(h, 0, pad ? RecordHeader.FLAG_PAD : 0, 0, 0, id, s, lastId, prev, 0, span, b, session, uuid);
            f.overlay().patch(offset(sb, s, b), h.array());
            fillers++;
            id++;
            b = RecordHeader.nextStart(b + span);
            if (b >= Layout.SEGMENT_BLOCKS) {
                s++;
                b = 0;
            }
        }
        long oldFirst = to.header().recordId();
        long shift = id - oldFirst;
        long lastFiller = id - 1;
        // the old chain from `to` on, sealed again in the new numbering
        long oldExpect = oldFirst;
        int oldPrev = to.header().prevCrc();
        long resealed = 0;
        while (true) {
            long off = offset(sb, s, b);
            byte[] block = f.read(off, Layout.BLOCK);
            RecordHeader h = header(block);
            if (Recovery.why(h, uuid, s, b, oldExpect, oldPrev) != null) {
                break;
            }
            ByteBuffer w = ByteBuffer.wrap(block).order(ByteOrder.LITTLE_ENDIAN);
            prev = RecordHeader.seal(w, 0, h.flags(), h.entryCount(), h.dataCount(), h.recordId() + shift, h.segmentId(),
                    map(h.durableId(), lastId, oldFirst, lastFiller, shift), prev, h.dataCrc(), h.span(), h.startBlock(),
                    h.session(), uuid);
            f.overlay().patch(off, block);
            resealed++;
            oldExpect++;
            oldPrev = h.headerCrc();
            b = h.nextStart();
            if (b >= Layout.SEGMENT_BLOCKS) {
                s++;
                b = 0;
            }
            if (resealed > sb.segmentCount() * Layout.SEGMENT_BLOCKS) {
                break; // a full lap: cannot happen in a log that validates
            }
        }
        SuperblockRecord fixed = null;
        if (rec.durableId() > lastId) {
            fixed = new SuperblockRecord(rec.sequence() + 1, rec.writtenBackSegment(), rec.writtenBackLastRecordId(),
                    rec.writtenBackLastCrc(), rec.reclaimedSegment(), rec.reclaimedLastRecordId(), rec.reclaimedLastCrc(),
                    rec.uuidHash(), map(rec.durableId(), lastId, oldFirst, lastFiller, shift), rec.session());
            f.overlay().patch(fixed.slotOffset(), fixed.encode().array());
        }
        return new Bridged(lastId + 1, oldFirst - 1, fillers, resealed, fixed);
    }

    /** A durable id in the old numbering, in the new: the lost records' ids map to the last filler. */
    private static long map(long durable, long lastGood, long oldFirst, long lastFiller, long shift) {
        if (durable <= lastGood) {
            return durable;
        }
        return durable < oldFirst ? lastFiller : durable + shift;
    }
}
