package dev.strata.cache.support.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.strata.api.BlockDevice;
import dev.strata.api.InvalidArgumentException;

class CacheWindowTest {
    /** A RAM device of {@code size} bytes with 4096-byte blocks. */
    static final class Ram implements BlockDevice {
        final byte[] bytes;

        Ram(int size) {
            bytes = new byte[size];
        }

        @Override
        public long size() {
            return bytes.length;
        }

        @Override
        public int blockSize() {
            return 4096;
        }

        @Override
        public void read(long offset, ByteBuffer dst) {
            dst.put(bytes, (int) offset, dst.remaining());
        }

        @Override
        public void write(long offset, ByteBuffer src, int flags) {
            src.get(bytes, (int) offset, src.remaining());
        }

        @Override
        public void flush() {
        }

        @Override
        public void discard(long offset, long length) {
        }

        @Override
        public void writeZeroes(long offset, long length, int flags) {
            java.util.Arrays.fill(bytes, (int) offset, (int) (offset + length), (byte) 0);
        }

        @Override
        public void close() {
        }
    }

    @Test
    void theWindowIsTheFirstCacheSizeBytesRoundedDownToTheBlockSize() throws Exception {
        Ram ram = new Ram(1 << 20);
        BlockDevice w = CacheWindow.of("writecache", Map.of("cache_size", "300000"), ram);
        assertEquals(299008, w.size()); // 73 blocks of 4096
        assertEquals(4096, w.blockSize());
        byte[] sector = new byte[512];
        sector[2] = 3;
        w.write(4096, ByteBuffer.wrap(sector), 0);
        assertEquals(3, ram.bytes[4098], "passed on at the same offset");
        assertThrows(IllegalArgumentException.class, () -> w.write(299008, ByteBuffer.allocate(512), 0));
        assertThrows(IllegalArgumentException.class, () -> w.read(298496, ByteBuffer.allocate(1024)));
    }

    @Test
    void noCacheSizeOrTheWholeDeviceIsTheDeviceItself() {
        Ram ram = new Ram(1 << 20);
        assertSame(ram, CacheWindow.of("readcache", Map.of(), ram));
        assertSame(ram, CacheWindow.of("readcache", Map.of("cache_size", "1M"), ram));
    }

    @Test
    void aWindowLargerThanTheDeviceOrNotASizeIsOneLine() {
        Ram ram = new Ram(1 << 20);
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> CacheWindow.of("readcache", Map.of("cache_size", "2M"), ram));
        assertEquals("readcache: cache_size=2M is larger than the cache device (1.0 MiB); grow the cache device "
                + "first, or give a smaller cache_size", e.getMessage());
        assertEquals("writecache: cache_size=lots is not a size; use e.g. 512M or 2G",
                assertThrows(InvalidArgumentException.class, () -> CacheWindow.parse("writecache", "lots")).getMessage());
        assertEquals("writecache: cache_size=0 is too small; use e.g. 512M or 2G",
                assertThrows(InvalidArgumentException.class, () -> CacheWindow.parse("writecache", "0")).getMessage());
    }
}
