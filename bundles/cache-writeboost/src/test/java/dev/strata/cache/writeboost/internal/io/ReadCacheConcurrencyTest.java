package dev.strata.cache.writeboost.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.cache.writeboost.internal.testing.MemDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Read caching under concurrency, with every daemon running: writers (cached, sub-block,
 * bypassed writes, write-zeroes, flushes) each own a region and read it back after their own
 * writes (exact check: nobody else writes there), while readers hammer every region with small
 * reads that stage blocks the writers are changing. The log wraps several times (eviction). At
 * the end every block must read as last written — from the log, after the injector drained, and
 * after a restart — and the backing device must equal the model after writeback.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class ReadCacheConcurrencyTest {
    static final int MIB = 1 << 20;
    static final int BS = 4096;
    static final int WRITERS = 3;
    static final int READERS = 2;
    static final int REGION = 64; // blocks per writer
    static final int OPS = 1000;
    final MemDevice backing = new MemDevice("backing", 16L * MIB);
    final MemDevice cacheDev = new MemDevice("cache", 17L * MIB);
    final byte[] model = new byte[WRITERS * REGION * BS];
    WriteboostCache wb;

    @AfterEach
    void close() throws IOException {
        if (wb != null) {
            wb.close();
            assertTrue(wb.runningDaemons().isEmpty(), wb.runningDaemons().toString());
        }
    }

    static Tunables tunables() {
        return Tunables.DEFAULTS.with(Tunables.READ_CACHE_THRESHOLD, "16").with(Tunables.BYPASS_THRESHOLD, "16k")
                .with(Tunables.SEQUENTIAL_CUTOFF, "0").with(Tunables.WRITEBACK_THRESHOLD, "100");
    }

    byte[] read(long offset, int len) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(len);
        wb.read(offset, b);
        return b.array();
    }

    void writer(int w) throws IOException {
        Random r = new Random(100 + w);
        int base = w * REGION;
        for (int i = 0; i < OPS; i++) {
            int x = r.nextInt(100);
            long off;
            int len;
            if (x < 45) { // cached, 1..3 blocks
                len = (1 + r.nextInt(3)) * BS;
                off = (long) (base + r.nextInt(REGION - 3)) * BS;
            } else if (x < 60) { // sub-block, cached
                len = (1 + r.nextInt(4)) * 512;
                off = (long) (base + r.nextInt(REGION - 1)) * BS + r.nextInt(4) * 512;
            } else if (x < 75) { // bypassed: 4..8 blocks
                len = (4 + r.nextInt(5)) * BS;
                off = (long) (base + r.nextInt(REGION - 8)) * BS;
            } else if (x < 80) { // write-zeroes of 64 KiB: bypassed
                off = (long) (base + 16 * r.nextInt(REGION / 16)) * BS;
                wb.writeZeroes(off, 16 * BS, 0);
                Arrays.fill(model, (int) off, (int) off + 16 * BS, (byte) 0);
                continue;
            } else if (x < 83) {
                wb.flush();
                continue;
            } else { // read back own blocks: exact
                int n = 1 + r.nextInt(4);
                long o = (long) (base + r.nextInt(REGION - n)) * BS;
                assertArrayEquals(Arrays.copyOfRange(model, (int) o, (int) o + n * BS), read(o, n * BS),
                        "writer " + w + " reads its own blocks at " + o / BS + " +" + n + " (op " + i + ")");
                continue;
            }
            byte[] d = new byte[len];
            r.nextBytes(d);
            wb.write(off, ByteBuffer.wrap(d), 0);
            System.arraycopy(d, 0, model, (int) off, len);
        }
    }

    void reader(int k, AtomicBoolean stop) throws IOException {
        Random r = new Random(200 + k);
        int blocks = WRITERS * REGION;
        while (!stop.get()) {
            int n = 1 + r.nextInt(4);
            read((long) r.nextInt(blocks - n) * BS, n * BS);
        }
    }

    /** Fills the log with writes outside the regions, so that the log wraps and evicts. */
    void churn(AtomicBoolean stop) throws IOException {
        Random r = new Random(300);
        long first = 4L * MIB / BS;
        while (!stop.get()) {
            byte[] d = new byte[BS];
            r.nextBytes(d);
            wb.write((first + r.nextInt(2048)) * BS, ByteBuffer.wrap(d), 0);
        }
    }

    @Test
    void concurrentReadsAndWritesNeverLeaveAStaleBlock() throws Exception {
        wb = WriteboostCache.open("wb", backing, cacheDev, false, tunables(), WriteboostCache.Options.defaults(), null);
        backing.delayMicros = 20; // widens the window between a backing read and its staging
        ExecutorService ex = Executors.newFixedThreadPool(WRITERS + READERS + 1);
        AtomicBoolean stop = new AtomicBoolean();
        try {
            List<Future<?>> writers = new ArrayList<>();
            List<Future<?>> others = new ArrayList<>();
            for (int w = 0; w < WRITERS; w++) {
                int ww = w;
                writers.add(ex.submit(() -> {
                    writer(ww);
                    return null;
                }));
            }
            for (int k = 0; k < READERS; k++) {
                int kk = k;
                others.add(ex.submit(() -> {
                    reader(kk, stop);
                    return null;
                }));
            }
            others.add(ex.submit(() -> {
                churn(stop);
                return null;
            }));
            try {
                for (Future<?> f : writers) {
                    f.get(200, TimeUnit.SECONDS);
                }
            } finally {
                stop.set(true);
            }
            for (Future<?> f : others) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            stop.set(true);
            ex.shutdownNow();
        }
        backing.delayMicros = 0;
        assertTrue(Long.parseLong(wb.status().get("read_cache_injected")) > 0, wb.status().toString());
        verify("after the run");
        while (wb.injectorRunOnce()) {
            // drain what is still staged (the daemon may be doing the same)
        }
        verify("after the injector drained");
        verify("read again (hits)");
        wb.close();
        wb = WriteboostCache.open("wb", backing, cacheDev, false, tunables(), WriteboostCache.Options.defaults().manual(),
                null);
        verify("after a restart");
        wb.writebackAll();
        ByteBuffer img = ByteBuffer.allocate(model.length);
        backing.read(0, img);
        assertArrayEquals(model, img.array(), "the backing device after writeback");
        assertEquals("0", wb.status().get("dirty_blocks"));
    }

    void verify(String when) throws IOException {
        for (int b = 0; b < model.length / BS; b++) {
            assertArrayEquals(Arrays.copyOfRange(model, b * BS, (b + 1) * BS), read((long) b * BS, BS),
                    "block " + b + " " + when + "; " + wb.status());
        }
    }
}
