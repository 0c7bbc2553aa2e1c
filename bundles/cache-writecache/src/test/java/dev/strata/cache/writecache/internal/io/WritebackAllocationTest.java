package dev.strata.cache.writecache.internal.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.cache.writecache.internal.recovery.Recovery;
import dev.strata.api.BlockDevice;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A writeback batch allocates nothing per block once warm: the batch's slot, block and seq_count
 * arrays, the heap that picks the oldest, the sort keys, the data buffer and the metadata it
 * encodes are kept between batches; what is left is a few objects per batch (views, the list of
 * metadata runs, the in-flight snapshot). Counted on the thread that runs the batch
 * (com.sun.management.ThreadMXBean), not timed: a per-batch {@code new long[max]} or a boxed
 * set of the batch's blocks makes it fail.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class WritebackAllocationTest {
    static final int BS = 4096;
    static final int SLOTS = 2048;
    static final int BATCH = 512;
    /** Well under one long per block: the old per-batch arrays alone were over 24 bytes per block. */
    static final double MAX_BYTES_PER_BLOCK = 4;

    /**
     * A RAM disk that allocates nothing per request (the crash kit's devices copy every write for
     * their log, which would be counted here); volatile cache semantics do not matter to a count.
     */
    static final class Ram implements BlockDevice {
        final byte[] bytes;

        Ram(long size) {
            bytes = new byte[(int) size];
        }

        @Override
        public long size() {
            return bytes.length;
        }

        @Override
        public int blockSize() {
            return 4096;
        }

        @Override
        public synchronized void read(long offset, ByteBuffer dst) {
            dst.put(bytes, (int) offset, dst.remaining());
        }

        @Override
        public synchronized void write(long offset, ByteBuffer src, int flags) {
            src.get(bytes, (int) offset, src.remaining());
        }

        @Override
        public void flush() {
        }

        @Override
        public synchronized void discard(long offset, long length) {
            java.util.Arrays.fill(bytes, (int) offset, (int) (offset + length), (byte) 0);
        }

        @Override
        public void writeZeroes(long offset, long length, int flags) {
            discard(offset, length);
        }

        @Override
        public void close() {
        }
    }

    @Test
    void writebackBatchesAllocateNothingPerBlock() throws Exception {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Ram backing = new Ram(64L << 20);
        Ram cache = new Ram(WritecacheSubject.cacheBytes(SLOTS, BS));
        try (WritecacheTarget t = Recovery.open("wc", backing, cache, null, 0, false, Tunables.DEFAULTS,
                Options.defaults().manual())) {
            ByteBuffer data = ByteBuffer.allocate(BATCH * BS);
            long tid = Thread.currentThread().getId();
            long allocated = 0;
            long blocks = 0;
            for (int round = 0; round < 60; round++) {
                // a batch of blocks spread over the backing device (the metadata sectors they touch
                // are adjacent: consecutive slots), written back in one batch
                t.write((long) (round % 8) * BATCH * BS * 2, data.clear(), 0);
                t.flush();
                long before = mx.getThreadAllocatedBytes(tid);
                int n = t.writebackOldest(BATCH);
                long after = mx.getThreadAllocatedBytes(tid);
                assertEquals(BATCH, n);
                if (round >= 30) { // warm: the JIT has compiled the path, the buffers have grown
                    allocated += after - before;
                    blocks += n;
                }
            }
            double perBlock = (double) allocated / blocks;
            assertTrue(perBlock < MAX_BYTES_PER_BLOCK,
                    "writeback allocated " + allocated + " bytes for " + blocks + " blocks (" + perBlock + " per block)");
        }
    }
}
