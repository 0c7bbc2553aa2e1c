package dev.strata.core.internal;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Which chunks of a device were written since they were last taken ({@code cache:replace}'s
 * record of what its copy must do again). A write marks its chunks <em>after</em> it completed;
 * the copier takes (clears) a chunk's mark <em>before</em> it reads the chunk. So a write either
 * completed before the take — the read that follows sees it — or it marks the chunk again and
 * the chunk is copied once more: no completed write is ever missed.
 */
final class WriteTracker {
    private final int shift;
    private final long chunks;
    private final AtomicLongArray bits;

    /** @param chunkBytes a power of two */
    WriteTracker(long size, int chunkBytes) {
        this.shift = Integer.numberOfTrailingZeros(chunkBytes);
        this.chunks = (size + chunkBytes - 1) >>> shift;
        this.bits = new AtomicLongArray((int) ((chunks + 63) >>> 6));
    }

    long chunks() {
        return chunks;
    }

    int chunkBytes() {
        return 1 << shift;
    }

    /** Marks every chunk that {@code [offset, offset + length)} touches. */
    void mark(long offset, long length) {
        if (length <= 0 || offset < 0) {
            return;
        }
        long last = Math.min(chunks - 1, (offset + length - 1) >>> shift);
        for (long c = offset >>> shift; c <= last; c++) {
            int i = (int) (c >>> 6);
            long bit = 1L << (c & 63);
            long v = bits.get(i);
            while ((v & bit) == 0 && !bits.compareAndSet(i, v, v | bit)) {
                v = bits.get(i);
            }
        }
    }

    void markAll() {
        mark(0, chunks << shift);
    }

    /** Clears chunk {@code c}'s mark; whether it was marked. */
    boolean take(long c) {
        int i = (int) (c >>> 6);
        long bit = 1L << (c & 63);
        for (;;) {
            long v = bits.get(i);
            if ((v & bit) == 0) {
                return false;
            }
            if (bits.compareAndSet(i, v, v & ~bit)) {
                return true;
            }
        }
    }

    /** How many chunks are marked now. */
    long marked() {
        long n = 0;
        for (int i = 0; i < bits.length(); i++) {
            n += Long.bitCount(bits.get(i));
        }
        return n;
    }
}
