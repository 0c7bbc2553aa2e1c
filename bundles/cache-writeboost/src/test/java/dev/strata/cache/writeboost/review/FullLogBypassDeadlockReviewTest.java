package dev.strata.cache.writeboost.review;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.cache.writeboost.internal.io.Tunables;
import dev.strata.cache.writeboost.internal.io.WriteboostCache;
import dev.strata.cache.writeboost.internal.testing.MemDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A bypassed write whose range holds a dirty cached block, issued when the log is full: the
 * bypass keeps its range registered while it waits for log space for its INVALIDATE entry;
 * writeback of the oldest segment (the one that would free that space) meets the dirty block of
 * the registered range and waits for the bypass. Both wait until io_timeout_ms and fail.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FullLogBypassDeadlockReviewTest {
    static final int MIB = 1 << 20;

    /** The backing device, with a latch that opens when the 8 KiB bypass write has landed. */
    static final class Backing implements BlockDevice {
        final MemDevice d = new MemDevice("backing", 64L * MIB);
        final CountDownLatch bypassLanded = new CountDownLatch(1);

        public long size() { return d.size(); }
        public int blockSize() { return d.blockSize(); }
        public void read(long o, ByteBuffer b) throws IOException { d.read(o, b); }
        public void write(long o, ByteBuffer b, int f) throws IOException {
            int n = b.remaining();
            d.write(o, b, f);
            if (o == 0 && n == 8192) {
                bypassLanded.countDown();
            }
        }
        public void flush() throws IOException { d.flush(); }
        public void discard(long o, long l) throws IOException { d.discard(o, l); }
        public void writeZeroes(long o, long l, int f) throws IOException { d.writeZeroes(o, l, f); }
        public void close() { }
    }

    @Test
    void aBypassIntoAFullLogDoesNotDeadlockWithWriteback() throws Exception {
        Backing backing = new Backing();
        MemDevice cacheDev = new MemDevice("cache", 17L * MIB); // 16 segments
        Tunables t = Tunables.DEFAULTS.with(Tunables.BYPASS_THRESHOLD, "8192").with(Tunables.SEQUENTIAL_CUTOFF, "0")
                .with(Tunables.IO_TIMEOUT, "10000");
        WriteboostCache wb = WriteboostCache.open("wb", backing, cacheDev, false, t,
                WriteboostCache.Options.defaults().manual(), null);
        ExecutorService ex = Executors.newSingleThreadExecutor();
        try {
            Random r = new Random(3);
            byte[] block = new byte[4096];
            for (int i = 0; i < 16 * 255; i++) { // every segment full of dirty blocks
                r.nextBytes(block);
                wb.write(i * 4096L, ByteBuffer.wrap(block), 0);
            }
            byte[] w2 = new byte[8192];
            r.nextBytes(w2);
            Future<?> bypass = ex.submit(() -> {
                wb.write(0, ByteBuffer.wrap(w2), 0); // covers two dirty blocks of the oldest segment
                return null;
            });
            assertTrue(backing.bypassLanded.await(60, TimeUnit.SECONDS));
            // the writeback daemon's step: write back the oldest segment to make room
            assertDoesNotThrow(() -> wb.writebackRunOnce(), "writeback of the oldest segment");
            assertDoesNotThrow(() -> bypass.get(60, TimeUnit.SECONDS), "the bypassed write");
            ByteBuffer b = ByteBuffer.allocate(8192);
            wb.read(0, b);
            assertArrayEquals(w2, b.array());
        } finally {
            ex.shutdownNow();
            wb.close();
        }
    }
}
