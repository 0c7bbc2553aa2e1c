package dev.strata.cache.writeboost.internal.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.api.InvalidArgumentException;
import dev.strata.cache.writeboost.internal.testing.MemDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code cache:replace}'s two hooks on writeboost: a suspended cache moves onto a copy of only its
 * live extents (the metadata and the segments after the reclaimed one) with its in-memory state, and
 * serves and logs there; the copy's other bytes — here a stale copy of the same log, the worst
 * garbage, with valid headers of this cache — are never taken for data, neither while it runs nor
 * by a recovery over the copy.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MovableCacheDeviceTest {
    static final int MIB = 1 << 20;
    static final int BS = 4096;
    static final int BLOCKS = 4000; // of the backing device that the test writes
    final MemDevice backing = new MemDevice("backing", 64L * MIB);
    final MemDevice cacheDev = new MemDevice("cache", 33L * MIB);
    final int[] version = new int[BLOCKS];
    final Random rnd = new Random(42);

    static ByteBuffer block(long b, int v) {
        ByteBuffer buf = ByteBuffer.allocate(BS);
        for (int i = 0; i < BS; i += 8) {
            buf.putLong(i, b * 1_000_003L + v * 7919L + i);
        }
        return buf;
    }

    private void writeSome(BlockDevice d, int n) throws IOException {
        for (int i = 0; i < n; i++) {
            int b = rnd.nextInt(BLOCKS);
            version[b]++;
            d.write((long) b * BS, block(b, version[b]), 0);
        }
        d.flush();
    }

    private void verify(BlockDevice d, String when) throws IOException {
        ByteBuffer got = ByteBuffer.allocate(BS);
        for (int b = 0; b < BLOCKS; b++) {
            d.read((long) b * BS, got.clear());
            ByteBuffer want = version[b] == 0 ? ByteBuffer.allocate(BS) : block(b, version[b]);
            assertEquals(want.rewind(), got.flip(), when + ": block " + b + " (version " + version[b] + ")");
        }
    }

    private static void copy(BlockDevice from, BlockDevice to, long off, long len) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(MIB);
        for (long p = off; p < off + len; p += MIB) {
            int n = (int) Math.min(MIB, off + len - p);
            buf.clear().limit(n);
            from.read(p, buf);
            to.write(p, buf.flip(), 0);
        }
        to.flush();
    }

    @Test
    void aSuspendedCacheMovesOntoACopyOfItsLiveExtentsAndRecoversFromIt() throws Exception {
        Tunables t = Tunables.DEFAULTS.with(Tunables.BYPASS_THRESHOLD, "0").with(Tunables.SEQUENTIAL_CUTOFF, "0")
                .with(Tunables.WRITEBACK_THRESHOLD, "0");
        WriteboostCache wb = WriteboostCache.open("wb", backing, cacheDev, false, t,
                WriteboostCache.Options.defaults().manual(), null);
        writeSome(wb, 3000);
        // the stale copy: the same log as it was now (valid headers of this cache), later overwritten
        // only where the live extents say
        MemDevice target = new MemDevice("copy", 40L * MIB);
        copy(cacheDev, target, 0, cacheDev.size());
        wb.writebackAll();
        wb.updateRecord(Long.MAX_VALUE); // everything written back is reclaimed: the log's start moves on
        // ≈ 24 more segments of 32 (no background writeback here: the log must not fill): past the
        // device's end, the head wraps onto the reclaimed segments
        writeSome(wb, 4500);
        writeSome(wb, 1500);

        wb.suspend();
        long[] live = wb.liveCacheExtents();
        long liveBytes = 0;
        for (int i = 0; i < live.length; i += 2) {
            assertEquals(0, live[i] % MIB, "extents on segment boundaries");
            copy(cacheDev, target, live[i], live[i + 1]);
            liveBytes += live[i + 1];
        }
        assertTrue(liveBytes < cacheDev.size(), "not the whole device: " + liveBytes);
        assertEquals(0, live[0], "the metadata area first");
        assertTrue(live.length >= 6, "the log wraps: the used segments are two ranges " + java.util.Arrays.toString(live));
        assertThrows(InvalidArgumentException.class, () -> wb.moveCacheDevice(new MemDevice("tiny", 8L * MIB)));
        long oldWrites = cacheDev.writes.get();
        assertTrue(wb.moveCacheDevice(target));
        wb.resume();
        verify(wb, "moved");
        writeSome(wb, 500);
        verify(wb, "moved, written");
        long dirty = wb.dirtyBlocks();
        wb.close();
        assertEquals(oldWrites, cacheDev.writes.get(), "the old device is not written after the move");

        // a restart over the copy: recovery reads its log, ignoring the stale records around it
        WriteboostCache again = WriteboostCache.open("wb", backing, target, false, t,
                WriteboostCache.Options.defaults().manual(), null);
        try {
            assertEquals(dirty, again.dirtyBlocks(), "the same dirty blocks after recovery over the copy");
            verify(again, "recovered from the copy");
            again.writebackAll();
            assertEquals(0, again.dirtyBlocks());
        } finally {
            again.close();
        }
        verify(backing, "written back from the copy");
    }

    @Test
    void onlyASuspendedCacheMoves() throws Exception {
        WriteboostCache wb = WriteboostCache.open("wb", backing, cacheDev, false, Tunables.DEFAULTS,
                WriteboostCache.Options.defaults().manual(), null);
        try {
            MemDevice target = new MemDevice("copy", 33L * MIB);
            assertThrows(IllegalStateException.class, () -> wb.moveCacheDevice(target));
            wb.suspend();
            assertTrue(wb.moveCacheDevice(target));
            assertTrue(wb.moveCacheDevice(cacheDev), "and back");
            wb.resume();
            writeSome(wb, 100);
            verify(wb, "back on the first device");
            assertFalse(target.writes.get() > 0, "nothing reached the device it left");
        } finally {
            wb.close();
        }
    }
}
