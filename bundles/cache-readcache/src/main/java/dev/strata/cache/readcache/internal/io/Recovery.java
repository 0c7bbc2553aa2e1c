package dev.strata.cache.readcache.internal.io;

import dev.strata.api.BlockDevice;
import dev.strata.cache.readcache.internal.format.Layout;
import dev.strata.cache.readcache.internal.format.SlotEntry;
import dev.strata.cache.readcache.internal.format.Superblock;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Start-up: reads the metadata blocks (never the data) and fills the cache's memory with every
 * entry that decodes valid; an entry that does not check out, names a block past the origin's end,
 * or repeats a block already found is dropped (its slot is free) and counted. Formatting writes
 * every entry empty under the new identity, then the superblock.
 */
final class Recovery {
    /** What start-up found. */
    record Found(long valid, long dropped, int maxSeq) {
    }

    private static final int CHUNK = 256;

    private Recovery() {
    }

    static Found load(BlockDevice cache, Superblock sb, long originBlocks, CacheState state) throws IOException {
        Layout l = sb.layout();
        long hash = sb.uuidHash();
        long valid = 0;
        long dropped = 0;
        int maxSeq = 0;
        ByteBuffer buf = ByteBuffer.allocate(CHUNK * Layout.META_BLOCK);
        for (long m0 = 0; m0 < l.metaBlocks(); m0 += CHUNK) {
            int n = (int) Math.min(CHUNK, l.metaBlocks() - m0);
            buf.clear().limit(n * Layout.META_BLOCK);
            cache.read(l.metaOffset(m0), buf);
            for (int k = 0; k < n; k++) {
                ByteBuffer block = buf.slice(k * Layout.META_BLOCK, Layout.META_BLOCK);
                int from = (int) ((m0 + k) * Layout.ENTRIES_PER_BLOCK);
                int to = (int) Math.min(l.slots(), from + Layout.ENTRIES_PER_BLOCK);
                for (int s = from; s < to; s++) {
                    long key = SlotEntry.decode(block, s, hash);
                    if (key == SlotEntry.EMPTY) {
                        continue;
                    }
                    if (key == SlotEntry.CORRUPT || key >= originBlocks || !state.recovered(s, key)) {
                        dropped++;
                        continue;
                    }
                    valid++;
                    maxSeq = Math.max(maxSeq, SlotEntry.seq(block, s));
                }
            }
        }
        return new Found(valid, dropped, maxSeq);
    }

    /** Formats: every entry empty under {@code sb}'s identity, a flush, then the superblock (FUA). */
    static void format(BlockDevice cache, Superblock sb) throws IOException {
        Layout l = sb.layout();
        ByteBuffer buf = ByteBuffer.allocate(CHUNK * Layout.META_BLOCK);
        for (long m0 = 0; m0 < l.metaBlocks(); m0 += CHUNK) {
            int n = (int) Math.min(CHUNK, l.metaBlocks() - m0);
            buf.clear();
            int from = (int) (m0 * Layout.ENTRIES_PER_BLOCK);
            int to = (int) Math.min(l.slots(), from + (long) n * Layout.ENTRIES_PER_BLOCK);
            for (int s = from; s < to; s++) {
                SlotEntry.encode(buf.slice(((s - from) / Layout.ENTRIES_PER_BLOCK) * Layout.META_BLOCK, Layout.META_BLOCK),
                        s, SlotEntry.EMPTY, 0, sb.uuidHash());
            }
            cache.write(l.metaOffset(m0), buf.clear().limit(n * Layout.META_BLOCK), 0);
        }
        cache.flush();
        cache.write(0, sb.encode(), BlockDevice.FUA);
    }
}
