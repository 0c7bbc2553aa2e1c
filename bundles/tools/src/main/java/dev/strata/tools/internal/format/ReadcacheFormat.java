package dev.strata.tools.internal.format;

import dev.strata.api.BlockDevice;
import dev.strata.cache.readcache.internal.format.Layout;
import dev.strata.cache.readcache.internal.format.SlotEntry;
import dev.strata.cache.readcache.internal.format.Superblock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * readcache: the superblock and every slot entry, decoded by the format's own
 * {@link SlotEntry#decode}. The target already drops an entry that does not decode (it is a
 * clean cache: the origin holds every block), so nothing is ever lost; the check names such
 * entries, and the repair restores one damaged byte (the entry's 16 bytes, every byte tried
 * against the decoder) or writes the entry empty.
 */
public final class ReadcacheFormat implements CacheFormat {

    @Override
    public String name() {
        return Layout.POLICY;
    }

    @Override
    public boolean holdsDirtyData() {
        return false;
    }

    @Override
    public Findings scan(BlockDevice cache, Hints hints) throws IOException {
        Findings f = new Findings(new Overlay(cache));
        walk(cache, f, null, hints);
        return f;
    }

    /** Bytes of the superblock that are always zero: the pad after the block size, everything past the identity field. */
    private static final int[] SB_ZEROS = {36, 40, 161, Layout.META_BLOCK};

    /**
     * A readcache holds only clean copies, and its slot entries' CRCs fold in the cache's UUID,
     * which only the superblock keeps: a lost superblock is rebuilt by formatting the cache afresh
     * (a new UUID, every slot empty), which loses nothing but warmth. Done when the device still
     * names itself a readcache, or when the operator gave the origin's size for it.
     */
    private static Superblocks.Rebuilt rebuild(Findings f, Hints h) throws IOException {
        byte[] sb0 = f.read(0, Layout.META_BLOCK);
        boolean named = new String(sb0, 16, 16, java.nio.charset.StandardCharsets.US_ASCII).startsWith(Layout.POLICY + "\0");
        boolean used = f.overlay().size() >= 2L * Layout.META_BLOCK && !Mend.allZero(f.read(Layout.META_OFFSET, Layout.META_BLOCK));
        if (!named && !used && h.backingSize() == 0) {
            return null; // blank: the target formats it at its next start
        }
        if (h.backingSize() == 0) {
            return Superblocks.Rebuilt.refused("to format it afresh (a read cache loses only its warmth) pass the origin device file"
                    + " (strata-tool repair CACHE ORIGIN) or its size (--backing-size=BYTES)");
        }
        int bs = h.blockSize() != 0 ? h.blockSize() : Layout.MIN_BLOCK;
        Layout l = Layout.fit(f.overlay().size(), bs);
        if (l == null) {
            return Superblocks.Rebuilt.refused("fewer than " + Layout.MIN_SLOTS + " slots of " + bs + " bytes fit the device; pass the --block-size= it was made with");
        }
        Superblock sb = Superblock.create(l, java.util.UUID.randomUUID(), h.backingSize(), "", 0);
        for (long m = 0; m < l.metaBlocks(); m++) {
            ByteBuffer block = ByteBuffer.allocate(Layout.META_BLOCK);
            int from = (int) (m * Layout.ENTRIES_PER_BLOCK);
            int to = (int) Math.min(l.slots(), from + Layout.ENTRIES_PER_BLOCK);
            for (int s = from; s < to; s++) {
                SlotEntry.encode(block, s, SlotEntry.EMPTY, 0, sb.uuidHash());
            }
            f.overlay().patch(l.metaOffset(m), block.array());
        }
        return Superblocks.Rebuilt.of(sb.encode().array(), "the cache formatted afresh (block size " + bs + ", " + l.slots()
                + " slots, origin size " + h.backingSize() + " as given): every cached block dropped, a clean copy the origin"
                + " holds too, nothing is lost");
    }

