package dev.strata.cache.writecache.internal.recovery;

import dev.strata.cache.support.device.CacheWindow;
import dev.strata.cache.support.units.Iec;
import dev.strata.api.BlockDevice;
import dev.strata.api.InvalidArgumentException;
import dev.strata.cache.writecache.internal.format.FormatException;
import dev.strata.cache.writecache.internal.format.Layout;
import dev.strata.cache.writecache.internal.format.MetadataSector;
import dev.strata.cache.writecache.internal.format.Superblock;
import dev.strata.cache.writecache.internal.index.SlotIndex;
import dev.strata.cache.writecache.internal.io.Options;
import dev.strata.cache.writecache.internal.io.Tunables;
import dev.strata.cache.writecache.internal.io.StateAccess;
import dev.strata.cache.writecache.internal.io.WritecacheTarget;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Opens a writecache: checks every argument against both devices before writing anything,
 * formats a blank cache device (or any other one with {@code format=true}), or recovers:
 * superblock → every metadata sector (each checked: a corrupt one stops the open, since dropping
 * it would lose committed writes) → index. An entry is valid iff it names a block and its
 * seq_count is below the superblock's; of two valid entries for one block the higher seq_count
 * wins. Entries that lose, and uncommitted leftovers, are rewritten FREE before the target takes
 * I/O (a later commit would otherwise make a leftover valid).
 */
public final class Recovery {
    /** The refusal's advice for a damaged cache device: repair keeps its dirty blocks, a format does not. */
    static final String REPAIR_FIRST = "; its dirty blocks may still be saved: with the cache device not in use "
            + "(dev:remove the device, or stop Strata) run strata-tool check, then strata-tool repair, on it "
            + "(docs/operations.md, a corrupted cache); format=true instead starts it empty (its contents, dirty "
            + "blocks included, are lost)";

    /** Metadata sectors read per I/O. */
    private static final int READ_SECTORS = 512;

    private Recovery() {
    }

    /**
     * @param blockSize  the {@code block_size} argument, or 0 when not given (4096 for a new cache,
     *                   the recorded one otherwise)
     * @param backingId  the backing device's identity, or null when the caller has none
     */
    public static WritecacheTarget open(String name, BlockDevice backing, BlockDevice cache, String backingId,
            int blockSize, boolean format, Tunables tunables, Options options) throws IOException {
        return open(name, backing, cache, backingId, blockSize, format, false, tunables, options);
    }

    /**
     * @param relayout with {@code format}: a valid cache of this backing device whose geometry is not
     *                 the one {@code cache} now fits is formatted anew (a resize's first build, after
     *                 everything was written back); one that fits is recovered as always
     */
    public static WritecacheTarget open(String name, BlockDevice backing, BlockDevice cache, String backingId,
            int blockSize, boolean format, boolean relayout, Tunables tunables, Options options) throws IOException {
        return open(name, backing, cache, backingId, blockSize, format, relayout, tunables, options, (d, t) -> { });
    }

    /** How far a format has got: metadata bytes written of all (a progress line of the caller's). */
    @FunctionalInterface
    public interface FormatProgress {
        void update(long done, long total);
    }

