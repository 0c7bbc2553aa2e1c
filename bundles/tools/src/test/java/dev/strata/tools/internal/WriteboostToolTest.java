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

    /**
     * A durable record's header destroyed (zeroed) in the middle of the log: repair bridges it, so
     * every later record is kept. Only the blocks the lost record wrote may change, each to an
     * earlier value; the report names the record.
     */
    @org.junit.jupiter.api.Test
    void anUnreadableHeaderIsBridgedAndTheRecordsAfterItAreKept() throws Exception {
        Images.Pair p = dirty();
        byte[] before = Images.contents(format(), p);
        List<long[]> headers = structures(p).stream().filter(s -> s[0] >= Layout.FIRST_SEGMENT_OFFSET).toList();
        long[] victim = headers.get(1);
        RecordHeader lost = RecordHeader.decode(ByteBuffer.wrap(p.cache(), (int) victim[0], Layout.BLOCK).slice()
                .order(ByteOrder.LITTLE_ENDIAN), 0);
        java.util.Set<Long> lostBlocks = new java.util.HashSet<>();
        ByteBuffer hb = ByteBuffer.wrap(p.cache(), (int) victim[0], Layout.BLOCK).slice().order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < lost.entryCount(); i++) {
            lostBlocks.add(RecordHeader.entryBlock(hb, 0, i));
        }
        byte[] img = p.cache().clone();
        java.util.Arrays.fill(img, (int) victim[0], (int) victim[0] + Layout.BLOCK, (byte) 0);
        ImageDevice cache = new ImageDevice(img);
        Images.Run check = Images.run(out -> Tool.check(format(), cache, out));
        org.junit.jupiter.api.Assertions.assertEquals(1, check.status(), check.out());
        Images.Run r = Images.run(out -> Tool.repair(format(), cache, hints(p), out));
        org.junit.jupiter.api.Assertions.assertEquals(0, r.status(), r.out());
        org.junit.jupiter.api.Assertions.assertTrue(r.out().contains("dropped: record " + lost.recordId() + " between"), r.out());
        org.junit.jupiter.api.Assertions.assertTrue(r.out().contains("the records after them are kept"), r.out());
        byte[] after = Images.contents(format(), new Images.Pair(img, p.backing()));
        int changed = 0;
        for (long b = 0; b < before.length / 4096; b++) {
            int at = (int) (b * 4096);
            if (!java.util.Arrays.equals(before, at, at + 4096, after, at, at + 4096)) {
                changed++;
                org.junit.jupiter.api.Assertions.assertTrue(lostBlocks.contains(b), "block " + b + " changed but the lost record did not write it");
            }
        }
        org.junit.jupiter.api.Assertions.assertTrue(changed > 0, "the lost record's blocks all read as before: nothing was tested");
        Images.Run again = Images.run(out -> Tool.check(format(), cache, out));
        org.junit.jupiter.api.Assertions.assertEquals(0, again.status(), again.out());
    }
}
