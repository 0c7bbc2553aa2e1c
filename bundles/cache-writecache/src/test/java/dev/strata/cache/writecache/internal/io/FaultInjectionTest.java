package dev.strata.cache.writecache.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceIOException;
import dev.strata.cache.writecache.internal.recovery.Recovery;
import dev.strata.testsupport.crash.CrashableDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Errors of either device surface as I/O errors naming the device, nothing hangs, and nothing
 * stale is ever returned or written back: a cache device that failed a write latches the target
 * into failing every request; a reopen recovers what was committed.
 */
@Timeout(60)
class FaultInjectionTest {
    static final int BS = 4096;
    final CrashableDevice backingDisk = new CrashableDevice("backing", 1 << 20, 4096);
    final CrashableDevice cacheDisk = new CrashableDevice("cache", WritecacheSubject.cacheBytes(32, BS), 4096);
    final Recorder backing = new Recorder("backing", backingDisk);
    final Recorder cache = new Recorder("cache", cacheDisk);

    WritecacheTarget open(Options options) throws IOException {
        return Recovery.open("wc", backing, cache, null, 0, false, Tunables.DEFAULTS, options);
    }

    static ByteBuffer data(int blocks, int seed) {
        byte[] b = new byte[blocks * BS];
        new Random(seed).nextBytes(b);
        return ByteBuffer.wrap(b);
    }

    static byte[] read(BlockDevice d, long off, int len) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(len);
        d.read(off, b);
        return b.array();
    }

    @Test
    void aFailedCacheDataWriteLatchesAndAReopenRecoversTheCommittedData() throws IOException {
        WritecacheTarget t = open(Options.defaults().manual());
        t.write(0, data(2, 1), 0);
        t.flush();
        cache.failing = "W";
        DeviceIOException e = assertThrows(DeviceIOException.class, () -> t.write(0, data(2, 2), 0));
        assertTrue(e.getMessage().contains("injected W error"), e.getMessage());
        cache.failing = "";
        DeviceIOException later = assertThrows(DeviceIOException.class, () -> read(t, 0, BS));
        assertTrue(later.getMessage().contains("the cache device failed earlier"), later.getMessage());
        assertThrows(DeviceIOException.class, t::flush);
        assertEquals("1", t.status().get("error"));
        assertThrows(DeviceIOException.class, t::close);
        try (WritecacheTarget again = open(Options.defaults().manual())) {
            assertArrayEquals(data(2, 1).array(), read(again, 0, 2 * BS));
        }
    }

    @Test
    void aFailedCommitFailsTheFlushAndTheFuaWrite() throws IOException {
        WritecacheTarget t = open(Options.defaults().manual());
        t.write(0, data(1, 1), 0);
        cache.failing = "F";
        assertThrows(DeviceIOException.class, t::flush);
        assertThrows(DeviceIOException.class, () -> t.write(BS, data(1, 2), BlockDevice.FUA));
        cache.failing = "";
        assertThrows(DeviceIOException.class, t::close);
    }

    @Test
    void aWritebackCancelledInItsIoIsNotAnError() throws Exception {
        // Ctrl-C of cache:writeback reaches the batch's backing flush: it had counted in
        // writeback_error, and cache:stats said "writeback failing" with nothing in the log
        try (WritecacheTarget t = open(Options.defaults().manual())) {
            t.write(0, data(4, 1), 0);
            backing.interrupting = "F";
            assertThrows(java.io.InterruptedIOException.class, () -> t.writebackAll((d, w) -> { }));
            assertTrue(Thread.interrupted(), "the interrupt is kept");
            backing.interrupting = "";
            assertEquals("0", t.status().get("writeback_error"));
            assertEquals(4, t.dirtyBlocks());
        }
    }

    @Test
    void backingErrorsSurfaceAndBlocksStayDirty() throws Exception {
        try (WritecacheTarget t = open(Options.defaults().manual())) {
            t.write(0, data(4, 1), 0);
            backing.failing = "W";
            assertThrows(DeviceIOException.class, () -> t.writebackAll((d, w) -> { }));
            assertEquals(4, t.dirtyBlocks());
            assertEquals("1", t.status().get("writeback_error"));
            assertEquals("0", t.status().get("under_writeback"));
            assertArrayEquals(data(4, 1).array(), read(t, 0, 4 * BS), "still served from the cache");
            backing.failing = "R";
            assertThrows(DeviceIOException.class, () -> read(t, 10 * BS, BS));
            backing.failing = "F";
            assertThrows(DeviceIOException.class, () -> t.writebackAll((d, w) -> { }));
            assertEquals(4, t.dirtyBlocks(), "not freed before the backing device is durable");
            backing.failing = "";
            t.writebackAll((d, w) -> { });
            assertEquals(0, t.dirtyBlocks());
            assertArrayEquals(data(4, 1).array(), read(backingDisk, 0, 4 * BS));
        }
    }

    @Test
    void aFailedForwardedFlushIsRetriedByTheNextFlush() throws IOException {
        try (WritecacheTarget t = open(Options.defaults().manual())) {
            t.write(0, data(32, 1), 0); // full
            t.write(40 * BS, data(1, 2), 0); // around
            backing.failing = "F";
            assertThrows(DeviceIOException.class, t::flush);
            backing.failing = "";
            backing.take();
            t.flush();
            assertTrue(backing.take().contains("backing F"));
        }
    }

    @Test
    void aCorruptMetadataSectorStopsTheOpenWithOneLine() throws IOException {
        try (WritecacheTarget t = open(Options.defaults().manual())) {
            t.write(0, data(1, 1), 0);
        }
        ByteBuffer b = ByteBuffer.allocate(512);
        cacheDisk.read(4096, b);
        b.put(40, (byte) (b.get(40) ^ 1));
        cacheDisk.write(4096, b.clear(), 0);
        IOException e = assertThrows(IOException.class, () -> open(Options.defaults().manual()));
        assertEquals("writecache: the cache device's metadata sector 0 is corrupt (bad magic, CRC or index);"
                + " the committed cache contents cannot be recovered safely", e.getMessage());
    }

    @Test
    void fuaDataWritesOnThePoolFailCleanly() throws IOException {
        WritecacheTarget t = open(Options.defaults().manual());
        cache.failing = "W";
        assertThrows(IOException.class, () -> t.write(0, data(3, 1), BlockDevice.FUA));
        cache.failing = "";
        assertThrows(DeviceIOException.class, t::close);
    }
}