    /** @param progress told after every metadata write of a format */
    public static WritecacheTarget open(String name, BlockDevice backing, BlockDevice cache, String backingId,
            int blockSize, boolean format, boolean relayout, Tunables tunables, Options options,
            FormatProgress progress) throws IOException {
        if (backing == cache) {
            throw new InvalidArgumentException("writecache: backing and cache are the same device; use two devices");
        }
        if (backingId != null && backingId.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > Superblock.MAX_ID_BYTES) {
            backingId = backingId.substring(0, Superblock.MAX_ID_BYTES / 4);
        }
        if (cache.size() < Layout.SUPERBLOCK_BYTES) {
            throw tooSmall(cache, blockSize == 0 ? 4096 : blockSize);
        }
        ByteBuffer sbBytes = ByteBuffer.allocate(Layout.SUPERBLOCK_BYTES);
        cache.read(0, sbBytes);
        Superblock sb = null;
        FormatException problem = null;
        try {
            sb = Superblock.decode(sbBytes.clear());
        } catch (FormatException e) {
            problem = e;
        }
        if (sb != null && !sameBacking(sb, backing, backingId)) {
            if (!format && backingId != null && backingId.equals(sb.backingId())) {
                // the same device, another size: formatting would lose the dirty blocks written for the old one
                throw new InvalidArgumentException("writecache: the backing device's size changed from "
                        + Iec.exact(sb.backingSize()) + " to " + Iec.exact(backing.size()) + " since the cache was "
                        + "formatted over it (the same device, id " + backingId + "); give the backing device back its "
                        + Iec.exact(sb.backingSize()) + " to recover the cache, dirty blocks included, or pass "
                        + "format=true to format it (its contents are lost, dirty blocks included)");
            }
            if (!format) {
                throw otherBacking(sb, backing, backingId, cache);
            }
            sb = null;
        }
        boolean resized = sb != null && format && relayout
                && !sb.layout().equals(Layout.fit(sb.blockSize(), cache.size()));
        if (resized) {
            sb = null; // the slots cannot move, so a new size is a new format
        }
        if (sb != null) {
            // a valid cache of this backing device is recovered, never reformatted: format=true
            // may still be in the definition (a crash before core dropped it) and a restart must not wipe dirty data
            if (blockSize != 0 && blockSize != sb.blockSize()) {
                throw new InvalidArgumentException("writecache: the cache device was formatted with block_size="
                        + sb.blockSize() + ", not " + blockSize + "; drop block_size or use " + sb.blockSize());
            }
            checkBlockSize(sb.blockSize(), backing, cache);
            if (sb.seqCount() >= SlotIndex.SEQ_LIMIT) {
                // this code's commits would take 9,000 years at a million a second to get there
                throw new InvalidArgumentException("writecache: the cache device's seq_count " + sb.seqCount()
                        + " is beyond the 2^58 - 1 the index keeps in memory (no commit of this code gets there:"
                        + " something else wrote it); zero its first 4 KiB to start it empty (its contents are lost)");
            }
            if (sb.layout().usedBytes() > cache.size()) {
                throw new InvalidArgumentException("writecache: the cache device is smaller (" + Iec.exact(cache.size())
                        + ") than the cache formatted on it (" + Iec.exact(sb.layout().usedBytes())
                        + "); use the device it was formatted on, or format=true (its contents are lost)");
            }
            Superblock found = sb;
            return new WritecacheTarget(name, backing, cache, sb, s -> load(found, cache, backing, s), tunables, options);
        }
        if (!format && problem.kind() != FormatException.Kind.BLANK) { // format first: problem is null when sb was set aside
            // a damaged writecache may hold dirty blocks: repair first, format last
            throw new InvalidArgumentException("writecache: " + problem.getMessage()
                    + (problem.kind() == FormatException.Kind.CORRUPT ? REPAIR_FIRST
                    : "; pass format=true to format it (its contents are lost)"));
        }
        int bs = blockSize == 0 ? 4096 : blockSize;
        checkBlockSize(bs, backing, cache);
        Layout layout = Layout.fit(bs, cache.size());
        if (layout == null) {
            throw tooSmall(cache, bs);
        }
        Superblock fresh = format(cache, layout, backing.size(), backingId, progress);
        return new WritecacheTarget(name, backing, cache, fresh, s -> s.releaseUnused(), tunables, options);
    }

    private static InvalidArgumentException tooSmall(BlockDevice cache, int bs) {
        return new InvalidArgumentException("writecache: " + CacheWindow.has(cache)
                + ", too little for one slot of " + Iec.atLeast(bs) + "; at least "
                + Iec.atLeast(Layout.minimumCacheBytes(bs)) + " are needed; " + CacheWindow.larger(cache));
    }

    /**
     * The refusal of a cache device formatted for another backing device, advice first. The
     * factory knows device identities, not the names behind them, so the devices are described by
     * size and identity. A cache with nothing dirty on it (what cache:detach leaves) loses nothing
     * to a format, and the line says so; one with dirty blocks must go back to its own device.
     */
    private static InvalidArgumentException otherBacking(Superblock sb, BlockDevice backing, String backingId,
            BlockDevice cache) {
        String theirs = Iec.exact(sb.backingSize()) + (sb.backingId().isEmpty() ? "" : ", id " + sb.backingId());
        String ours = Iec.exact(backing.size()) + (backingId == null || backingId.isEmpty() ? "" : ", id " + backingId);
        long dirty = dirtyBlocks(sb, cache);
        if (dirty == 0) {
            return new InvalidArgumentException("writecache: pass format=true to use this cache device here (nothing is lost): it"
                    + " was detached from another backing device (" + theirs + "; this one: " + ours
                    + ") with every block written back");
        }
        return new InvalidArgumentException("writecache: name the cache device's own backing device (" + theirs + ") as backing="
                + " to keep its dirty blocks, or pass"
                + " format=true to format it (its contents are lost): it belongs to another backing device, not this one ("
                + ours + ")");
    }

