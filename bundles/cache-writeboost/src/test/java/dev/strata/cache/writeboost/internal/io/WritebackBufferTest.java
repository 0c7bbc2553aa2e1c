package dev.strata.cache.writeboost.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.cache.writeboost.internal.format.Layout;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Writeback reads each batch into one direct buffer. It is allocated once, for the largest
 * batch the tunable and the log allow, and not again for a larger batch: a fresh cache used to
 * allocate (and the kernel to zero) a new one each time a batch outgrew the last, in the middle
 * of the user's writes.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class WritebackBufferTest extends WriteboostFixture {
    @Test
    void oneBufferServesASmallBatchAndThenALargeOne() throws IOException {
        wb = open(noBypass().with(Tunables.WRITEBACK_THRESHOLD, "0"),
                WriteboostCache.Options.defaults().withBackgroundWriteback(false));
        byte[] model = new byte[(int) backing.size()];
        Random r = new Random(11);
        long block = 0;
        // one segment's worth of dirty blocks, then written back: a batch of one segment
        block = writeBlocks(model, r, block, Layout.MAX_DATA);
        wb.writebackAll();
        ByteBuffer first = wb.parts.writeback.wbData;
        assertNotNull(first, "the first batch allocated the writeback buffer");
        // then six segments' worth: a batch six times larger, into the same buffer
        writeBlocks(model, r, block, 6 * Layout.MAX_DATA);
        wb.writebackAll();
        assertEquals(0, wb.dirtyBlocks());
        assertSame(first, wb.parts.writeback.wbData, "a larger batch allocated another writeback buffer");
        assertTrue(first.capacity() >= 6 * Layout.MAX_DATA * Layout.BLOCK);
        assertArrayEquals(model, read(backing, 0, model.length), "the backing device holds every block written");
    }

    private long writeBlocks(byte[] model, Random r, long from, int count) throws IOException {
        for (long b = from; b < from + count; b++) {
            byte[] d = random(r, Layout.BLOCK);
            write(wb, b * Layout.BLOCK, d);
            System.arraycopy(d, 0, model, (int) (b * Layout.BLOCK), d.length);
        }
        return from + count;
    }
}
