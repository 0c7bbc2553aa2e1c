package dev.strata.cache.support.buffer;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;

import org.junit.jupiter.api.Test;

class BuffersTest {
    @Test
    void everySizeIsAlignedAndWhole() {
        // 244 blocks of 512 bytes (a writecache batch with 512-byte blocks) failed with
        // "newLimit > capacity: (124928 > 122880)": found by the crash model's floor
        for (int size : new int[] {512, 4096, 4096 + 512, 124928, 1 << 20, (1 << 20) + 512}) {
            ByteBuffer b = Buffers.aligned(size);
            assertEquals(size, b.capacity(), "size " + size);
            assertEquals(size, b.remaining(), "size " + size);
            assertEquals(0, b.alignmentOffset(0, Buffers.ALIGNMENT), "size " + size);
        }
    }
}