    /**
     * The committed entries a superblock's metadata holds (dirty blocks; an overwritten block may
     * count twice), or -1 when a sector does not check out.
     */
    private static long dirtyBlocks(Superblock sb, BlockDevice cache) {
        Layout layout = sb.layout();
        long sectors = layout.metadataSectors();
        long backingBlocks = sb.backingSize() / sb.blockSize();
        ByteBuffer buf = ByteBuffer.allocate(READ_SECTORS * Layout.SECTOR).order(ByteOrder.LITTLE_ENDIAN);
        long dirty = 0;
        try {
            for (long first = 0; first < sectors; first += READ_SECTORS) {
                int n = (int) Math.min(READ_SECTORS, sectors - first);
                buf.clear().limit(n * Layout.SECTOR);
                cache.read(Layout.sectorOffset(first), buf);
                for (int i = 0; i < n; i++) {
                    MetadataSector.check(buf, i * Layout.SECTOR, first + i, layout.slots(), backingBlocks);
                    for (int k = 0; k < Layout.ENTRIES_PER_SECTOR; k++) {
                        if ((first + i) * Layout.ENTRIES_PER_SECTOR + k >= layout.slots()) {
                            break;
                        }
                        if (MetadataSector.entryBlock(buf, i * Layout.SECTOR, k) != MetadataSector.FREE
                                && MetadataSector.entrySeq(buf, i * Layout.SECTOR, k) < sb.seqCount()) {
                            dirty++;
                        }
                    }
                }
            }
        } catch (IOException | RuntimeException | FormatException e) {
            return -1;
        }
        return dirty;
    }

    private static boolean sameBacking(Superblock sb, BlockDevice backing, String backingId) {
        return sb.backingSize() == backing.size()
                && (backingId == null || sb.backingId().isEmpty() || sb.backingId().equals(backingId));
    }

    /** The block sizes a writecache can be formatted with. */
    private static final int[] BLOCK_SIZES = {512, 4096};

    /**
     * {@code bs} must be at least both devices' block sizes and divide the backing device's size.
     * The advice names a block size that satisfies all three, or — when neither does — says so
     * in one line instead of sending the user from one refusal to the other.
     */
    private static void checkBlockSize(int bs, BlockDevice backing, BlockDevice cache) {
        boolean small = backing.blockSize() > bs || cache.blockSize() > bs;
        if (!small && backing.size() % bs == 0) {
            return;
        }
        int fits = 0;
        for (int b : BLOCK_SIZES) {
            if (b >= backing.blockSize() && b >= cache.blockSize() && backing.size() % b == 0) {
                fits = b;
                break;
            }
        }
        if (fits == 0) {
            int floor = Math.max(backing.blockSize(), cache.blockSize());
            throw new InvalidArgumentException("writecache: the backing device's size " + Iec.exact(backing.size())
                    + " is not a multiple of the " + (floor == cache.blockSize() && floor > backing.blockSize() ? "cache" : "backing")
                    + " device's block size " + floor + ": writecache cannot cache it (its blocks are 512 or 4096 bytes, at least"
                    + " either device's block size); use a backing device whose size is a multiple of " + floor
                    + (floor > 512 && cache.blockSize() == floor && backing.blockSize() < floor ? ", or a cache device with 512-byte blocks" : ""));
        }
        if (small) {
            BlockDevice d = backing.blockSize() > bs ? backing : cache;
            throw new InvalidArgumentException("writecache: block_size=" + bs + " is smaller than the "
                    + (d == backing ? "backing" : "cache") + " device's block size " + d.blockSize()
                    + "; use block_size=" + fits);
        }
        throw new InvalidArgumentException("writecache: the backing device's size " + Iec.exact(backing.size())
                + " is not a multiple of block_size=" + bs + "; use block_size=" + fits);
    }

    /**
     * Formats: the superblock is zeroed first (a format cut short leaves a blank device, not a
     * valid superblock over half-written metadata), every metadata sector is written FREE, the
     * device flushed, then the superblock written with seq_count 0, FUA.
     * <p>
     * Cancellable (Ctrl-C on a {@code dev:create} of a 200 GiB cache device): the interrupt is
     * looked at before the first write — then the device is as it was — and before every metadata
     * write and the superblock's — then the device is left unformatted (blank superblock), never
     * a valid-looking cache over a half-written array; no open recovers it, and a writecache
     * created over it later formats it anew. The interrupt stays set for the caller, which creates
     * nothing. A memory device or a sleeping one ignores interrupts, and a file channel closes on
     * one: so the format looks itself, instead of leaving it to the device.
     */
    static Superblock format(BlockDevice cache, Layout layout, long backingSize, String backingId) throws IOException {
        return format(cache, layout, backingSize, backingId, (d, t) -> { });
    }

