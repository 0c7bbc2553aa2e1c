package dev.strata.tools.internal;

import dev.strata.tools.internal.format.*;

import dev.strata.cache.writeboost.internal.format.Layout;
import dev.strata.cache.writeboost.internal.format.RecordHeader;
import dev.strata.cache.writeboost.internal.format.Superblock;
import dev.strata.cache.writeboost.internal.format.SuperblockRecord;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

class WriteboostToolTest extends FormatToolContract {
    @Override
    CacheFormat format() {
        return new WriteboostFormat();
    }

    /** The superblock, both record slots (where written) and every record header of the log, whole. */
    @Override
    List<long[]> structures(Images.Pair p) throws Exception {
        byte[] img = p.cache();
        Superblock sb = Superblock.decode(ByteBuffer.wrap(img, 0, Layout.BLOCK).slice());
        List<long[]> out = new ArrayList<>();
        out.add(new long[] {0, Layout.BLOCK});
        for (long slot : new long[] {Layout.RECORD_SLOT_0, Layout.RECORD_SLOT_1}) {
            if (SuperblockRecord.decode(ByteBuffer.wrap(img, (int) slot, Layout.BLOCK).slice(), sb.uuidHash()) != null) {
                out.add(new long[] {slot, Layout.BLOCK});
            }
        }
        int headers = 0;
        for (long off = sb.firstSegmentOffset(); off < sb.usedBytes(); off += Layout.BLOCK) {
            ByteBuffer b = ByteBuffer.wrap(img, (int) off, Layout.BLOCK).slice().order(ByteOrder.LITTLE_ENDIAN);
            RecordHeader h = RecordHeader.decode(b, 0);
            if (h != null && h.uuidHash() == sb.uuidHash()) {
                out.add(new long[] {off, Layout.BLOCK});
                headers++;
            }
        }
        if (headers < 3) {
            throw new AssertionError("only " + headers + " record headers in the image");
        }
        return out;
    }
}