    private static Superblock walk(BlockDevice cache, Findings f, Map<Long, Long> blocks, Hints hints) throws IOException {
        Superblock sb = Superblocks.read(f, Layout.META_BLOCK, Superblock.MAGIC, Superblock.CRC_FROM, SB_ZEROS,
                b -> Superblock.decode(ByteBuffer.wrap(b)), x -> rebuild(x, hints));
        if (sb == null) {
            return null;
        }
        Layout l = sb.layout();
        if (l.usedBytes() > cache.size()) {
            f.fatal("superblock: it describes " + l.usedBytes() + " bytes but the device has " + cache.size());
            return sb;
        }
        long hash = sb.uuidHash();
        long originBlocks = sb.originSize() / sb.blockSize();
        Map<Long, Long> seen = blocks == null ? new HashMap<>() : blocks;
        for (long m = 0; m < l.metaBlocks(); m++) {
            byte[] b = f.read(l.metaOffset(m), Layout.META_BLOCK);
            ByteBuffer block = ByteBuffer.wrap(b);
            boolean changed = false;
            int from = (int) (m * Layout.ENTRIES_PER_BLOCK);
            int to = (int) Math.min(l.slots(), from + Layout.ENTRIES_PER_BLOCK);
            for (int s = from; s < to; s++) {
                long key = SlotEntry.decode(block, s, hash);
                if (key == SlotEntry.CORRUPT) {
                    int at = (s % Layout.ENTRIES_PER_BLOCK) * Layout.ENTRY;
                    int fixed = correct(block, s, hash, at);
                    if (fixed >= 0) {
                        f.corrected("slot " + s + ": its entry has byte " + fixed + " damaged",
                                "slot " + s + " entry byte " + fixed + " restored");
                        key = SlotEntry.decode(block, s, hash);
                    } else {
                        SlotEntry.encode(block, s, SlotEntry.EMPTY, 0, hash);
                        f.lost("slot " + s + ": its entry is unreadable",
                                "slot " + s + " (a clean copy: its block is read from the origin again, nothing is lost)");
                        key = SlotEntry.EMPTY;
                    }
                    changed = true;
                }
                if (key != SlotEntry.EMPTY && (key >= originBlocks || seen.containsKey(key))) {
                    f.lost("slot " + s + ": names origin block " + key
                            + (key >= originBlocks ? ", past the origin's end" : ", already held by slot " + seen.get(key)),
                            "slot " + s + " (a clean copy: nothing is lost)");
                    SlotEntry.encode(block, s, SlotEntry.EMPTY, 0, hash);
                    changed = true;
                    key = SlotEntry.EMPTY;
                }
                if (key != SlotEntry.EMPTY) {
                    seen.put(key, (long) s);
                }
            }
            if (changed) {
                f.overlay().patch(l.metaOffset(m), b);
            }
        }
        return sb;
    }

    /**
     * Restores one damaged byte of the 16-byte entry, if one explains its CRC; the byte fixed, or -1.
     * The entry's CRC32C covers its 12 bytes, then the slot number and the UUID hash (8 bytes
     * each, little-endian): laid out that way, with the stored CRC after them, the {@link Corrector}
     * finds the byte from the syndrome; a "fix" in the slot or hash is no fix.
     */
    private static int correct(ByteBuffer block, int slot, long hash, int at) {
        byte[] x = new byte[32];
        ByteBuffer w = ByteBuffer.wrap(x).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 12; i++) {
            x[i] = block.get(at + i);
        }
        w.putLong(12, slot);
        w.putLong(20, hash);
        for (int i = 0; i < 4; i++) {
            x[28 + i] = block.get(at + 12 + i);
        }
        byte[] original = x.clone();
        Corrector.Fix fix = Corrector.correct(x, 0, 32, new byte[0], 0, 28, 28, c -> {
            if (!java.util.Arrays.equals(c, 12, 28, original, 12, 28)) {
                return false;
            }
            ByteBuffer e = ByteBuffer.allocate(Layout.META_BLOCK);
            e.put(at, c, 0, 12).put(at + 12, c, 28, 4);
            return SlotEntry.decode(e, slot, hash) != SlotEntry.CORRUPT;
        });
        if (fix == null) {
            return -1;
        }
        int p = fix.position() < 12 ? fix.position() : 12 + fix.position() - 28;
        block.put(at + p, fix.value());
        return p;
    }

    @Override
    public Map<String, Object> dump(BlockDevice cache, Findings ignored) throws IOException {
        Findings f = new Findings(new Overlay(cache));
        Map<Long, Long> blocks = new HashMap<>();
        Superblock sb = walk(cache, f, blocks, Hints.NONE);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("policy", Layout.POLICY);
        if (sb != null) {
            m.put("version", sb.version());
            m.put("uuid", sb.uuid().toString());
            m.put("block_size", sb.blockSize());
            m.put("slots", sb.slots());
            m.put("origin_size", sb.originSize());
            m.put("origin_id", sb.originId());
            m.put("formatted_ms", sb.formatTimeMillis());
            m.put("cached_blocks", (long) blocks.size());
            List<Map<String, Object>> list = new ArrayList<>();
            blocks.entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e -> {
                Map<String, Object> em = new LinkedHashMap<>();
                em.put("block", e.getKey());
                em.put("slot", e.getValue());
                list.add(em);
            });
            m.put("entries", list);
        }
        m.put("problems", f.problems());
        return m;
    }
}
