package dev.strata.cache.writecache.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.cache.writecache.internal.recovery.Recovery;
import dev.strata.testsupport.crash.CrashableDevice;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Writers (whole and partial blocks, FUA, flushes, zeroes, discards) each own a region and check
 * every read against their own copy, while the background job writes back between the
 * watermarks of a cache far smaller than the data (slots are freed and reused under readers all
 * the time); afterwards everything is read back, again after a restart, and after writeback
 * from the backing device alone.
 */
@Timeout(120)
class ConcurrentLoadTest {
    static final int BS = 4096;
    static final int THREADS = 6;
    static final int REGION_BLOCKS = 64;

    @Test
    void verifiedLoadWithBackgroundWriteback() throws Exception {
        CrashableDevice backing = new CrashableDevice("backing", (long) THREADS * REGION_BLOCKS * BS, 512);
        CrashableDevice cache = new CrashableDevice("cache", WritecacheSubject.cacheBytes(96, BS), 512);
        Tunables t = Tunables.DEFAULTS.with(Tunables.HIGH_WATERMARK, "60").with(Tunables.LOW_WATERMARK, "30")
                .with(Tunables.WRITEBACK_BATCH, "16").with(Tunables.AUTOCOMMIT_BLOCKS, "8");
        byte[][] models = new byte[THREADS][REGION_BLOCKS * BS];
        WritecacheTarget wc = Recovery.open("wc", backing, cache, null, 0, false, t, Options.defaults());
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        List<Future<?>> fs = new ArrayList<>();
        for (int th = 0; th < THREADS; th++) {
            int me = th;
            fs.add(pool.submit(() -> {
                Random r = new Random(me);
                byte[] model = models[me];
                long base = (long) me * REGION_BLOCKS * BS;
                for (int i = 0; i < 1500; i++) {
                    int sectors = REGION_BLOCKS * 8;
                    int first = r.nextInt(sectors);
                    int n = 1 + r.nextInt(Math.min(40, sectors - first));
                    int off = first * 512;
                    int len = n * 512;
                    int kind = r.nextInt(20);
                    if (kind < 10) {
                        byte[] d = new byte[len];
                        r.nextBytes(d);
                        wc.write(base + off, ByteBuffer.wrap(d), kind == 0 ? BlockDevice.FUA : 0);
                        System.arraycopy(d, 0, model, off, len);
                    } else if (kind < 16) {
                        ByteBuffer got = ByteBuffer.allocate(len);
                        wc.read(base + off, got);
                        byte[] expect = new byte[len];
                        System.arraycopy(model, off, expect, 0, len);
                        assertArrayEquals(expect, got.array(), "thread " + me + " op " + i + " read " + off + "+" + len);
                    } else if (kind < 18) {
                        wc.writeZeroes(base + off, len, 0);
                        java.util.Arrays.fill(model, off, off + len, (byte) 0);
                    } else {
                        wc.flush();
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : fs) {
            f.get(100, TimeUnit.SECONDS);
        }
        pool.shutdown();
        verify(wc, models);
        long writtenBack = Long.parseLong(wc.status().get("written_back_blocks"));
        assertTrue(writtenBack > 0, "the background job wrote back: " + wc.status());
        assertTrue(Long.parseLong(wc.status().get("writes_around")) >= 0);
        wc.close();
        WritecacheTarget again = Recovery.open("wc", backing, cache, null, 0, false, t, Options.defaults().manual());
        verify(again, models);
        again.writebackAll((d, w) -> { });
        assertEquals(0, again.dirtyBlocks());
        again.close();
        for (int th = 0; th < THREADS; th++) {
            ByteBuffer got = ByteBuffer.allocate(REGION_BLOCKS * BS);
            backing.read((long) th * REGION_BLOCKS * BS, got);
            assertArrayEquals(models[th], got.array(), "backing region " + th);
        }
    }

    private static void verify(BlockDevice d, byte[][] models) throws Exception {
        for (int th = 0; th < THREADS; th++) {
            ByteBuffer got = ByteBuffer.allocate(REGION_BLOCKS * BS);
            d.read((long) th * REGION_BLOCKS * BS, got);
            assertArrayEquals(models[th], got.array(), "region " + th);
        }
    }
}
