package dev.strata.cache.support.buffer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** Buffers for device I/O. */
public final class Buffers {
    /** The alignment O_DIRECT devices need (and every cache's block size is a multiple of). */
    public static final int ALIGNMENT = 4096;

    private Buffers() {
    }

    /** A direct buffer aligned to 4096 bytes (O_DIRECT devices need no bounce copy), little-endian. */
    public static ByteBuffer aligned(int size) {
        // alignedSlice rounds the end down to the alignment too: allocate whole aligned units, or
        // a size that is not a multiple of 4096 (512-byte cache blocks) gets a slice too short
        int whole = (size + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
        return ByteBuffer.allocateDirect(whole + ALIGNMENT).alignedSlice(ALIGNMENT).limit(size).slice()
                .order(ByteOrder.LITTLE_ENDIAN);
    }
}
