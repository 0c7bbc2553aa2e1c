package dev.strata.cache.writeboost.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.strata.api.BlockDevice;
import dev.strata.api.Requests;
import dev.strata.cache.writeboost.internal.format.Layout;
import dev.strata.cache.writeboost.internal.testing.MemDevice;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Without {@code buffers}, the log buffers follow the cache's size (4 below 512 MiB, 8 per
 * flusher from 1 GiB: larger log writes on large caches); an explicit count is kept; a large cache with the
 * chosen buffers writes, flushes and reopens with its data.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AutoBuffersTest {
    static final long MIB = 1 << 20;

    /** A sparse device of 4 KiB blocks in a map (a 1 GiB cache without 1 GiB of heap); flush is a no-op. */
    static final class SparseDevice implements BlockDevice {
        final long size;
        final Map<Long, byte[]> blocks = new HashMap<>();

        SparseDevice(long size) {
            this.size = size;
        }

        public long size() { return size; }
        public int blockSize() { return 4096; }

        public synchronized void read(long off, ByteBuffer dst) {
            Requests.check(size, off, dst.remaining());
            while (dst.hasRemaining()) {
                byte[] b = blocks.get(off >>> 12);
                int at = (int) (off & 4095);
                int n = Math.min(dst.remaining(), 4096 - at);
                if (b == null) {
                    dst.put(new byte[n]);
                } else {
                    dst.put(b, at, n);
                }
                off += n;
            }
        }

        public synchronized void write(long off, ByteBuffer src, int flags) {
            Requests.check(size, off, src.remaining());
            while (src.hasRemaining()) {
                byte[] b = blocks.computeIfAbsent(off >>> 12, k -> new byte[4096]);
                int at = (int) (off & 4095);
                int n = Math.min(src.remaining(), 4096 - at);
                src.get(b, at, n);
                off += n;
            }
        }

        public void flush() { }
        public void discard(long o, long l) { }
        public void writeZeroes(long o, long l, int f) { write(o, ByteBuffer.allocate((int) l), f); }
        public void close() { }
    }

    @Test
    void theCountFollowsTheSegments() {
        assertEquals(4, CacheOpener.autoBuffers(Layout.MIN_SEGMENTS, 3));
        assertEquals(4, CacheOpener.autoBuffers(499, 3));
        assertEquals(8, CacheOpener.autoBuffers(500, 3));
        assertEquals(8, CacheOpener.autoBuffers(999, 3));
        assertEquals(24, CacheOpener.autoBuffers(1000, 3));
        assertEquals(24, CacheOpener.autoBuffers(1023, 3)); // a device of exactly 1 GiB
        assertEquals(24, CacheOpener.autoBuffers(1L << 30, 3));
        // 8 per flusher from 1 GiB: each of the writes in flight still covers up to 4 MiB
        assertEquals(16, CacheOpener.autoBuffers(1000, 2));
        assertEquals(8, CacheOpener.autoBuffers(1000, 1));
        assertEquals(8, CacheOpener.autoBuffers(999, 1));
    }

    @Test
    void aSmallCacheKeepsFourAnExplicitCountIsKept() throws Exception {
        MemDevice backing = new MemDevice("backing", 64 * MIB);
        WriteboostCache wb = WriteboostCache.open("wb", backing, new MemDevice("cache", 33 * MIB), false,
                FlusherCoalescingTest.T, WriteboostCache.Options.defaults().manual(), null);
        try {
            assertEquals(4, wb.buffers());
        } finally {
            wb.close();
        }
        WriteboostCache six = WriteboostCache.open("wb", backing, new MemDevice("cache", 33 * MIB), false,
                FlusherCoalescingTest.T, WriteboostCache.Options.defaults().manual().withBuffers(6), null);
        try {
            assertEquals(6, six.buffers());
        } finally {
            six.close();
        }
    }

    @Test
    void aLargeCacheGetsEightPerFlusherAndKeepsItsData() throws Exception {
        SparseDevice backing = new SparseDevice(4096 * MIB);
        SparseDevice cache = new SparseDevice(1024 * MIB);
        WriteboostCache wb = WriteboostCache.open("wb", backing, cache, false, FlusherCoalescingTest.T,
                WriteboostCache.Options.defaults().manual(), null);
        int n = 20 * 256; // 20 segments of 4 KiB blocks: more than the buffers, so they are reused
        try {
            assertEquals(8 * WriteboostCache.Options.FLUSHERS, wb.buffers());
            for (int i = 0; i < n; i++) {
                wb.write(FlusherCoalescingTest.blockOf(i) * 4096, ByteBuffer.wrap(FlusherCoalescingTest.content(i)), 0);
            }
            wb.flush();
        } finally {
            wb.close();
        }
        assertEquals(0, backing.blocks.size(), "nothing written back (manual)");
        WriteboostCache re = WriteboostCache.open("wb", backing, cache, false, FlusherCoalescingTest.T,
                WriteboostCache.Options.defaults().manual(), null);
        try {
            for (int i = 0; i < n; i++) {
                ByteBuffer got = ByteBuffer.allocate(4096);
                re.read(FlusherCoalescingTest.blockOf(i) * 4096, got);
                assertArrayEquals(FlusherCoalescingTest.content(i), got.array(), "block " + i);
            }
        } finally {
            re.close();
        }
    }
}
