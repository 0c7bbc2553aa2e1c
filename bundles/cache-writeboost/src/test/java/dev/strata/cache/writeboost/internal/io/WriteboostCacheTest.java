package dev.strata.cache.writeboost.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceIOException;
import dev.strata.api.InvalidArgumentException;
import dev.strata.cache.writeboost.internal.format.Layout;
import dev.strata.cache.writeboost.internal.format.Superblock;
import dev.strata.cache.writeboost.internal.testing.MemDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 120, unit = TimeUnit.SECONDS)
class WriteboostCacheTest extends WriteboostFixture {
    @Test
    void formatsABlankCacheAndReadsItsWrites() throws IOException {
        wb = open(noBypass(), WriteboostCache.Options.defaults());
        byte[] model = new byte[(int) backing.size()];
        modelRun(new Random(1), model, 3000, 64 * 1024);
        verifyAll(model);
        Map<String, String> s = wb.status();
        assertTrue(Long.parseLong(s.get("read_hits")) > 0);
        assertEquals("active", s.get("cache_state"));
    }

    @Test
    void subBlockWritesMergeWithTheBackingDevice() throws IOException {
        Random r = new Random(2);
        byte[] base = random(r, 64 * 1024);
        write(backing, 0, base);
        wb = open(noBypass(), WriteboostCache.Options.defaults());
        byte[] model = Arrays.copyOf(base, base.length);
        // sector 3 of block 0, sectors 7 of block 1 and 0..1 of block 2
        byte[] a = random(r, 512);
        write(wb, 3 * 512, a);
        System.arraycopy(a, 0, model, 3 * 512, 512);
        byte[] b = random(r, 3 * 512);
        write(wb, 4096 + 7 * 512, b);
        System.arraycopy(b, 0, model, 4096 + 7 * 512, 3 * 512);
        assertArrayEquals(Arrays.copyOf(model, 16384), read(wb, 0, 16384));
        wb.flush();
        // push the partial blocks out of the buffer so that a second partial write must merge from the device
        for (int i = 0; i < 600; i++) {
            write(wb, 32L * MIB + i * 4096L, random(r, 4096));
        }
        wb.flush();
        byte[] c = random(r, 512);
        write(wb, 5 * 512, c);
        System.arraycopy(c, 0, model, 5 * 512, 512);
        assertArrayEquals(Arrays.copyOf(model, 16384), read(wb, 0, 16384));
        assertArrayEquals(Arrays.copyOfRange(model, 512, 512 + 3 * 512), read(wb, 512, 3 * 512));
        wb.writebackAll();
        assertArrayEquals(Arrays.copyOf(model, 16384), read(backing, 0, 16384), "written back sector by sector");
        assertArrayEquals(Arrays.copyOf(model, 16384), read(wb, 0, 16384));
    }

    @Test
    void reopensFromTheLogAfterClose() throws IOException {
        wb = open(noBypass(), WriteboostCache.Options.defaults().withBackgroundWriteback(false));
        byte[] model = new byte[(int) backing.size()];
        modelRun(new Random(3), model, 800, 16 * 1024);
        long dirty = wb.dirtyBlocks();
        assertTrue(dirty > 0);
        wb.close();
        long before = cacheDev.bytesRead.get();
        wb = open(noBypass(), WriteboostCache.Options.defaults().withBackgroundWriteback(false));
        long startupRead = cacheDev.bytesRead.get() - before;
        assertEquals(dirty, wb.dirtyBlocks());
        assertTrue(wb.recovered().dirtyRecords() > 0);
        // after a clean close only headers are read: superblock, two slots, one block per record header
        assertEquals(startupRead, 3 * 4096 + wb.recovered().bytesRead());
        assertTrue(startupRead < 2L * MIB, "start-up read " + startupRead + " bytes");
        verifyAll(model);
    }

    @Test
    void badInputIsOneLineAndWritesNothing() throws IOException {
        MemDevice tiny = new MemDevice("tiny", 16L * MIB);
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> WriteboostCache.open("wb", backing, tiny, false, Tunables.DEFAULTS, WriteboostCache.Options.defaults(), null));
        assertTrue(e.getMessage().contains("at least"), e.getMessage());
        assertEquals(0, tiny.bytesWritten.get());
        assertThrows(InvalidArgumentException.class,
                () -> WriteboostCache.open("wb", backing, backing, false, Tunables.DEFAULTS, WriteboostCache.Options.defaults(), null));

