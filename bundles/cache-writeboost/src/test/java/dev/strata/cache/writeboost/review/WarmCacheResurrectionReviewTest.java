package dev.strata.cache.writeboost.review;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import dev.strata.api.BlockDevice;
import dev.strata.cache.writeboost.internal.io.Tunables;
import dev.strata.cache.writeboost.internal.io.WriteboostCache;
import dev.strata.testsupport.crash.CrashMode;
import dev.strata.testsupport.crash.CrashableDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Recovery keeps the blocks of written-back segments as clean, warm cache ("the cached copy
 * equals the backing device"). A bypassed write (or a large writeZeroes) goes to the backing
 * device first and logs the INVALIDATE of the cached copies afterwards, in a record that is not
 * durable until the next flush. A power cut in between can keep the (unflushed) backing write
 * and lose the INVALIDATE: recovery then resurrects the old copy as clean. The device reads
 * the old data, while the backing device holds the new; the moment the warm copy goes away
 * (segment reuse, invalidate=all, cache:detach) the device's content changes without any write.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class WarmCacheResurrectionReviewTest {
    static final int MIB = 1 << 20;

    static byte[] read(BlockDevice d, long off, int len) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(len);
        d.read(off, b);
        return b.array();
    }

    static Tunables tunables() {
        return Tunables.DEFAULTS.with(Tunables.BYPASS_THRESHOLD, "8192").with(Tunables.SEQUENTIAL_CUTOFF, "0");
    }

    void run(boolean zeroes) throws IOException {
        CrashableDevice backing = new CrashableDevice("slow", 16L * MIB, 4096);
        CrashableDevice cache = new CrashableDevice("fast", 17L * MIB, 4096);
        Random r = new Random(11);
        WriteboostCache wb = WriteboostCache.open("wb", backing, cache, false, tunables(),
                WriteboostCache.Options.defaults().manual(), null);
        byte[] w1 = new byte[128 * 1024];
        r.nextBytes(w1);
        for (int i = 0; i < w1.length; i += 4096) { // 4 KiB writes: cached
            wb.write(i, ByteBuffer.wrap(w1, i, 4096), 0);
        }
        wb.flush();
        wb.writebackAll();
        wb.updateRecord(Long.MIN_VALUE); // the periodic record: segment 0 written back, kept warm
        // a large write (or zeroing) of the same range: bypassed, acknowledged, not flushed
        if (zeroes) {
            wb.writeZeroes(0, w1.length, 0);
        } else {
            byte[] w2 = new byte[w1.length];
            r.nextBytes(w2);
            wb.write(0, ByteBuffer.wrap(w2), 0);
        }
        // power cut: the cache device loses its volatile writes, the backing device's landed
        cache.crash(CrashMode.DROP_ALL, r);
        backing.crash(CrashMode.KEEP_ALL, r);
        try {
            wb.close();
        } catch (IOException expected) {
            // the devices are dead
        }
        CrashableDevice backing2 = backing.restart();
        CrashableDevice cache2 = cache.restart();
        WriteboostCache wb2 = WriteboostCache.open("wb", backing2, cache2, false, tunables(),
                WriteboostCache.Options.defaults().manual(), null);
        try {
            byte[] seen = read(wb2, 0, w1.length); // old or new: both are legal after the crash
            // no write happens from here on; the device's content must not change
            wb2.message(Tunables.WRITE_AROUND, "true");
            wb2.message("invalidate", "all"); // what cache:detach does before swapping to linear
            assertArrayEquals(seen, read(wb2, 0, w1.length), "the content changed without a write");
            assertArrayEquals(seen, read(backing2, 0, w1.length),
                    "after invalidate=all the backing device (what cache:detach exposes) differs from what the device read");
        } finally {
            wb2.close();
        }
    }

    @Test
    void aBypassedWriteDoesNotResurrectAStaleCleanBlockAfterACrash() throws IOException {
        run(false);
    }

    @Test
    void aBypassedWriteZeroesDoesNotResurrectAStaleCleanBlockAfterACrash() throws IOException {
        run(true);
    }

    /**
     * The block is dirty when the bypass runs; its segment is written back afterwards and the
     * periodic superblock record then declares it written back (warm) while the INVALIDATE of
     * the block still sits in the open record.
     */
    @Test
    void aRecordWrittenAfterABypassDoesNotKeepItsInvalidatedBlockWarm() throws IOException {
        CrashableDevice backing = new CrashableDevice("slow", 16L * MIB, 4096);
        CrashableDevice cache = new CrashableDevice("fast", 17L * MIB, 4096);
        Random r = new Random(12);
        WriteboostCache wb = WriteboostCache.open("wb", backing, cache, false, tunables(),
                WriteboostCache.Options.defaults().manual(), null);
        byte[] w1 = new byte[8192];
        r.nextBytes(w1);
        wb.write(0, ByteBuffer.wrap(w1, 0, 4096), 0);
        wb.write(4096, ByteBuffer.wrap(w1, 4096, 4096), 0);
        byte[] other = new byte[4096];
        for (int i = 0; i < 300; i++) { // the head moves past segment 0
            r.nextBytes(other);
            wb.write(MIB + i * 4096L, ByteBuffer.wrap(other), 0);
        }
        wb.flush();
        byte[] w2 = new byte[8192];
        r.nextBytes(w2);
        wb.write(0, ByteBuffer.wrap(w2), 0); // bypassed; its INVALIDATE goes to the open record
        while (wb.writebackRunOnce()) {
            // segment 0 (complete) is written back
        }
        wb.updateRecord(Long.MIN_VALUE);
        cache.crash(CrashMode.DROP_ALL, r);
        backing.crash(CrashMode.KEEP_ALL, r);
        try {
            wb.close();
        } catch (IOException expected) {
            // the devices are dead
        }
        CrashableDevice backing2 = backing.restart();
        CrashableDevice cache2 = cache.restart();
        WriteboostCache wb2 = WriteboostCache.open("wb", backing2, cache2, false, tunables(),
                WriteboostCache.Options.defaults().manual(), null);
        try {
            byte[] seen = read(wb2, 0, 8192);
            wb2.message(Tunables.WRITE_AROUND, "true");
            wb2.writebackAll(); // the other blocks are still dirty
            wb2.message("invalidate", "all");
            assertArrayEquals(seen, read(backing2, 0, 8192),
                    "after invalidate=all the backing device (what cache:detach exposes) differs from what the device read");
        } finally {
            wb2.close();
        }
    }
}
