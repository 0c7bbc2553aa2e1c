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
    public Findings scan(BlockDevice cache) throws IOException {
        Findings f = new Findings(new Overlay(cache));
        walk(cache, f, null);
        return f;
    }

    /** Entries found, for the dump. */
    private record Entry(long slot, long block, long seq) {
    }

    private static Superblock walk(BlockDevice cache, Findings f, List<Entry> entries) throws IOException {
        Superblock sb = Superblocks.read(f, Layout.SUPERBLOCK_BYTES, Superblock.MAGIC, Superblock.CRC_FROM,
                b -> Superblock.decode(ByteBuffer.wrap(b)));
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
                Corrector.Fix fix = Corrector.correct(s, 0, Layout.SECTOR, SECTOR_MAGIC, MetadataSector.CRC_FROM,
                        w -> valid(w, index, layout.slots(), backingBlocks));
                long first = i * Layout.ENTRIES_PER_SECTOR;
                long last = Math.min(layout.slots(), first + Layout.ENTRIES_PER_SECTOR) - 1;
                if (fix != null) {
                    f.overlay().patch(offset, s);
                    f.corrected("metadata sector " + i + " (slots " + first + ".." + last + "): byte " + fix.position()
                            + " is damaged", "metadata sector " + i + " byte " + fix.position() + " restored");
                } else {
                    ByteBuffer free = ByteBuffer.allocate(Layout.SECTOR);
                    for (int k = 0; k < Layout.ENTRIES_PER_SECTOR; k++) {
                        MetadataSector.putEntry(free, 0, k, MetadataSector.FREE, 0);
                    }
                    MetadataSector.seal(free, 0, i);
                    s = free.array();
                    f.overlay().patch(offset, s);
                    f.lost("metadata sector " + i + " (slots " + first + ".." + last + "): unreadable",
                            "slots " + first + ".." + last + " (metadata sector " + i + "): the blocks they held, "
                                    + "which cannot be named, read what the backing device holds");
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
        Superblock sb = walk(cache, f, entries);
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
