package dev.strata.tools.internal.format;

import dev.strata.api.BlockDevice;
import dev.strata.cache.writeboost.internal.format.Layout;
import dev.strata.cache.writeboost.internal.format.RecordHeader;
import dev.strata.cache.writeboost.internal.format.Superblock;
import dev.strata.cache.writeboost.internal.format.SuperblockRecord;
import dev.strata.cache.writeboost.internal.recovery.Recovery;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * writeboost: the superblock, the two superblock-record slots and the log, scanned by the
 * cache's own {@link Recovery}. Where the recovery stops early — the clean region before the
 * written-back anchor, the log at a header that one corrected byte makes the next record — the
 * damage is named and corrected on the overlay, and the recovery runs again from the start.
 * A log that ends before the record the superblock record says is durable has lost records.
 */
public final class WriteboostFormat implements CacheFormat {
    private static final int MAX_ROUNDS = 10_000;

    @Override
    public String name() {
        return Layout.POLICY;
    }

    /** The scan's result: the decoded superblock and record (null if unreadable) and the last recovery. */
    private record State(Superblock sb, SuperblockRecord rec, Recovery.Result result, Counter counter) {
    }

    @Override
    public Findings scan(BlockDevice cache, Hints hints) throws IOException {
        Findings f = new Findings(new Overlay(cache));
        state(cache, f, hints);
        return f;
    }

    private static final byte[] HEADER_MAGIC = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(RecordHeader.MAGIC).array();
    /** Superblock bytes always zero. */
    private static final int[] SB_ZEROS = {104, Layout.BLOCK};
    /** Superblock record bytes always zero. */
    private static final int[] REC_ZEROS = {12, 16, 44, 48, 68, 72, 92, Layout.BLOCK};

    /**
     * A superblock from the rest of the device: the cache UUID's hash from an intact superblock
     * record (or a record header), which is all the log needs of it (the UUID is rebuilt as
     * {@code hash:0}, which hashes the same); the segment count as the target formats it, from
     * the device size; the backing size from the operator. No backing identity is recorded.
     */
    private static Superblocks.Rebuilt rebuild(Findings f, Hints h) throws IOException {
        long size = f.overlay().size();
        Long hash = null;
        for (long slot : new long[] {Layout.RECORD_SLOT_0, Layout.RECORD_SLOT_1}) {
            if (hash == null && slot + Layout.BLOCK <= size) {
                ByteBuffer b = ByteBuffer.wrap(f.read(slot, Layout.BLOCK)).order(ByteOrder.LITTLE_ENDIAN);
                if (SuperblockRecord.decode(b, b.getLong(72)) != null) {
                    hash = b.getLong(72);
                }
            }
        }
        for (long off = Layout.FIRST_SEGMENT_OFFSET; hash == null && off + Layout.BLOCK <= size; off += Layout.SEGMENT_SIZE) {
            RecordHeader rh = RecordHeader.decode(ByteBuffer.wrap(f.read(off, Layout.BLOCK)).order(ByteOrder.LITTLE_ENDIAN), 0);
            if (rh != null) {
                hash = rh.uuidHash();
            }
        }
        if (hash == null) {
            return null;
        }
        if (h.backingSize() == 0) {
            return Superblocks.Rebuilt.refused("to rebuild it pass the backing device file (strata-tool repair CACHE BACKING)"
                    + " or its size (--backing-size=BYTES)");
        }
        long segs = Math.min((size - Layout.FIRST_SEGMENT_OFFSET) / Layout.SEGMENT_SIZE, Integer.MAX_VALUE / Layout.SEGMENT_BLOCKS);
        Superblock sb = Superblock.create(segs, new java.util.UUID(hash, 0), h.backingSize(), 0, null);
        return Superblocks.Rebuilt.of(sb.encode().array(), segs + " segments from the device size, the cache's UUID hash "
                + Long.toHexString(hash) + " from its log, backing size " + h.backingSize() + " as given; no backing identity recorded");
    }