        // foreign data
        write(cacheDev, 0, Arrays.copyOf("not a strata cache".getBytes(), 4096));
        long w = cacheDev.bytesWritten.get();
        e = assertThrows(InvalidArgumentException.class, () -> open(Tunables.DEFAULTS, WriteboostCache.Options.defaults()));
        assertTrue(e.getMessage().contains("format=true"), e.getMessage());
        assertFalse(e.getMessage().contains("\n"));
        assertEquals(w, cacheDev.bytesWritten.get());

        // another policy, another version
        Superblock other = new Superblock(1, "writecache", 4096, 1 << 20, 16, 1 << 20, java.util.UUID.randomUUID(), backing.size(), 1);
        cacheDev.write(0, other.encode(), 0);
        w = cacheDev.bytesWritten.get();
        e = assertThrows(InvalidArgumentException.class, () -> open(Tunables.DEFAULTS, WriteboostCache.Options.defaults()));
        assertTrue(e.getMessage().contains("writecache"), e.getMessage());
        Superblock v9 = new Superblock(9, "writeboost", 4096, 1 << 20, 16, 1 << 20, java.util.UUID.randomUUID(), backing.size(), 1);
        cacheDev.write(0, v9.encode(), 0);
        w = cacheDev.bytesWritten.get();
        e = assertThrows(InvalidArgumentException.class, () -> open(Tunables.DEFAULTS, WriteboostCache.Options.defaults()));
        assertTrue(e.getMessage().contains("version 9"), e.getMessage());
        assertEquals(w, cacheDev.bytesWritten.get());

        // format=true formats it
        wb = WriteboostCache.open("wb", backing, cacheDev, true, Tunables.DEFAULTS, WriteboostCache.Options.defaults(), null);
        write(wb, 0, new byte[4096]);
        wb.close();
        wb = null;

        // corrupt superblock
        cacheDev.corrupt(100);
        w = cacheDev.bytesWritten.get();
        e = assertThrows(InvalidArgumentException.class, () -> open(Tunables.DEFAULTS, WriteboostCache.Options.defaults()));
        assertTrue(e.getMessage().contains("corrupt"), e.getMessage());
        // repair first (it keeps the dirty blocks); format=true only after it, as the last resort
        assertTrue(e.getMessage().contains("run strata-tool check, then strata-tool repair"), e.getMessage());
        assertTrue(e.getMessage().indexOf("strata-tool repair") < e.getMessage().indexOf("format=true"), e.getMessage());
        assertEquals(w, cacheDev.bytesWritten.get());
        cacheDev.corrupt(100);

        // another backing device
        MemDevice otherBacking = new MemDevice("other", 32L * MIB);
        e = assertThrows(InvalidArgumentException.class,
                () -> WriteboostCache.open("wb", otherBacking, cacheDev, false, Tunables.DEFAULTS, WriteboostCache.Options.defaults(), null));
        assertTrue(e.getMessage().contains("backing device"), e.getMessage());
        assertEquals(w, cacheDev.bytesWritten.get());

