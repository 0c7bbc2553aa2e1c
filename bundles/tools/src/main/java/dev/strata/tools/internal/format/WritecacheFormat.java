package dev.strata.tools.internal.format;

import dev.strata.api.BlockDevice;
import dev.strata.cache.writecache.internal.format.FormatException;
import dev.strata.cache.writecache.internal.format.Layout;
import dev.strata.cache.writecache.internal.format.MetadataSector;
import dev.strata.cache.writecache.internal.format.Superblock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * writecache: the superblock and every metadata sector, each checked by the format's own
 * decoder ({@link Superblock#decode}, {@link MetadataSector#check}). The target refuses to open
 * over a sector that fails (dropping it silently could lose committed writes), so a sector that
 * one corrected byte does not mend is replaced, on repair, by a sector of free entries: its 31
 * slots' data is what is lost, and the tool says so.
 */
public final class WritecacheFormat implements CacheFormat {
    private static final byte[] SECTOR_MAGIC = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN)
            .putInt(MetadataSector.MAGIC).array();

    @Override
    public String name() {
        return Layout.POLICY;
    }

    @Override
    public Findings scan(BlockDevice cache, Hints hints) throws IOException {
        Findings f = new Findings(new Overlay(cache));
        walk(cache, f, null, hints);
        return f;
    }

    /** Bytes of the superblock that are always zero: the pad after the block size, everything past the longest identity. */
    private static final int[] SB_ZEROS = {36, 40, 90 + Superblock.MAX_ID_BYTES, Layout.SUPERBLOCK_BYTES};

    /**
     * A superblock from the metadata: the block size whose layout (the most slots that fit the
     * device, as the target formats) ends its metadata exactly where the valid sectors end, the
     * highest seq_count any entry carries + 1 (an entry written by a commit whose superblock never
     * landed had its data flushed first: it is an acknowledged write, kept), the backing size
     * from the operator. No backing identity is recorded (the target accepts any, by size).
     */
    private static Superblocks.Rebuilt rebuild(Findings f, Hints h) throws IOException {
        long size = f.overlay().size();
        boolean evidence = false;
        for (long i = 0; i < 4 && Layout.sectorOffset(i + 1) <= size; i++) {
            evidence |= valid(f.read(Layout.sectorOffset(i), Layout.SECTOR), i, Long.MAX_VALUE, Long.MAX_VALUE);
        }
        if (!evidence) {
            return null;
        }
        List<Layout> fits = new ArrayList<>();
        for (int bs : h.blockSize() != 0 ? new int[] {h.blockSize()} : new int[] {4096, 512}) {
            Layout l = bs == 512 || bs == 4096 ? Layout.fit(bs, size) : null;
            if (l == null) {
                continue;
            }
            long last = l.metadataSectors() - 1;
            boolean ends = valid(f.read(Layout.sectorOffset(last), Layout.SECTOR), last, l.slots(), Long.MAX_VALUE);
            long after = Layout.sectorOffset(last + 1);
            boolean more = after + Layout.SECTOR <= size
                    && valid(f.read(after, Layout.SECTOR), last + 1, Long.MAX_VALUE, Long.MAX_VALUE);
            if (ends && !more || h.blockSize() != 0) {
                fits.add(l);
            }
        }
        if (fits.size() != 1) {
            return Superblocks.Rebuilt.refused("its block size cannot be told from the metadata: pass --block-size=512 or --block-size=4096"
                    + (h.backingSize() == 0 ? " and the backing device file (or --backing-size=BYTES)" : ""));
        }
        Layout l = fits.get(0);
        if (h.backingSize() == 0) {
            return Superblocks.Rebuilt.refused("to rebuild it pass the backing device file (strata-tool repair CACHE BACKING)"
                    + " or its size (--backing-size=BYTES)");
        }
        if (h.backingSize() % l.blockSize() != 0) {
            return Superblocks.Rebuilt.refused("the backing size " + h.backingSize() + " is not a multiple of the block size "
                    + l.blockSize() + "; pass the right backing device");
        }
        long seq = 0;
        for (long i = 0; i < l.metadataSectors(); i++) {
            byte[] s = f.read(Layout.sectorOffset(i), Layout.SECTOR);
            if (valid(s, i, l.slots(), h.backingSize() / l.blockSize())) {
                for (int k = 0; k < Layout.ENTRIES_PER_SECTOR; k++) {
                    seq = Math.max(seq, MetadataSector.entrySeq(ByteBuffer.wrap(s), 0, k));
                }
            }
        }
        Superblock sb = new Superblock(Layout.VERSION, l.blockSize(), l.slots(), seq + 1, h.backingSize(), "", 0);
        return Superblocks.Rebuilt.of(sb.encode().array(), "block size " + l.blockSize() + " and " + l.slots()
                + " slots from the device size and metadata, seq_count " + (seq + 1) + " from the entries, backing size "
                + h.backingSize() + " as given; no backing identity recorded");
    }

    /** Entries found, for the dump. */
    private record Entry(long slot, long block, long seq) {
    }

    private static Superblock walk(BlockDevice cache, Findings f, List<Entry> entries, Hints hints) throws IOException {
        Superblock sb = Superblocks.read(f, Layout.SUPERBLOCK_BYTES, Superblock.MAGIC, Superblock.CRC_FROM, SB_ZEROS,
                b -> Superblock.decode(ByteBuffer.wrap(b)), x -> rebuild(x, hints));
        if (sb == null) {
            return null;
        }
        Layout layout = sb.layout();
        if (layout.usedBytes() > cache.size()) {
            f.fatal("superblock: it describes " + layout.usedBytes() + " bytes but the device has " + cache.size());
            return sb;
        }
        long backingBlocks = sb.backingSize() / sb.blockSize();
        long sectors = layout.metadataSectors();
        for (long i = 0; i < sectors; i++) {
            long offset = Layout.sectorOffset(i);
            byte[] s = f.read(offset, Layout.SECTOR);
            long index = i;
            if (!valid(s, index, layout.slots(), backingBlocks)) {
                String fix = Mend.mend(s, Layout.SECTOR, SECTOR_MAGIC, new int[0], MetadataSector.CRC_FROM,
                        w -> valid(w, index, layout.slots(), backingBlocks));
                long first = i * Layout.ENTRIES_PER_SECTOR;
                long last = Math.min(layout.slots(), first + Layout.ENTRIES_PER_SECTOR) - 1;
                if (fix != null) {
                    f.overlay().patch(offset, s);
                    f.corrected("metadata sector " + i + " (slots " + first + ".." + last + "): " + fix + " is damaged",
                            "metadata sector " + i + " " + fix + " restored");
                } else {
                    ByteBuffer free = ByteBuffer.allocate(Layout.SECTOR);
                    for (int k = 0; k < Layout.ENTRIES_PER_SECTOR; k++) {
                        MetadataSector.putEntry(free, 0, k, MetadataSector.FREE, 0);
                    }
                    MetadataSector.seal(free, 0, i);
                    String named = legible(s, backingBlocks);
                    s = free.array();
                    f.overlay().patch(offset, s);
                    f.lost("metadata sector " + i + " (slots " + first + ".." + last + "): unreadable, damaged beyond its CRC",
                            "slots " + first + ".." + last + " (metadata sector " + i + "): the blocks they held read what "
                                    + "the backing device holds" + named);
                }
            }
            if (entries != null) {
                ByteBuffer bb = ByteBuffer.wrap(s);
                for (int k = 0; k < Layout.ENTRIES_PER_SECTOR && i * Layout.ENTRIES_PER_SECTOR + k < layout.slots(); k++) {
                    long block = MetadataSector.entryBlock(bb, 0, k);
                    if (block != MetadataSector.FREE) {
                        entries.add(new Entry(i * Layout.ENTRIES_PER_SECTOR + k, block, MetadataSector.entrySeq(bb, 0, k)));
                    }
                }
            }
        }
        return sb;
    }

    /** The blocks a sector that fails its CRC still seems to name (unverified: for the operator's report only). */
    private static String legible(byte[] s, long backingBlocks) {
        List<Long> blocks = new ArrayList<>();
        ByteBuffer b = ByteBuffer.wrap(s);
        for (int k = 0; k < Layout.ENTRIES_PER_SECTOR; k++) {
            long block = MetadataSector.entryBlock(b, 0, k);
            if (block >= 0 && block < backingBlocks) {
                blocks.add(block);
            }
        }
        return blocks.isEmpty() ? " (no entry is legible)" : " (unverified, its entries named backing blocks " + blocks + ")";
    }

    private static boolean valid(byte[] s, long index, long slots, long backingBlocks) {
        try {
            MetadataSector.check(ByteBuffer.wrap(s), 0, index, slots, backingBlocks);
            return true;
        } catch (FormatException e) {
            return false;
        }
    }

    @Override
    public Map<String, Object> dump(BlockDevice cache, Findings ignored) throws IOException {
        Findings f = new Findings(new Overlay(cache));
        List<Entry> entries = new ArrayList<>();
        Superblock sb = walk(cache, f, entries, Hints.NONE);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("policy", Layout.POLICY);
        if (sb != null) {
            m.put("version", sb.version());
            m.put("block_size", sb.blockSize());
            m.put("slots", sb.slots());
            m.put("seq_count", sb.seqCount());
            m.put("backing_size", sb.backingSize());
            m.put("backing_id", sb.backingId());
            m.put("data_offset", sb.layout().dataOffset());
            // what recovery keeps: committed entries, the highest seq_count of each block
            Map<Long, Entry> winners = new HashMap<>();
            long uncommitted = 0;
            for (Entry e : entries) {
                if (e.seq() >= sb.seqCount()) {
                    uncommitted++;
                    continue;
                }
                winners.merge(e.block(), e, (a, c) -> a.seq() >= c.seq() ? a : c);
            }
            m.put("cached_blocks", (long) winners.size());
            m.put("uncommitted_entries", uncommitted);
            m.put("superseded_entries", entries.size() - uncommitted - winners.size());
            List<Map<String, Object>> list = new ArrayList<>();
            winners.values().stream().sorted((a, c) -> Long.compare(a.block(), c.block())).forEach(e -> {
                Map<String, Object> em = new LinkedHashMap<>();
                em.put("block", e.block());
                em.put("slot", e.slot());
                em.put("seq", e.seq());
                list.add(em);
            });
            m.put("entries", list);
        }
        m.put("problems", f.problems());
        return m;
    }
}