    private State state(BlockDevice cache, Findings f, Hints hints) throws IOException {
        Superblock sb = Superblocks.read(f, Layout.BLOCK, Superblock.MAGIC, Superblock.CRC_FROM, SB_ZEROS,
                b -> Superblock.decode(ByteBuffer.wrap(b)), x -> rebuild(x, hints));
        if (sb == null) {
            return new State(null, null, null, null);
        }
        if (sb.usedBytes() > cache.size()) {
            f.fatal("superblock: it describes " + sb.usedBytes() + " bytes but the device has " + cache.size());
            return new State(sb, null, null, null);
        }
        SuperblockRecord rec = SuperblockRecord.newer(slot(f, 0, Layout.RECORD_SLOT_0, sb), slot(f, 1, Layout.RECORD_SLOT_1, sb));
        if (rec == null && Mend.allZero(f.read(Layout.RECORD_SLOT_1, Layout.BLOCK))) {
            // slot 1 takes the record's first update (sequence 1): never written, so slot 0 held the
            // record the cache was formatted with, which names no written-back or reclaimed segment
            rec = SuperblockRecord.initial(sb.uuidHash());
            f.overlay().patch(rec.slotOffset(), rec.encode().array());
            f.corrected("superblock record: slot 0 is unreadable (slot 1 was never written)",
                    "superblock record rebuilt as the one the cache was formatted with (the record was never updated:"
                            + " nothing was written back yet)");
        }
        if (rec == null) {
            f.fatal("superblock record: neither slot holds an intact record of this cache, and which records were written back"
                    + " is kept only there, so it cannot be rebuilt; restore the cache device from a copy, or write off its dirty data");
            return new State(sb, null, null, null);
        }
        for (int round = 0; round < MAX_ROUNDS; round++) {
            Counter counter = new Counter();
            Recovery.Result r = Recovery.run(f.overlay(), sb, rec, counter);
            Recovery.Position c = r.cleanEnd();
            if (c.lastRecordId() < rec.writtenBackLastRecordId()) {
                if (fixHeader(f, sb, c.segment(), c.start(), c.lastRecordId(), c.lastCrc(), "clean region")) {
                    continue;
                }
                // the clean region holds only copies the backing device has: drop it (reclaimed up to the written-back anchor)
                f.lost("log: the clean region ends at segment " + c.segment() + " block " + c.start() + " (record "
                        + (c.lastRecordId() + 1) + " unreadable) before record " + rec.writtenBackLastRecordId(),
                        "the clean (written-back) copies of records " + (c.lastRecordId() + 1) + ".."
                                + rec.writtenBackLastRecordId() + " are not kept in the cache: they are read from the backing device, nothing is lost");
                rec = new SuperblockRecord(rec.sequence() + 1, rec.writtenBackSegment(), rec.writtenBackLastRecordId(),
                        rec.writtenBackLastCrc(), rec.writtenBackSegment(), rec.writtenBackLastRecordId(), rec.writtenBackLastCrc(),
                        rec.uuidHash(), rec.durableId(), rec.session());
                f.overlay().patch(rec.slotOffset(), rec.encode().array());
                continue;
            }
            if (r.truncatedBy().startsWith("data CRC")) {
                if (rec.durableId() > r.lastRecordId()) {
                    f.lost("log: it ends at record " + r.lastRecordId() + " (" + r.truncatedBy()
                            + ") but the superblock record says records up to " + rec.durableId() + " are durable",
                            "records " + (r.lastRecordId() + 1) + ".." + rec.durableId() + " (their blocks read their earlier values)");
                    rec = lowerDurable(f, rec, r);
                }
                return new State(sb, rec, r, counter);
            }
            if (fixHeader(f, sb, r.nextSegment(), r.nextStart(), r.lastRecordId(), r.lastHeaderCrc(), "log")) {
                continue;
            }
            long expect = r.lastRecordId() + 1;
            LogRechain.Found next = r.nextStart() < Layout.SEGMENT_BLOCKS
                    ? LogRechain.next(f, sb, r.nextSegment(), r.nextStart(), r.lastRecordId()) : null;
            boolean damage = rec.durableId() >= expect || (next != null && next.header().durableId() >= expect);
            if (!damage) {
                return new State(sb, rec, r, counter); // the log simply ends (a power cut's unflushed tail)
            }
            if (next != null) {
                LogRechain.Bridged br = LogRechain.bridge(f, sb, rec, r.nextSegment(), r.nextStart(), r.lastRecordId(),
                        r.lastHeaderCrc(), next);
                String ids = br.firstLostId() == br.lastLostId() ? "record " + br.firstLostId()
                        : "records " + br.firstLostId() + ".." + br.lastLostId();
                f.lost("log: the header of record " + expect + " (segment " + r.nextSegment() + " block " + r.nextStart()
                        + ") is unreadable (" + r.truncatedBy() + "), damaged beyond its CRC; the log went on at segment "
                        + next.segment() + " block " + next.block(),
                        ids + " between segment " + r.nextSegment() + " block " + r.nextStart() + " and segment " + next.segment()
                                + " block " + next.block() + ": the backing blocks they wrote cannot be named and read their"
                                + " earlier values (the records after them are kept, renumbered)");
                if (br.rec() != null) {
                    rec = br.rec();
                }
                continue;
            }
            f.lost("log: it ends at record " + r.lastRecordId() + " (" + r.truncatedBy()
                    + ") but the superblock record says records up to " + rec.durableId() + " are durable",
                    "records " + expect + ".." + rec.durableId() + " (their blocks read their earlier values)");
            rec = lowerDurable(f, rec, r);
            return new State(sb, rec, r, counter);
        }
        f.fatal("log: more than " + MAX_ROUNDS + " damaged headers; not repairable by this tool");
        return new State(sb, rec, null, null);
    }