    static Superblock format(BlockDevice cache, Layout layout, long backingSize, String backingId,
            FormatProgress progress) throws IOException {
        long sectors = layout.metadataSectors();
        stopIfInterrupted(cache, -1, sectors);
        cache.write(0, ByteBuffer.allocate(Layout.SUPERBLOCK_BYTES), BlockDevice.FUA);
        ByteBuffer buf = ByteBuffer.allocate(READ_SECTORS * Layout.SECTOR).order(ByteOrder.LITTLE_ENDIAN);
        for (long first = 0; first < sectors; first += READ_SECTORS) {
            stopIfInterrupted(cache, first, sectors);
            int n = (int) Math.min(READ_SECTORS, sectors - first);
            for (int i = 0; i < n; i++) {
                for (int k = 0; k < Layout.ENTRIES_PER_SECTOR; k++) {
                    MetadataSector.putEntry(buf, i * Layout.SECTOR, k, MetadataSector.FREE, 0);
                }
                MetadataSector.seal(buf, i * Layout.SECTOR, first + i);
            }
            cache.write(Layout.sectorOffset(first), buf.duplicate().clear().limit(n * Layout.SECTOR), 0);
            progress.update((first + n) * Layout.SECTOR, sectors * Layout.SECTOR);
        }
        cache.flush();
        stopIfInterrupted(cache, sectors, sectors);
        Superblock sb = Superblock.create(layout, backingSize, backingId, System.currentTimeMillis());
        cache.write(0, sb.encode(), BlockDevice.FUA);
        return sb;
    }

    /**
     * Ends the format when the caller was interrupted ({@code done} -1: before its first write);
     * one line saying what is left on the device.
     */
    private static void stopIfInterrupted(BlockDevice cache, long done, long sectors) throws InterruptedIOException {
        if (!Thread.currentThread().isInterrupted()) {
            return;
        }
        throw new InterruptedIOException(done < 0
                ? "writecache: format interrupted before it wrote anything; the cache device is unchanged"
                : "writecache: format interrupted after " + Iec.size(done * Layout.SECTOR) + " of "
                        + Iec.size(sectors * Layout.SECTOR) + " of metadata; the cache device ("
                        + Iec.size(cache.size()) + ") is left unformatted (its superblock zeroed), not a cache");
    }

    private static void load(Superblock sb, BlockDevice cache, BlockDevice backing, StateAccess s)
            throws IOException {
        Layout layout = sb.layout();
        long sectors = layout.metadataSectors();
        long backingBlocks = backing.size() / sb.blockSize();
        // little-endian like the format: MetadataSector reads it without a view per entry (two
        // per slot otherwise, 2 M objects for a full 4 GiB cache before the JIT removes them)
        ByteBuffer buf = ByteBuffer.allocate(READ_SECTORS * Layout.SECTOR).order(ByteOrder.LITTLE_ENDIAN);
        for (long first = 0; first < sectors; first += READ_SECTORS) {
            int n = (int) Math.min(READ_SECTORS, sectors - first);
            buf.clear().limit(n * Layout.SECTOR);
            cache.read(Layout.sectorOffset(first), buf);
            for (int i = 0; i < n; i++) {
                int base = i * Layout.SECTOR;
                try {
                    MetadataSector.check(buf, base, first + i, layout.slots(), backingBlocks);
                } catch (FormatException e) {
                    throw new IOException("writecache: " + e.getMessage()
                            + "; the committed cache contents cannot be recovered safely");
                }
                for (int k = 0; k < Layout.ENTRIES_PER_SECTOR; k++) {
                    long slotL = (first + i) * Layout.ENTRIES_PER_SECTOR + k;
                    if (slotL >= layout.slots()) {
                        break;
                    }
                    int slot = (int) slotL;
                    long block = MetadataSector.entryBlock(buf, base, k);
                    long seq = MetadataSector.entrySeq(buf, base, k);
                    if (block == MetadataSector.FREE) {
                        continue;
                    }
                    if (seq >= sb.seqCount()) {
                        s.free(slot, true); // written but never committed
                        continue;
                    }
                    s.stage(slot, block, seq); // of several copies of a block the highest seq_count wins
                }
            }
        }
        s.linkStaged();
        s.releaseUnused();
    }
}
