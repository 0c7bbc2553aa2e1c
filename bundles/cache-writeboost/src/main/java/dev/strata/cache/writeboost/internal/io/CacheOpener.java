package dev.strata.cache.writeboost.internal.io;

import dev.strata.cache.support.units.Iec;
import dev.strata.api.BlockDevice;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.WritebackController;
import dev.strata.cache.writeboost.internal.format.FormatException;
import dev.strata.cache.writeboost.internal.format.Layout;
import dev.strata.cache.writeboost.internal.format.Superblock;
import dev.strata.cache.writeboost.internal.format.SuperblockRecord;
import dev.strata.cache.writeboost.internal.recovery.Recovery;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.UUID;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Opening a cache: checking the devices, formatting a blank or foreign one (format=true), and recovery. */
final class CacheOpener {
    /** The refusal's advice for a damaged cache device: repair keeps its dirty blocks, a format does not. */
    static final String REPAIR_FIRST = "; its dirty blocks may still be saved: with the cache device not in use "
            + "(dev:remove the device, or stop Strata) run strata-tool check, then strata-tool repair, on it "
            + "(docs/operations.md, a corrupted cache); format=true instead starts it empty (its contents, dirty "
            + "blocks included, are lost)";

    private static final Logger LOG = LoggerFactory.getLogger(CacheOpener.class);
    static final int SB = Layout.SEGMENT_BLOCKS;
    static final int BS = Layout.BLOCK;

    private CacheOpener() {
    }


    // ------------------------------------------------------------------------------------------
    // opening

    /**
     * Opens (formatting a blank device, or any device when {@code format} is true and it does not
     * hold a valid writeboost cache for this backing device) and recovers a cache.
     *
     * @throws InvalidArgumentException for unusable devices; nothing has been written then
     */
    static WriteboostCache open(String name, BlockDevice backing, BlockDevice cache, boolean format,
            Tunables tunables, WriteboostCache.Options options, Function<String, WritebackController> controllers,
            String backingIdentity) throws IOException {
        UUID backingId = identity(backingIdentity);
        if (backing == cache) {
            throw new InvalidArgumentException("writeboost: backing and cache are the same device; use two devices");
        }
        if (cache.size() < Layout.MIN_CACHE_SIZE) {
            throw new InvalidArgumentException("writeboost: the cache device has " + Iec.size(cache.size()) + "; at least "
                    + Iec.atLeast(Layout.MIN_CACHE_SIZE) + " are needed; use a larger cache device");
        }
        if (backing.size() % BS != 0) {
            throw new InvalidArgumentException("writeboost: the backing device's size (" + Iec.exact(backing.size())
                    + ") is not a multiple of 4 KiB; use a backing device of whole 4 KiB blocks");
        }
        if (options.buffers() != WriteboostCache.Options.AUTO_BUFFERS && (options.buffers() < 2 || options.buffers() > 64)) {
            throw new InvalidArgumentException("writeboost: buffers=" + options.buffers() + " is out of range; allowed 2 to 64");
        }
        ByteBuffer block = ByteBuffer.allocate(BS);
        cache.read(Layout.SUPERBLOCK_OFFSET, block);
        Superblock sb;
        SuperblockRecord rec = null;
        try {
            sb = Superblock.decode(block);
            if (sb.usedBytes() > cache.size()) {
                throw new FormatException(FormatException.Kind.CORRUPT, "the cache device's superblock describes "
                        + Iec.exact(sb.usedBytes()) + " but the device has " + Iec.exact(cache.size()));
            }
            if (backingId != null && sb.backingId() != null && !backingId.equals(sb.backingId())) {
                throw new FormatException(FormatException.Kind.FOREIGN, "the cache device belongs to another backing "
                        + "device (identity " + sb.backingId() + ", not this one's " + backingId + ")");
            }
            if (sb.backingSize() != backing.size() && backingId != null && backingId.equals(sb.backingId())) {
                throw new InvalidArgumentException("writeboost: " + sizeChanged(sb.backingSize(), backing.size(),
                        backingId.toString()));
            }
            if (sb.backingSize() != backing.size()) {
                throw new FormatException(FormatException.Kind.FOREIGN, "the cache device belongs to a backing device of "
                        + Iec.exact(sb.backingSize()) + ", not this one (" + Iec.exact(backing.size()) + ")");
            }
            rec = readRecord(cache, sb.uuidHash());
            if (rec == null) {
                throw new FormatException(FormatException.Kind.CORRUPT, "both superblock record slots of the cache device are corrupt");
            }
        } catch (FormatException e) {
            if (e.kind() != FormatException.Kind.BLANK && !format) {
                // a damaged writeboost cache may hold dirty blocks: repair first, format last
                throw new InvalidArgumentException("writeboost: " + e.getMessage()
                        + (e.kind() == FormatException.Kind.CORRUPT ? REPAIR_FIRST
                        : "; pass format=true to format it (its contents are lost)"));
            }
            long segs = Math.min((cache.size() - Layout.FIRST_SEGMENT_OFFSET) / Layout.SEGMENT_SIZE,
                    Integer.MAX_VALUE / SB);
            sb = Superblock.create(segs, UUID.randomUUID(), backing.size(), System.currentTimeMillis(), backingId);
            rec = SuperblockRecord.initial(sb.uuidHash());
            formatDevice(cache, sb, rec);
            LOG.info("{}: formatted the cache device: {} segments of 1 MiB", name, segs);
        }
        if (options.buffers() == WriteboostCache.Options.AUTO_BUFFERS) {
            options = options.withBuffers(autoBuffers(sb.segmentCount(), options.flushers()));
        }
        // movable: cache:replace moves the open cache onto a copy of its device (MovableCacheDevice)
        return new WriteboostCache(name, backing, new MovableCacheDevice(cache), sb, rec, tunables, options, controllers);
    }