    /** The superblock record with its durable id lowered to the log's last record, laid on the overlay. */
    private static SuperblockRecord lowerDurable(Findings f, SuperblockRecord rec, Recovery.Result r) {
        SuperblockRecord fixed = new SuperblockRecord(rec.sequence() + 1, rec.writtenBackSegment(),
                rec.writtenBackLastRecordId(), rec.writtenBackLastCrc(), rec.reclaimedSegment(),
                rec.reclaimedLastRecordId(), rec.reclaimedLastCrc(), rec.uuidHash(), r.lastRecordId(), rec.session());
        f.overlay().patch(fixed.slotOffset(), fixed.encode().array());
        return fixed;
    }

    private static SuperblockRecord slot(Findings f, int n, long offset, Superblock sb) throws IOException {
        byte[] b = f.read(offset, Layout.BLOCK);
        SuperblockRecord r = SuperblockRecord.decode(ByteBuffer.wrap(b), sb.uuidHash());
        if (r != null || Superblocks.allZero(b)) {
            return r;
        }
        String fix = Mend.mend(b, Layout.BLOCK, SuperblockRecord.MAGIC, REC_ZEROS, SuperblockRecord.CRC_FROM,
                w -> SuperblockRecord.decode(ByteBuffer.wrap(w), sb.uuidHash()) != null);
        if (fix == null) {
            return null; // a torn update (the other slot holds the state before it) or a foreign block
        }
        f.overlay().patch(offset, b);
        f.corrected("superblock record slot " + n + ": " + fix + " is damaged", "superblock record slot " + n + " " + fix + " restored");
        return SuperblockRecord.decode(ByteBuffer.wrap(b), sb.uuidHash());
    }

