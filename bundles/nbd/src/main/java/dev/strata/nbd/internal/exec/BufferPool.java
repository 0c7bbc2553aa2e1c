package dev.strata.nbd.internal.exec;

import java.nio.ByteBuffer;

/**
 * Direct, 4 KiB-aligned buffers in power-of-two size classes from 4 KiB to 32 MiB, recycled so
 * that steady-state I/O allocates nothing. Alignment lets O_DIRECT devices use them without a
 * bounce copy. At most {@code budget} bytes are kept idle; beyond that, released buffers are
 * dropped for the GC.
 */
public final class BufferPool {
    private static final int MIN_SHIFT = 12;
    private static final int MAX_SHIFT = 25;
    private static final int ALIGN = 4096;

    private final ByteBuffer[][] free = new ByteBuffer[MAX_SHIFT - MIN_SHIFT + 1][];
    private final int[] count = new int[MAX_SHIFT - MIN_SHIFT + 1];
    private final long budget;
    private long idleBytes;

    public BufferPool(long budget) {
        this.budget = budget;
        for (int i = 0; i < free.length; i++) {
            free[i] = new ByteBuffer[16];
        }
    }

    /** A buffer with position 0 and limit {@code size} (at most 32 MiB). */
    public ByteBuffer acquire(int size) {
        int cls = sizeClass(size);
        ByteBuffer b = null;
        synchronized (this) {
            if (count[cls] > 0) {
                b = free[cls][--count[cls]];
                free[cls][count[cls]] = null;
                idleBytes -= b.capacity();
            }
        }
        if (b == null) {
            int cap = 1 << (cls + MIN_SHIFT);
            b = ByteBuffer.allocateDirect(cap + ALIGN).alignedSlice(ALIGN).limit(cap).slice();
        }
        b.clear().limit(size);
        return b;
    }

    /** Returns a buffer obtained from {@link #acquire}. */
    public void release(ByteBuffer b) {
        int cap = b.capacity();
        int cls = Integer.numberOfTrailingZeros(cap) - MIN_SHIFT;
        if (Integer.bitCount(cap) != 1 || cls < 0 || cls >= free.length) {
            return;
        }
        synchronized (this) {
            if (idleBytes + cap > budget) {
                return;
            }
            if (count[cls] == free[cls].length) {
                free[cls] = java.util.Arrays.copyOf(free[cls], count[cls] * 2);
            }
            free[cls][count[cls]++] = b;
            idleBytes += cap;
        }
    }

    static int sizeClass(int size) {
        if (size <= 1 << MIN_SHIFT) {
            return 0;
        }
        int shift = 32 - Integer.numberOfLeadingZeros(size - 1);
        if (shift > MAX_SHIFT) {
            throw new IllegalArgumentException("buffer of " + size + " bytes is larger than 32 MiB");
        }
        return shift - MIN_SHIFT;
    }
}