    /**
     * The log buffers of a cache of {@code segments} 1 MiB segments when none are asked for:
     * 4 below 512 MiB, 8 from 512 MiB, 8 per flusher from 1 GiB (500 and 1,000 segments: a
     * device of exactly 1 GiB holds 1,023), so that each of the log writes in flight covers up
     * to 4 MiB whatever {@code flushers} is (24 with the default 3). More buffers let each log
     * write cover more when sealed segments queue up (up to half the buffers in flight in all),
     * so writes faster than the cache device cost fewer syscalls, completions and wake-ups per
     * MiB: in the in-process bench the daemons' CPU per 4 KiB write fell by a third and the
     * writers' by a sixth (docs/benchmarks.md, "Fourth pass"). Small caches keep 4, so that
     * the buffers stay a small part of the log (the log counts as nearly full at 2 ×
     * buffers free segments).
     */
    static int autoBuffers(long segments, int flushers) {
        return segments >= 1000 ? 8 * Math.max(1, flushers) : segments >= 500 ? 8 : 4;
    }

    static SuperblockRecord readRecord(BlockDevice cache, long uuidHash) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(BS);
        cache.read(Layout.RECORD_SLOT_0, b);
        SuperblockRecord r0 = SuperblockRecord.decode(b, uuidHash);
        b.clear();
        cache.read(Layout.RECORD_SLOT_1, b);
        SuperblockRecord r1 = SuperblockRecord.decode(b, uuidHash);
        return SuperblockRecord.newer(r0, r1);
    }

    static void formatDevice(BlockDevice cache, Superblock sb, SuperblockRecord rec) throws IOException {
        // record slots first, flushed, then the superblock: a stop half-way leaves no valid superblock
        cache.write(rec.slotOffset(), rec.encode(), 0);
        cache.write(Layout.RECORD_SLOT_1, ByteBuffer.allocate(BS), 0);
        cache.flush();
        cache.write(Layout.SUPERBLOCK_OFFSET, sb.encode(), 0);
        cache.flush();
    }

    /**
     * Recovery at open: replays the log into the index and the per-segment arrays of {@code log}
     * and positions the head at the next record's place (scan, validate and truncate are
     * {@link Recovery}'s). Returns what it found and the last header CRC (the flusher's chain).
     */
    static Recovery.Result recover(LogState log, SuperblockRecord rec) throws IOException {
        long size = log.size;
        Recovery.Result r = Recovery.run(log.cache, log.sb, rec, new Recovery.Sink() {
            @Override
            public void data(int loc, long block, int valid, boolean clean) {
                if (block < 0 || block >= size / BS) {
                    return;
                }
                log.map.put(block, loc, valid, clean);
            }

            @Override
            public void invalidate(long block, long length) {
                log.invalidateInMap(block, Math.min(block + length, size / BS));
            }

            @Override
            public void record(long segmentId, int phys, long recordId, int headerCrc, boolean dirtyRegion) {
                log.segSid[phys] = segmentId;
                log.segLastId[phys] = recordId;
                log.segLastCrc[phys] = headerCrc;
            }
        });
        log.lwb = rec.writtenBackSegment();
        log.lwbAnchorId = rec.writtenBackLastRecordId();
        log.lwbAnchorCrc = rec.writtenBackLastCrc();
        log.recordedLwb = log.lwb;
        log.reclaimSid = rec.reclaimedSegment();
        log.reclaimAnchorId = rec.reclaimedLastRecordId();
        log.reclaimAnchorCrc = rec.reclaimedLastCrc();
        log.recordSeq = rec.sequence();
        log.recordedDurable = r.lastRecordId(); // nothing new to record until something is written
        long dirtyCount = 0;
        for (int p = 0; p < log.nSeg; p++) {
            if (log.segSid[p] >= 0 && log.segSid[p] > log.lwb) {
                dirtyCount += log.map.dirtyIn(p * SB + 1, p * SB + SB);
            }
        }
        log.dirty = dirtyCount;
        log.nextRecordId = r.lastRecordId() + 1;
        log.lastSealedId = r.lastRecordId();
        log.lastWrittenId = r.lastRecordId();
        log.lastFlushedId.set(r.lastRecordId());
        // position the head at the next record's place
        long nextSid = r.nextSegment();
        int nextStart = r.nextStart();
        log.writtenEnd = nextSid * SB + nextStart;
        if (nextStart == 0) {
            // the next record starts a fresh segment: make the previous one the (complete) head
            log.headSid = nextSid - 1;
            log.recStart = SB;
            log.recPos = SB;
            log.completedSid = nextSid - 1;
            log.markerPushedFor = log.headSid;
        } else {
            log.headSid = nextSid;
            log.completedSid = nextSid - 1;
            log.startRecordAt(nextStart);
        }
        log.cache.flush(); // what recovery read is what later records will claim as durable
        // the backing device may hold writes that are not durable yet (of a killed process, of the
        // stack that used it before): the first record (which may copy such data as CLEAN entries)
        // flushes it first
        log.backingFlushPending = true;
        return r;
    }

    /**
     * The refusal of a cache device formatted over this very backing device (the same identity) when
     * that device's size changed since: the cache's blocks were written for the old size, and a
     * format would throw away its dirty blocks, so the first advice is to give the size back.
     */
    static String sizeChanged(long formatted, long now, String identity) {
        return "the backing device's size changed from " + Iec.exact(formatted) + " to " + Iec.exact(now)
                + " since the cache was formatted over it (the same device, identity " + identity + "); give the "
                + "backing device back its " + Iec.exact(formatted) + " to recover the cache, dirty blocks included, or "
                + "pass format=true to format it (its contents are lost, dirty blocks included)";
    }

    /**
     * The backing device's identity as recorded in the superblock: the manager's UUID, or (an
     * identity that is not a UUID) a name-based UUID of it; null when the caller has none.
     */
    static UUID identity(String id) {
        if (id == null || id.isBlank()) {
            return null;
        }
        try {
            return UUID.fromString(id.trim());
        } catch (IllegalArgumentException e) {
            return UUID.nameUUIDFromBytes(id.trim().getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
    }
}