        // a valid cache is never reformatted, even with format=true
        wb = WriteboostCache.open("wb", backing, cacheDev, true, Tunables.DEFAULTS, WriteboostCache.Options.defaults(), null);
        assertTrue(wb.recovered().dirtyRecords() > 0);
    }

    @Test
    void tunablesAreValidatedAndSwappedWhole() throws IOException {
        wb = open(Tunables.DEFAULTS, WriteboostCache.Options.defaults());
        wb.message("writeback_threshold", "30");
        assertEquals(30, wb.tunables().writebackThreshold());
        Tunables before = wb.tunables();
        for (String[] bad : new String[][] {{"writeback_threshold", "101"}, {"writeback_threshold", "x"},
                {"nr_max_batched_writeback", "0"}, {"bypass_threshold", "100"}, {"sequential_cutoff", "-1"},
                {"write_around", "maybe"}, {"writeback.controller", "bad name"}, {"no_such", "1"},
                {"writeback", "some"}, {"update_record_interval", "100000"}}) {
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> wb.message(bad[0], bad[1]),
                    Arrays.toString(bad));
            assertFalse(e.getMessage().contains("\n"));
        }
        assertEquals(before, wb.tunables(), "nothing changed");
        assertEquals("30", wb.status().get("writeback_threshold"));
        wb.message("bypass_threshold", "2M");
        assertEquals(2L << 20, wb.tunables().bypassThreshold());
    }

    @Test
    void recordUpdatesArePacedByTheClock() throws IOException {
        AtomicLong now = new AtomicLong(1_000_000_000L);
        wb = open(noBypass(), WriteboostCache.Options.defaults().manual().withClock(now::get));
        Random r = new Random(10);
        for (int i = 0; i < 600; i++) {
            write(wb, i * 4096L, random(r, 4096));
        }
        wb.flush();
        assertTrue(wb.writebackRunOnce());
        assertFalse(wb.recordUpdaterRunOnce(), "not due yet");
        now.addAndGet(TimeUnit.SECONDS.toNanos(61));
        assertTrue(wb.recordUpdaterRunOnce());
        assertFalse(wb.recordUpdaterRunOnce(), "nothing new");
        assertEquals("1", wb.status().get("record_updates"));
        assertFalse(wb.syncRunOnce() && false);
    }

    @Test
    void aCrashAfterTheFinalFlushRecoversFromHeadersOnceTheLogWentQuiet() throws IOException {
        long logBytes = 8L * Layout.MAX_DATA * 4096;
        // the last records of a fill ended by one flush are referred to by no later header: a
        // crash right after it must check their data (reads it all) ...
        assertTrue(bytesReadByRecoveryAfterACrash(false) >= logBytes, "without the durable mark the data is checked");
        // ... but once the log was quiet for a second, the durable mark says they are durable
        long read = bytesReadByRecoveryAfterACrash(true);
        assertTrue(read < logBytes / 50, "recovery read " + read + " bytes of a " + logBytes + "-byte log");
    }

    private long bytesReadByRecoveryAfterACrash(boolean quiet) throws IOException {
        backing = new MemDevice("backing", 64L * MIB);
        cacheDev = new MemDevice("cache", 17L * MIB);
        AtomicLong now = new AtomicLong(1_000_000_000L);
        wb = open(noBypass(), WriteboostCache.Options.defaults().manual().withClock(now::get));
        Random r = new Random(21);
        byte[] model = new byte[(int) backing.size()];
        for (int i = 0; i < 8 * Layout.MAX_DATA; i++) {
            long off = (long) ((i * 7919) % (model.length / 4096)) * 4096;
            byte[] d = random(r, 4096);
            write(wb, off, d);
            System.arraycopy(d, 0, model, (int) off, 4096);
        }
        wb.flush();
        assertFalse(wb.recordUpdaterRunOnce(), "no durable mark while the log may still be busy");
        if (quiet) {
            now.addAndGet(TimeUnit.SECONDS.toNanos(2));
            assertTrue(wb.recordUpdaterRunOnce(), "the durable mark is written once the log is quiet");
        }
        MemDevice cacheAfter = cacheDev.crash(new Random(1));
        MemDevice backingAfter = backing.crash(new Random(2));
        wb.close();
        backing = backingAfter;
        cacheDev = cacheAfter;
        wb = open(noBypass(), WriteboostCache.Options.defaults().manual());
        long read = cacheDev.bytesRead.get();
        verifyAll(model); // everything flushed survived, whichever way recovery checked it
        wb.close();
        wb = null;
        return read;
    }

    @Test
    void flushIsGroupCommitted() throws Exception {
        wb = open(noBypass(), WriteboostCache.Options.defaults().manual());
        int threads = 8;
        ExecutorService ex = Executors.newFixedThreadPool(threads);
        try {
            Future<?>[] f = new Future<?>[threads];
            for (int t = 0; t < threads; t++) {
                int id = t;
                f[t] = ex.submit(() -> {
                    Random r = new Random(id);
                    for (int i = 0; i < 200; i++) {
                        wb.write((id * 1000L + i) * 4096, ByteBuffer.wrap(random(r, 4096)), BlockDevice.FUA);
                    }
                    return null;
                });
            }
            for (Future<?> x : f) {
                x.get(60, TimeUnit.SECONDS);
            }
        } finally {
            ex.shutdownNow();
        }
        Map<String, String> s = wb.status();
        assertEquals(1600, Long.parseLong(s.get("flushes")));
        assertTrue(cacheDev.flushes.get() <= 1600, "cache flushes " + cacheDev.flushes.get());
    }

    @Test
    void concurrentVerifiedIoWhileWritebackRuns() throws Exception {
        wb = open(Tunables.DEFAULTS.with(Tunables.WRITEBACK_THRESHOLD, "100").with(Tunables.BYPASS_THRESHOLD, "128k"),
                WriteboostCache.Options.defaults());
        int threads = 6;
        long region = backing.size() / threads / 4096 * 4096;
        ExecutorService ex = Executors.newFixedThreadPool(threads);
        try {
            Future<?>[] f = new Future<?>[threads];
            for (int t = 0; t < threads; t++) {
                int id = t;
                f[t] = ex.submit(() -> {
                    Random r = new Random(100 + id);
                    byte[] model = new byte[(int) region];
                    long base = id * region;
                    for (int i = 0; i < 800; i++) {
                        int len = (1 + r.nextInt(r.nextInt(10) == 0 ? 400 : 16)) * 512;
                        int off = r.nextInt((int) (region - len) / 512) * 512;
                        if (r.nextBoolean()) {
                            byte[] d = random(r, len);
                            wb.write(base + off, ByteBuffer.wrap(d), r.nextInt(20) == 0 ? BlockDevice.FUA : 0);
                            System.arraycopy(d, 0, model, off, len);
                        } else {
                            assertArrayEquals(Arrays.copyOfRange(model, off, off + len), read(wb, base + off, len));
                        }
                    }
                    for (int off = 0; off < region; off += 65536) {
                        int n = (int) Math.min(65536, region - off);
                        assertArrayEquals(Arrays.copyOfRange(model, off, off + n), read(wb, base + off, n));
                    }
                    return null;
                });
            }
            for (Future<?> x : f) {
                x.get(100, TimeUnit.SECONDS);
            }
        } finally {
            ex.shutdownNow();
        }
        assertTrue(Long.parseLong(wb.status().get("written_back_blocks")) > 0);
    }

    @Test
    void cacheWriteErrorsSurfaceAndNothingHangs() throws IOException {
        wb = open(noBypass().with(Tunables.IO_TIMEOUT, "5000"), WriteboostCache.Options.defaults().manual());
        Random r = new Random(11);
        byte[] d = random(r, 4096);
        write(wb, 0, d);
        cacheDev.failWrite = o -> o >= Layout.FIRST_SEGMENT_OFFSET;
        assertThrows(IOException.class, () -> wb.flush());
        assertThrows(DeviceIOException.class, () -> write(wb, 8192, d));
        assertThrows(DeviceIOException.class, () -> read(wb, 0, 4096), "no read of possibly stale data");
        assertEquals("failed", wb.status().get("cache_state"));
        cacheDev.failWrite = o -> false;
        assertThrows(DeviceIOException.class, () -> wb.close(), "close reports that not everything is durable");
        assertTrue(wb.runningDaemons().isEmpty());
        wb = null;
    }

    @Test
    void backingErrorsSurfaceAndWritebackRetries() throws IOException {
        wb = open(noBypass(), WriteboostCache.Options.defaults().manual());
        Random r = new Random(12);
        byte[] d = random(r, 8192);
        write(wb, 0, d);
        wb.flush();
        backing.failRead = o -> o >= 16 * MIB;
        assertThrows(DeviceIOException.class, () -> read(wb, 16L * MIB, 4096));
        assertArrayEquals(d, read(wb, 0, 8192), "hits still served");
        backing.failWrite = o -> true;
        assertThrows(IOException.class, () -> wb.writebackAll());
        assertTrue(wb.status().get("writeback_error").contains("injected"));
        assertEquals(2, wb.dirtyBlocks());
        assertArrayEquals(d, read(wb, 0, 8192));
        backing.failWrite = o -> false;
        wb.writebackAll();
        assertEquals(0, wb.dirtyBlocks());
        assertArrayEquals(d, read(backing, 0, 8192));
    }

    @Test
    void aDirtyFullLogSurvivesARestart() throws IOException {
        wb = open(noBypass(), WriteboostCache.Options.defaults().manual());
        byte[] model = new byte[(int) backing.size()];
        Random r = new Random(13);
        // fill the log with dirty data (no writeback at all) until a write would have to wait
        int capacity = 16 * 255;
        for (int i = 0; i < capacity - 300; i++) {
            long blk = r.nextInt((int) (backing.size() / 4096));
            byte[] d = random(r, 4096);
            write(wb, blk * 4096, d);
            System.arraycopy(d, 0, model, (int) blk * 4096, 4096);
        }
        wb.close();
        wb = open(noBypass(), WriteboostCache.Options.defaults().manual());
        assertTrue(wb.dirtyBlocks() > 3000);
        verifyAll(model);
        wb.writebackAll();
        assertArrayEquals(model, read(backing, 0, model.length));
    }
}
