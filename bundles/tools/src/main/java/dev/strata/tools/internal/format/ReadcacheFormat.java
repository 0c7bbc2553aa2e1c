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
    public Findings scan(BlockDevice cache) throws IOException {
        Findings f = new Findings(new Overlay(cache));
        walk(cache, f, null);
        return f;
    }

    private static Superblock walk(BlockDevice cache, Findings f, Map<Long, Long> blocks) throws IOException {
        Superblock sb = Superblocks.read(f, Layout.META_BLOCK, Superblock.MAGIC, Superblock.CRC_FROM,
                b -> Superblock.decode(ByteBuffer.wrap(b)));
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

    /** Tries every one-byte change of the 16-byte entry against the decoder; the byte fixed, or -1. */
    private static int correct(ByteBuffer block, int slot, long hash, int at) {
        int found = -1;
        byte value = 0;
        for (int i = 0; i < Layout.ENTRY; i++) {
            byte was = block.get(at + i);
            for (int v = 1; v < 256; v++) {
                block.put(at + i, (byte) (was ^ v));
                if (SlotEntry.decode(block, slot, hash) != SlotEntry.CORRUPT) {
                    if (found >= 0) {
                        block.put(at + i, was);
                        return -1; // two candidates: not one damaged byte
                    }
                    found = i;
                    value = (byte) (was ^ v);
                }
            }
            block.put(at + i, was);
        }
        if (found >= 0) {
            block.put(at + found, value);
        }
        return found;
    }

    @Override
    public Map<String, Object> dump(BlockDevice cache, Findings ignored) throws IOException {
        Findings f = new Findings(new Overlay(cache));
        Map<Long, Long> blocks = new HashMap<>();
        Superblock sb = walk(cache, f, blocks);
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
