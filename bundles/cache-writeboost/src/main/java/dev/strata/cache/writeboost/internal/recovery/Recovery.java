package dev.strata.cache.writeboost.internal.recovery;

import dev.strata.api.BlockDevice;
import dev.strata.cache.writeboost.internal.format.Crc;
import dev.strata.cache.writeboost.internal.format.Layout;
import dev.strata.cache.writeboost.internal.format.RecordHeader;
import dev.strata.cache.writeboost.internal.format.Superblock;
import dev.strata.cache.writeboost.internal.format.SuperblockRecord;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * Rebuilds the in-memory state from the log: scan, validate, truncate at the first bad record.
 *
 * <p>Two regions are scanned, each from an anchor kept in the superblock record:
 * <ol>
 * <li>the <em>clean</em> region, segments {@code reclaimed+1 .. writtenBack}: written back, so
 * their blocks are clean (a warm cache). A bad header here only ends this region early.</li>
 * <li>the <em>dirty</em> region, from segment {@code writtenBack+1} on: the log proper. Each header
 * must be intact (magic, CRC, version, counts), belong to this cache (UUID hash), sit where the
 * previous record said the next one starts, carry the next record id and the previous record's
 * header CRC. The first header that fails ends the log.</li>
 * </ol>
 * Only headers are read, except for the records not known to have been flushed: a header's
 * {@code durableId} says which earlier records were flushed before it was written; the data CRC
 * of every later record is checked, and the first mismatch truncates the log there.
 */
public final class Recovery {
    private Recovery() {
    }

    /** Receives the recovered state, in log order. */
    public interface Sink {
        /** Cache location {@code loc} holds backing block {@code block}. */
        void data(int loc, long block, int valid, boolean clean);

        /** Cached copies of blocks {@code [block, block+length)} are void. */
        void invalidate(long block, long length);

        /** A valid record; {@code dirty} is false in the clean region. */
        void record(long segmentId, int phys, long recordId, int headerCrc, boolean dirty);
    }

    /**
     * What was found.
     *
     * @param lastRecordId   id of the last record kept (the log is every record up to it)
     * @param lastHeaderCrc  header CRC of that record (the next record's previous-CRC)
     * @param nextSegment    segment id where the next record goes
     * @param nextStart      block within that segment where the next record goes
     * @param dirtyRecords   records kept in the dirty region
     * @param truncatedBy    why the log ended (for logs and tests)
     * @param bytesRead      bytes read from the cache device
     * @param cleanEnd       where the clean region's scan stopped: the offline checker (tools) compares
     *                       it with the written-back anchor, since a bad header there only ends the
     *                       region early and would otherwise go unnoticed
     */
    public record Result(long lastRecordId, int lastHeaderCrc, long nextSegment, int nextStart, int dirtyRecords,
            String truncatedBy, long bytesRead, Position cleanEnd) {
    }

    /**
     * A point in the log: the record expected next there ({@code lastRecordId + 1}, chained to
     * {@code lastCrc}) at block {@code start} of segment {@code segment}.
     */
    public record Position(long segment, int start, long lastRecordId, int lastCrc) {
    }

    /** A header block read ahead, and its decoded header (null if not intact). */
    private record Header(ByteBuffer block, RecordHeader header) {
    }

    /** A little-endian header block buffer (the format's byte order: entry access needs no view). */
    private static ByteBuffer block() {
        return ByteBuffer.allocate(Layout.BLOCK).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    }

    private static final class Pending {
        final RecordHeader header;
        final ByteBuffer block;
        final int phys;

        Pending(RecordHeader header, ByteBuffer block, int phys) {
            this.header = header;
            this.block = block;
            this.phys = phys;
        }
    }

    public static Result run(BlockDevice cache, Superblock sb, SuperblockRecord rec, Sink sink) throws IOException {
        Prefetcher pf = new Prefetcher(cache, sb, rec.reclaimedSegment() + sb.segmentCount());
        Result r;
        try {
            r = run(cache, sb, rec, sink, pf);
        } finally {
            pf.close(); // every read ahead has ended: the byte count is final
        }
        return new Result(r.lastRecordId(), r.lastHeaderCrc(), r.nextSegment(), r.nextStart(), r.dirtyRecords(),
                r.truncatedBy(), r.bytesRead() + pf.bytes(), r.cleanEnd());
    }

    /**
     * Reads the first header block of upcoming segments ahead, in parallel, with a window that
     * doubles while the scan keeps moving to the next segment (like read-ahead): a full cache of
     * one record per segment is scanned at the device's parallel random-read rate, and a short
     * log reads nothing extra. Its threads end with the scan.
     */
    private static final class Prefetcher implements AutoCloseable {
        private static final int MAX_WINDOW = 64;
        private final BlockDevice cache;
        private final Superblock sb;
        private final long maxSid;
        /** Read-ahead starts once the scan has moved through this many segments in a row (a short log reads inline). */
        private static final int MIN_WINDOW = 4;
        private java.util.concurrent.ExecutorService pool; // made at the first read ahead: a short scan starts no thread
        private final java.util.Map<Long, java.util.concurrent.Future<Header>> pending = new java.util.HashMap<>();
        private final java.util.concurrent.atomic.AtomicLong bytes = new java.util.concurrent.atomic.AtomicLong();
        private long last = Long.MIN_VALUE;
        private long next;
        private int window;

