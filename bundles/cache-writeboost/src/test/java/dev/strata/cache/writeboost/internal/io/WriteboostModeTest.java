package dev.strata.cache.writeboost.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.api.CacheMode;
import dev.strata.api.InvalidArgumentException;
import dev.strata.cache.writeboost.internal.testing.MemDevice;
import dev.strata.testsupport.load.VerifiedIo;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The four cache modes of writeboost: where data lands (counted on the devices), switching, bad input. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class WriteboostModeTest {
    static final int MIB = 1 << 20;
    static final int BS = 4096;
    MemDevice backing = new MemDevice("backing", 64L * MIB);
    MemDevice cacheDev = new MemDevice("cache", 17L * MIB);
    WriteboostCache wb;

    @AfterEach
    void close() throws IOException {
        if (wb != null) {
            wb.close();
        }
    }

    /** Daemons off: nothing is written back or injected unless the test asks. */
    WriteboostCache open(String mode) throws IOException {
        Tunables t = Tunables.DEFAULTS.with(Tunables.BYPASS_THRESHOLD, "0").with(Tunables.SEQUENTIAL_CUTOFF, "0")
                .with(Tunables.CACHE_MODE, mode);
        wb = WriteboostCache.open("wb", backing, cacheDev, false, t, WriteboostCache.Options.defaults().manual(), null);
        return wb;
    }

    static byte[] random(long seed, int n) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    static byte[] read(BlockDevice d, long off, int len) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(len);
        d.read(off, b);
        return b.array();
    }

    long status(String key) {
        return Long.parseLong(wb.status().get(key));
    }

    @Test
    void writethroughWritesTheBackingDeviceAndCachesCleanCopiesThatReadsHit() throws IOException {
        open("writethrough");
        assertEquals(CacheMode.WRITETHROUGH, wb.mode());
        byte[] data = random(1, 16 * BS);
        wb.write(8 * BS, ByteBuffer.wrap(data), 0);
        assertArrayEquals(data, read(backing, 8 * BS, data.length), "the backing device has the data at once");
        assertEquals(0, wb.dirtyBlocks(), "nothing dirty in writethrough");
        wb.injectorRunOnce();
        assertEquals(16, wb.cachedBlocks(), "every written block is cached, clean");
        assertEquals(0, wb.dirtyBlocks());
        long backingReads = backing.reads.get();
        assertArrayEquals(data, read(wb, 8 * BS, data.length));
        assertEquals(backingReads, backing.reads.get(), "reads hit the cache");
        assertEquals(16, status("read_hits"));

        // an overwrite replaces the cached copy: no stale read, before or after injection
        byte[] again = random(2, 4 * BS);
        wb.write(10 * BS, ByteBuffer.wrap(again), 0);
        assertArrayEquals(again, read(wb, 10 * BS, again.length));
        wb.injectorRunOnce();
        assertArrayEquals(again, read(wb, 10 * BS, again.length));
        assertArrayEquals(again, read(backing, 10 * BS, again.length));
        assertEquals(0, wb.dirtyBlocks());
    }

    @Test
    void writethroughFuaAndFlushMakeTheBackingWriteDurable() throws IOException {
        open("writethrough");
        long flushes = backing.flushes.get();
        wb.write(0, ByteBuffer.wrap(random(3, BS)), BlockDevice.FUA);
        assertTrue(backing.flushes.get() > flushes, "FUA flushes the backing device");
        flushes = backing.flushes.get();
        wb.write(BS, ByteBuffer.wrap(random(4, BS)), 0);
        wb.flush();
        assertTrue(backing.flushes.get() > flushes, "FLUSH flushes the backing device");
    }

    @Test
    void passthroughNeitherReadsNorWritesTheCache() throws IOException {
        open("writeback");
        byte[] old = random(5, 4 * BS);
        wb.write(0, ByteBuffer.wrap(old), 0); // cached, dirty
        wb.writebackAll();
        wb.setMode(CacheMode.PASSTHROUGH);
        assertEquals(CacheMode.PASSTHROUGH, wb.mode());
        long cacheReads = cacheDev.reads.get();
        long cacheWrites = cacheDev.writes.get();
        byte[] data = random(6, 8 * BS);
        wb.write(64 * BS, ByteBuffer.wrap(data), 0);
        assertArrayEquals(data, read(wb, 64 * BS, data.length));
        assertArrayEquals(old, read(wb, 0, old.length));
        wb.injectorRunOnce();
        wb.flush();
        assertEquals(cacheReads, cacheDev.reads.get(), "no read of the cache device");
        assertEquals(cacheWrites, cacheDev.writes.get(), "no write of the cache device");
        assertArrayEquals(data, read(backing, 64 * BS, data.length));
        assertEquals(2, status("reads_passed_through"));
        assertEquals(0, wb.dirtyBlocks());

        // a write over a cached (clean) copy drops it: no stale read later, here or in writeback
        byte[] fresh = random(7, 4 * BS);
        wb.write(0, ByteBuffer.wrap(fresh), 0);
        assertArrayEquals(fresh, read(wb, 0, fresh.length));
        wb.setMode(CacheMode.WRITEBACK);
        assertArrayEquals(fresh, read(wb, 0, fresh.length));
    }

    @Test
    void aModeWithoutDirtyDataIsRefusedWhileDirtyButStopsNewDirtyDataAtOnce() throws IOException {
        open("writeback");
        wb.write(0, ByteBuffer.wrap(random(8, 4 * BS)), 0);
        assertEquals(4, wb.dirtyBlocks());
        for (CacheMode m : List.of(CacheMode.WRITETHROUGH, CacheMode.PASSTHROUGH)) {
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> wb.setMode(m));
            assertTrue(e.getMessage().contains("4 blocks are dirty"), e.getMessage());
            assertFalse(e.getMessage().contains("\n"));
            assertEquals(m, wb.mode(), "new writes already stay clean");
            wb.write(100 * BS, ByteBuffer.wrap(random(9, BS)), 0);
            assertEquals(4, wb.dirtyBlocks(), "a write in " + m.label() + " adds no dirty block");
        }
        wb.writebackAll();
        wb.setMode(CacheMode.WRITETHROUGH);
        wb.setMode(CacheMode.WRITEBACK);
        wb.write(200 * BS, ByteBuffer.wrap(random(10, BS)), 0);
        assertEquals(1, wb.dirtyBlocks(), "writeback caches writes again");
    }

    @Test
    void badModesAreRefusedInOneLineAndEveryModeIsSupported() throws IOException {
        open("writeback");
        assertEquals(Set.of(CacheMode.values()), wb.supportedModes());
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> wb.message(Tunables.CACHE_MODE, "fast"));
        assertEquals("writeboost: cache_mode=fast is not a mode; use writeback, writethrough, writearound or passthrough",
                e.getMessage());
        assertEquals(CacheMode.WRITEBACK, wb.mode());
        assertThrows(InvalidArgumentException.class, () -> Tunables.DEFAULTS.with(Tunables.CACHE_MODE, "write-through"));
    }

    @Test
    void theModeIsATunableSoItSurvivesARestart() throws IOException {
        open("writeback");
        wb.setMode(CacheMode.WRITETHROUGH);
        assertEquals("writethrough", wb.tunables().asMap().get(Tunables.CACHE_MODE));
        assertEquals("writethrough", wb.status().get(Tunables.CACHE_MODE));
        // the old spelling still means writearound, and cache_mode replaces it
        wb.message(Tunables.WRITE_AROUND, "true");
        assertEquals(CacheMode.WRITEAROUND, wb.mode());
        wb.setMode(CacheMode.PASSTHROUGH);
        assertEquals("false", wb.tunables().asMap().get(Tunables.WRITE_AROUND));
        Tunables stored = Tunables.DEFAULTS.withAll(wb.tunables().asMap());
        wb.close();
        wb = WriteboostCache.open("wb", backing, cacheDev, false, stored, WriteboostCache.Options.defaults().manual(), null);
        assertEquals(CacheMode.PASSTHROUGH, wb.mode());
    }

    /** Like cache:mode: set, and drain and set again while the cache is dirty. */
    static void switchTo(WriteboostCache wb, CacheMode m) throws IOException, InterruptedException {
        for (int attempt = 0;; attempt++) {
            try {
                wb.setMode(m);
                if (m.holdsDirtyData() || wb.dirtyBlocks() == 0) {
                    return;
                }
            } catch (InvalidArgumentException e) {
                if (attempt > 10) {
                    throw e;
                }
            }
            wb.writebackAll((dirty, done) -> { });
        }
    }

    @Test
    void switchingModesUnderConcurrentVerifiedIoLosesNothing() throws Exception {
        Tunables t = Tunables.DEFAULTS.with(Tunables.READ_CACHE_THRESHOLD, "8");
        wb = WriteboostCache.open("wb", backing, cacheDev, false, t, WriteboostCache.Options.defaults(), null);
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            VerifiedIo io = new VerifiedIo(List.of(wb), 3, 256).start(pool);
            List<CacheMode> cycle = List.of(CacheMode.WRITETHROUGH, CacheMode.WRITEBACK, CacheMode.PASSTHROUGH,
                    CacheMode.WRITETHROUGH, CacheMode.WRITEAROUND, CacheMode.PASSTHROUGH, CacheMode.WRITEBACK);
            for (int round = 0; round < 3; round++) {
                for (CacheMode m : cycle) {
                    io.awaitOps(300);
                    switchTo(wb, m);
                    assertEquals(m, wb.mode());
                }
            }
            io.awaitOps(300);
            io.stop();
            assertEquals(0, io.errors.get(), io.summary());
            assertEquals(0, io.mismatches.get(), io.summary());
            assertEquals(0, io.verifyAll(wb), io.summary());
            switchTo(wb, CacheMode.PASSTHROUGH);
            assertEquals(0, io.verifyAll(backing), "drained into passthrough: the backing device holds everything");
        } finally {
            pool.shutdownNow();
        }
    }
}
