package dev.strata.cache.writeboost.internal.crash;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.cache.writeboost.internal.io.Tunables;
import dev.strata.cache.writeboost.internal.io.WriteboostCache;
import dev.strata.testsupport.crash.CrashMode;
import dev.strata.testsupport.crash.CrashableDevice;
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
 * A bypass into a full log drops the (dirty) cached copies of its range before it waits for log
 * space for their INVALIDATE entries, so that writeback can free that space. The superblock
 * record that the wait writes (to reclaim the oldest segment) must not declare a segment holding
 * one of those copies written back (warm) while the INVALIDATE is not durable: after a power cut
 * recovery would keep the old copy as clean over the newer data on the backing device.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FullLogBypassCrashTest {
    static final int MIB = 1 << 20;
    static final long TARGET = 7L * 255 * 4096; // the first blocks of the 8th segment of the log

    /** Opens a latch when the 8 KiB bypass write has landed on the backing device. */
    static final class Backing implements BlockDevice {
        final CrashableDevice d;
        final CountDownLatch bypassLanded = new CountDownLatch(1);

        Backing(CrashableDevice d) {
            this.d = d;
        }

        public long size() { return d.size(); }
        public int blockSize() { return d.blockSize(); }
        public void read(long o, ByteBuffer b) throws IOException { d.read(o, b); }
        public void write(long o, ByteBuffer b, int f) throws IOException {
            int n = b.remaining();
            d.write(o, b, f);
            if (o == TARGET && n == 8192) {
                bypassLanded.countDown();
            }
        }
        public void flush() throws IOException { d.flush(); }
        public void discard(long o, long l) throws IOException { d.discard(o, l); }
        public void writeZeroes(long o, long l, int f) throws IOException { d.writeZeroes(o, l, f); }
        public void close() { }
    }

    static Tunables tunables() {
        return Tunables.DEFAULTS.with(Tunables.BYPASS_THRESHOLD, "8192").with(Tunables.SEQUENTIAL_CUTOFF, "0")
                .with(Tunables.NR_MAX_BATCHED_WRITEBACK, "32").with(Tunables.IO_TIMEOUT, "20000");
    }

    static byte[] read(BlockDevice d, long off, int len) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(len);
        d.read(off, b);
        return b.array();
    }

    @Test
    void theRecordWrittenWhileABypassWaitsForLogSpaceKeepsItsDroppedCopiesOutOfTheWarmRegion() throws Exception {
        CrashableDevice backingDev = new CrashableDevice("slow", 64L * MIB, 4096);
        CrashableDevice cache = new CrashableDevice("fast", 17L * MIB, 4096); // 16 segments
        Backing backing = new Backing(backingDev);
        Random r = new Random(5);
        WriteboostCache wb = WriteboostCache.open("wb", backing, cache, false, tunables(),
                WriteboostCache.Options.defaults().manual(), null);
        ExecutorService ex = Executors.newSingleThreadExecutor();
        byte[] w2 = new byte[8192];
        try {
            byte[] block = new byte[4096];
            for (int i = 0; i < 16 * 255; i++) { // every segment full of dirty blocks
                r.nextBytes(block);
                wb.write(i * 4096L, ByteBuffer.wrap(block), 0);
            }
            r.nextBytes(w2);
            Future<?> bypass = ex.submit(() -> {
                wb.write(TARGET, ByteBuffer.wrap(w2), 0); // covers two dirty blocks of a middle segment
                return null;
            });
            assertTrue(backing.bypassLanded.await(60, TimeUnit.SECONDS));
            // writes back every complete segment; the bypass then writes a record reclaiming the oldest
            wb.writebackRunOnce();
            bypass.get(60, TimeUnit.SECONDS);
            assertArrayEquals(w2, read(wb, TARGET, 8192));
        } finally {
            ex.shutdownNow();
        }
        // power cut before any flush: the INVALIDATE entries are lost, the backing write landed
        cache.crash(CrashMode.DROP_ALL, r);
        backingDev.crash(CrashMode.KEEP_ALL, r);
        try {
            wb.close();
        } catch (IOException expected) {
            // the devices are dead
        }
        CrashableDevice backing2 = backingDev.restart();
        CrashableDevice cache2 = cache.restart();
        WriteboostCache wb2 = WriteboostCache.open("wb", backing2, cache2, false, tunables(),
                WriteboostCache.Options.defaults().manual(), null);
        try {
            byte[] seen = read(wb2, TARGET, 8192); // old or new: both are legal after the crash
            wb2.message(Tunables.WRITE_AROUND, "true");
            wb2.writebackAll();
            wb2.message("invalidate", "all"); // what cache:detach does before swapping to linear
            assertArrayEquals(seen, read(wb2, TARGET, 8192), "the content changed without a write");
            assertArrayEquals(seen, read(backing2, TARGET, 8192),
                    "after invalidate=all the backing device differs from what the device read");
        } finally {
            wb2.close();
        }
    }
}