        Prefetcher(BlockDevice cache, Superblock sb, long maxSid) {
            this.cache = cache;
            this.sb = sb;
            this.maxSid = maxSid;
        }

        private java.util.concurrent.ExecutorService pool() {
            if (pool == null) {
                java.util.concurrent.atomic.AtomicInteger n = new java.util.concurrent.atomic.AtomicInteger();
                pool = java.util.concurrent.Executors.newFixedThreadPool(8, r -> {
                    Thread t = new Thread(r, "strata-writeboost-recovery-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
            }
            return pool;
        }

        /**
         * The first block of segment {@code sid}, copied into {@code block}, and its header
         * decoded (null if not intact): the read-ahead threads also check the CRC, off the
         * scanning thread.
         */
        RecordHeader segmentStart(long sid, ByteBuffer block) throws IOException {
            if (sid == last + 1) {
                window = Math.min(MAX_WINDOW, Math.max(1, window * 2));
            } else {
                for (java.util.concurrent.Future<Header> f : pending.values()) {
                    f.cancel(false);
                }
                pending.clear();
                window = 1;
                next = sid;
            }
            last = sid;
            next = Math.max(next, sid);
            while (window >= MIN_WINDOW && next < sid + window && next <= maxSid) {
                long s = next++;
                pending.put(s, pool().submit(() -> {
                    ByteBuffer b = block();
                    cache.read(offset(sb, (int) (s % sb.segmentCount()), 0), b);
                    bytes.addAndGet(Layout.BLOCK);
                    return new Header(b, RecordHeader.decode(b, 0));
                }));
            }
            java.util.concurrent.Future<Header> f = pending.remove(sid);
            block.clear();
            if (f == null) {
                cache.read(offset(sb, (int) (sid % sb.segmentCount()), 0), block);
                bytes.addAndGet(Layout.BLOCK);
                return RecordHeader.decode(block, 0);
            }
            try {
                Header h = f.get();
                block.put(0, h.block(), 0, Layout.BLOCK);
                return h.header();
            } catch (java.util.concurrent.ExecutionException e) {
                Throwable c = e.getCause();
                if (c instanceof IOException io) {
                    throw io;
                }
                throw new IOException("reading a log header failed: " + c, c);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while reading the log");
            }
        }

        long bytes() {
            return bytes.get();
        }

        @Override
        public void close() {
            if (pool == null) {
                return;
            }
            pool.shutdownNow();
            try {
                pool.awaitTermination(30, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static Result run(BlockDevice cache, Superblock sb, SuperblockRecord rec, Sink sink, Prefetcher pf)
            throws IOException {
        long n = sb.segmentCount();
        long uuid = sb.uuidHash();
        long[] bytes = {0};
        ByteBuffer block = block();

        // 1. clean region
        long expectId = rec.reclaimedLastRecordId() + 1;
        int expectPrev = rec.reclaimedLastCrc();
        long sid = rec.reclaimedSegment() + 1;
        int blk = 0;
        while (sid <= rec.writtenBackSegment()) {
            RecordHeader h = readHeader(cache, sb, sid, blk, block, bytes, pf);
            if (!fits(h, uuid, sid, blk, expectId, expectPrev)) {
                break;
            }
            int phys = (int) (sid % n);
            apply(h, block, phys, sink, true);
            sink.record(sid, phys, h.recordId(), h.headerCrc(), false);
            expectId++;
            expectPrev = h.headerCrc();
            blk = h.nextStart();
            if (blk >= Layout.SEGMENT_BLOCKS) {
                sid++;
                blk = 0;
            }
        }
        Position cleanEnd = new Position(sid, blk, expectId - 1, expectPrev);

        // 2. dirty region: the log
        expectId = rec.writtenBackLastRecordId() + 1;
        expectPrev = rec.writtenBackLastCrc();
        sid = rec.writtenBackSegment() + 1;
        blk = 0;
        long lastId = rec.writtenBackLastRecordId();
        int lastCrc = rec.writtenBackLastCrc();
        long maxDurable = lastId;
        long nextSid = sid;
        int nextStart = 0;
        int kept = 0;
        String reason = "end of log";
        ArrayDeque<Pending> pending = new ArrayDeque<>();
        while (true) {
            if (sid > rec.reclaimedSegment() + n) {
                reason = "a full lap of the log";
                break;
            }
            RecordHeader h = readHeader(cache, sb, sid, blk, block, bytes, pf);
            String why = why(h, uuid, sid, blk, expectId, expectPrev);
            if (why != null) {
                reason = why + " at segment " + sid + " block " + blk;
                break;
            }
            int phys = (int) (sid % n);
            ByteBuffer copy = block();
            copy.put(0, block, 0, Layout.BLOCK);
            pending.add(new Pending(h, copy, phys));
            maxDurable = Math.max(maxDurable, h.durableId());
            while (!pending.isEmpty() && durable(pending.peekFirst().header, maxDurable, rec)) {
                Pending p = pending.pollFirst();
                apply(p.header, p.block, p.phys, sink, false);
                sink.record(p.header.segmentId(), p.phys, p.header.recordId(), p.header.headerCrc(), true);
                kept++;
            }
            expectId++;
            expectPrev = h.headerCrc();
            lastId = h.recordId();
            lastCrc = h.headerCrc();
            blk = h.nextStart();
            if (blk >= Layout.SEGMENT_BLOCKS) {
                sid++;
                blk = 0;
            }
            nextSid = sid;
            nextStart = blk;
        }
        // 3. records not known to be flushed: check their data, truncate at the first mismatch
        if (!pending.isEmpty()) {
            ByteBuffer data = null;
            for (Pending p : pending) {
                RecordHeader h = p.header;
                if (h.dataCount() > 0 && !durable(h, maxDurable, rec)) {
                    int len = h.dataCount() * Layout.BLOCK;
                    if (data == null || data.capacity() < len) {
                        data = ByteBuffer.allocate(Math.max(len, data == null ? 0 : 2 * data.capacity())); // grown as needed, not 1 MiB up front
                    }
                    data.clear().limit(len);
                    cache.read(offset(sb, p.phys, h.startBlock() + 1), data);
                    bytes[0] += len;
                    if (Crc.of(data, 0, len) != h.dataCrc()) {
                        reason = "data CRC mismatch in record " + h.recordId() + " (not flushed before the stop)";
                        lastId = h.recordId() - 1;
                        lastCrc = h.prevCrc();
                        nextSid = h.segmentId();
                        nextStart = h.startBlock();
                        break;
                    }
                }
                apply(h, p.block, p.phys, sink, false);
                sink.record(h.segmentId(), p.phys, h.recordId(), h.headerCrc(), true);
                kept++;
            }
        }
        return new Result(lastId, lastCrc, nextSid, nextStart, kept, reason, bytes[0], cleanEnd);
    }

    /** Known flushed: a later header says so, or the superblock record does for its own session. */
    private static boolean durable(RecordHeader h, long maxDurable, SuperblockRecord rec) {
        return h.recordId() <= maxDurable || (h.recordId() <= rec.durableId() && h.session() == rec.session());
    }

    private static long offset(Superblock sb, int phys, int blk) {
        return sb.firstSegmentOffset() + (long) phys * sb.segmentSize() + (long) blk * Layout.BLOCK;
    }

    private static RecordHeader readHeader(BlockDevice cache, Superblock sb, long sid, int blk, ByteBuffer block,
            long[] bytes, Prefetcher pf) throws IOException {
        if (blk == 0) {
            return pf.segmentStart(sid, block);
        } else {
            block.clear();
            cache.read(offset(sb, (int) (sid % sb.segmentCount()), blk), block);
            bytes[0] += Layout.BLOCK;
        }
        return RecordHeader.decode(block, 0);
    }

    private static boolean fits(RecordHeader h, long uuid, long sid, int blk, long expectId, int expectPrev) {
        return why(h, uuid, sid, blk, expectId, expectPrev) == null;
    }

    /**
     * Why {@code h} is not the record expected at block {@code blk} of segment {@code sid}, or null
     * if it is (the offline tools ask the same question of a header they corrected).
     */
    public static String why(RecordHeader h, long uuid, long sid, int blk, long expectId, int expectPrev) {
        if (h == null) {
            return "no intact header";
        }
        if (h.uuidHash() != uuid) {
            return "a header of another cache";
        }
        if (h.segmentId() != sid || h.startBlock() != blk) {
            return "a header from another pass of the log";
        }
        if (h.recordId() != expectId) {
            return "record id " + h.recordId() + " where " + expectId + " was expected";
        }
        if (h.prevCrc() != expectPrev) {
            return "a header that does not chain to record " + (expectId - 1);
        }
        return null;
    }

    private static void apply(RecordHeader h, ByteBuffer block, int phys, Sink sink, boolean cleanRegion) {
        int data = 0;
        for (int i = 0; i < h.entryCount(); i++) {
            int flags = RecordHeader.entryFlags(block, 0, i);
            long b = RecordHeader.entryBlock(block, 0, i);
            if ((flags & RecordHeader.ENTRY_INVALIDATE) != 0) {
                sink.invalidate(b, RecordHeader.entryLength(block, 0, i));
            } else {
                int loc = phys * Layout.SEGMENT_BLOCKS + h.startBlock() + 1 + data;
                data++;
                sink.data(loc, b, RecordHeader.entryValid(block, 0, i),
                        cleanRegion || (flags & RecordHeader.ENTRY_CLEAN) != 0);
            }
        }
    }
}
