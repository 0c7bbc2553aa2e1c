package dev.strata.cache.support.writeback;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class WritebackBatcherTest {
    static final int BS = 4096;

    /** One backing write: offset, length and the first byte of each 512-byte sector. */
    record W(long offset, int length, byte[] firstBytes) {
    }

    static final class Rec implements WritebackBatcher.Backing {
        final List<W> writes = new ArrayList<>();

        @Override
        public void write(long offset, ByteBuffer src) {
            int n = src.remaining();
            byte[] f = new byte[n / 512];
            for (int i = 0; i < f.length; i++) {
                f[i] = src.get(src.position() + i * 512);
            }
            writes.add(new W(offset, n, f));
        }
    }

    /** Entry i's data: every sector starts with byte (i + 1). */
    static ByteBuffer data(int count) {
        ByteBuffer b = ByteBuffer.allocate(count * BS);
        for (int i = 0; i < count; i++) {
            for (int s = 0; s < 8; s++) {
                b.put(i * BS + s * 512, (byte) (i + 1));
            }
        }
        return b;
    }

    @Test
    void adjacentFullBlocksAreSortedAndMerged() throws Exception {
        WritebackBatcher wb = new WritebackBatcher(BS, 256, true);
        long[] blocks = {12, 10, 11, 20, 13};
        int[] valid = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
        Rec r = new Rec();
        assertEquals(2, wb.write(5, blocks, valid, data(5), r));
        assertEquals(2, r.writes.size());
        W a = r.writes.get(0);
        assertEquals(10L * BS, a.offset());
        assertEquals(4 * BS, a.length());
        // blocks 10, 11, 12, 13 are entries 1, 2, 0, 4
        assertEquals(2, a.firstBytes()[0]);
        assertEquals(3, a.firstBytes()[8]);
        assertEquals(1, a.firstBytes()[16]);
        assertEquals(5, a.firstBytes()[24]);
        assertEquals(20L * BS, r.writes.get(1).offset());
        assertEquals(BS, r.writes.get(1).length());
    }

    @Test
    void partialBlocksGoOutAsSectorRunsAndSkippedEntriesNotAtAll() throws Exception {
        WritebackBatcher wb = new WritebackBatcher(BS, 256, true);
        long[] blocks = {5, 6, 7};
        int[] valid = {0b1100_0110, 0, 0xFF};
        Rec r = new Rec();
        assertEquals(3, wb.write(3, blocks, valid, data(3), r));
        assertEquals(5L * BS + 512, r.writes.get(0).offset());
        assertEquals(1024, r.writes.get(0).length());
        assertEquals(5L * BS + 6 * 512, r.writes.get(1).offset());
        assertEquals(1024, r.writes.get(1).length());
        assertEquals(7L * BS, r.writes.get(2).offset(), "the partial block ends the run; block 6 was skipped");
        assertArrayEquals(new byte[] {3, 3, 3, 3, 3, 3, 3, 3}, r.writes.get(2).firstBytes());
    }

    @Test
    void runsAreCappedAtTheMaximum() throws Exception {
        WritebackBatcher wb = new WritebackBatcher(BS, 3, true);
        long[] blocks = {0, 1, 2, 3, 4, 5, 6};
        int[] valid = new int[7];
        java.util.Arrays.fill(valid, 0xFF);
        Rec r = new Rec();
        assertEquals(3, wb.write(7, blocks, valid, data(7), r));
        assertEquals(List.of(0L, 3L * BS, 6L * BS), r.writes.stream().map(W::offset).toList());
        assertEquals(List.of(3 * BS, 3 * BS, BS), r.writes.stream().map(W::length).toList());
    }

    @Test
    void unsortedWritesInBatchOrderOneBlockAtATime() throws Exception {
        WritebackBatcher wb = new WritebackBatcher(BS, 256, false);
        long[] blocks = {3, 1, 2};
        int[] valid = {0xFF, 0xFF, 0xFF};
        Rec r = new Rec();
        assertEquals(3, wb.write(3, blocks, valid, data(3), r));
        assertEquals(List.of(3L * BS, 1L * BS, 2L * BS), r.writes.stream().map(W::offset).toList());
    }

    /**
     * The sort key packs the block with the entry index: a block number that does not fit the
     * bits left is refused (the old {@code (key << 16) | k} silently mis-sorted such blocks and
     * mixed indices of batches over 65536 entries).
     */
    @Test
    void aBlockNumberThatCannotBeSortedIsRefused() {
        WritebackBatcher wb = new WritebackBatcher(BS, 256, true);
        int count = 70_000; // more than 16 index bits
        long[] blocks = new long[count];
        int[] valid = new int[count];
        for (int i = 0; i < count; i++) {
            blocks[i] = count - i;
        }
        blocks[0] = WritebackBatcher.maxBlock(count) + 1;
        assertThrows(IllegalArgumentException.class,
                () -> wb.write(count, blocks, valid, ByteBuffer.allocate(count * BS), new Rec()));
        assertEquals(Long.MAX_VALUE >>> 17, WritebackBatcher.maxBlock(count));
        assertEquals(Long.MAX_VALUE >>> 1, WritebackBatcher.maxBlock(1));
    }

    @Test
    void largeBatchesSortCorrectly() throws Exception {
        WritebackBatcher wb = new WritebackBatcher(BS, 256, true);
        int count = 70_000;
        long[] blocks = new long[count];
        int[] valid = new int[count];
        for (int i = 0; i < count; i++) {
            blocks[i] = count - 1 - i; // reverse order, all adjacent
            valid[i] = 0xFF;
        }
        Rec r = new Rec();
        ByteBuffer d = ByteBuffer.allocate(count * BS);
        d.put((count - 1) * BS, (byte) 42); // entry count-1 holds block 0
        assertEquals((count + 255) / 256, wb.write(count, blocks, valid, d, r));
        for (int i = 0; i < r.writes.size(); i++) {
            assertEquals(256L * BS * i, r.writes.get(i).offset());
        }
        assertEquals(256 * BS, r.writes.get(0).length());
        assertEquals(42, r.writes.get(0).firstBytes()[0]);
    }
}