    /**
     * Tries to make the header at block {@code blk} of segment {@code sid} the record expected
     * there by mending it (magic, zero tail, one byte); lays the fix on the overlay if so.
     */
    private static boolean fixHeader(Findings f, Superblock sb, long sid, int blk, long lastId, int lastCrc,
            String region) throws IOException {
        if (blk >= Layout.SEGMENT_BLOCKS) {
            return false;
        }
        long offset = sb.firstSegmentOffset() + (sid % sb.segmentCount()) * sb.segmentSize() + (long) blk * Layout.BLOCK;
        byte[] b = f.read(offset, Layout.BLOCK);
        if (RecordHeader.decode(ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN), 0) != null || Mend.allZero(b)) {
            return false; // intact (the log ends here for another reason: stale, not chained) or never written
        }
        int entries = Math.min(RecordHeader.MAX_ENTRIES, ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getShort(12) & 0xFFFF);
        int[] zeros = {RecordHeader.FIXED + RecordHeader.ENTRY_SIZE * entries, Layout.BLOCK};
        String fix = Mend.mend(b, Layout.BLOCK, HEADER_MAGIC, zeros, RecordHeader.CRC_FROM, w -> {
            RecordHeader h = RecordHeader.decode(ByteBuffer.wrap(w).order(ByteOrder.LITTLE_ENDIAN), 0);
            return h != null && Recovery.why(h, sb.uuidHash(), sid, blk, lastId + 1, lastCrc) == null;
        });
        if (fix == null) {
            return false;
        }
        f.overlay().patch(offset, b);
        f.corrected(region + ": the header of record " + (lastId + 1) + " (segment " + sid + " block " + blk
                + "): " + fix + " is damaged; the " + region + " stopped there",
                "record " + (lastId + 1) + " header " + fix + " restored");
        return true;
    }

    /** Counts what the recovery found (the in-memory index is the target's business, not the tool's). */
    private static final class Counter implements Recovery.Sink {
        final Map<Long, Boolean> blocks = new HashMap<>(); // backing block -> dirty
        final List<Map<String, Object>> records = new ArrayList<>();

        @Override
        public void data(int loc, long block, int valid, boolean clean) {
            blocks.put(block, !clean);
        }

        @Override
        public void invalidate(long block, long length) {
            for (long b = block; b < block + length; b++) {
                blocks.remove(b);
            }
        }

        @Override
        public void record(long segmentId, int phys, long recordId, int headerCrc, boolean dirty) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", recordId);
            m.put("segment", segmentId);
            m.put("region", dirty ? "dirty" : "clean");
            records.add(m);
        }

        long dirty() {
            return blocks.values().stream().filter(d -> d).count();
        }
    }

    @Override
    public Map<String, Object> dump(BlockDevice cache, Findings ignored) throws IOException {
        Findings f = new Findings(new Overlay(cache));
        State s = state(cache, f, Hints.NONE);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("policy", Layout.POLICY);
        if (s.sb() == null) {
            m.put("problems", f.problems());
            return m;
        }
        Superblock sb = s.sb();
        m.put("version", sb.version());
        m.put("uuid", sb.uuid().toString());
        m.put("block_size", sb.blockSize());
        m.put("segment_size", sb.segmentSize());
        m.put("segments", sb.segmentCount());
        m.put("backing_size", sb.backingSize());
        m.put("backing_id", sb.backingId() == null ? "" : sb.backingId().toString());
        m.put("formatted_ms", sb.formatTimeMillis());
        if (s.rec() != null) {
            SuperblockRecord r = s.rec();
            Map<String, Object> rm = new LinkedHashMap<>();
            rm.put("sequence", r.sequence());
            rm.put("written_back_segment", r.writtenBackSegment());
            rm.put("written_back_record", r.writtenBackLastRecordId());
            rm.put("reclaimed_segment", r.reclaimedSegment());
            rm.put("reclaimed_record", r.reclaimedLastRecordId());
            rm.put("durable_id", r.durableId());
            rm.put("session", Integer.toUnsignedString(r.session(), 16));
            m.put("superblock_record", rm);
        }
        if (s.result() != null) {
            Recovery.Result r = s.result();
            m.put("last_record", r.lastRecordId());
            m.put("next_segment", r.nextSegment());
            m.put("next_block", r.nextStart());
            m.put("log_ends_by", r.truncatedBy());
            m.put("dirty_records", r.dirtyRecords());
            m.put("cached_blocks", (long) s.counter().blocks.size());
            m.put("dirty_blocks", s.counter().dirty());
            m.put("records", s.counter().records);
        }
        m.put("problems", f.problems());
        return m;
    }
}
