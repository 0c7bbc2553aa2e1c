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
        return ByteBuffer.allocateDirect(size + ALIGNMENT).alignedSlice(ALIGNMENT).limit(size).slice()
                .order(ByteOrder.LITTLE_ENDIAN);
    }
}
