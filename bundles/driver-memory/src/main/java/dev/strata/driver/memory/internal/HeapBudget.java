package dev.strata.driver.memory.internal;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The heap that every {@code memory} device of one factory may fill together. A memory device is
 * sparse (a 64 GiB one costs nothing until written), so its size alone says nothing about the
 * heap it will take; without a limit, writes that fill the heap end in an OutOfMemoryError in
 * whatever thread allocates next (the console, a cache's writeback, an NBD worker) and the whole
 * framework stops. With it, the write that would cross the limit fails as an I/O error of that
 * device, and everything else runs on.
 *
 * <p>The limit leaves a quarter of the maximum heap (at least 256 MiB) for the rest of Strata:
 * caches' indexes, NBD request buffers, the shell.
 */
final class HeapBudget {
    static final long MIN_RESERVE = 256L << 20;

    private final long limit;
    private final AtomicLong used = new AtomicLong();

    HeapBudget(long limit) {
        this.limit = Math.max(0, limit);
    }

    /** The budget of this JVM's heap ({@code -Xmx}). */
    static HeapBudget ofHeap() {
        long max = Runtime.getRuntime().maxMemory();
        return new HeapBudget(max - Math.max(MIN_RESERVE, max / 4));
    }

    /** Takes {@code bytes}, or nothing and returns false if that would cross the limit. */
    boolean take(long bytes) {
        while (true) {
            long u = used.get();
            if (u + bytes > limit) {
                return false;
            }
            if (used.compareAndSet(u, u + bytes)) {
                return true;
            }
        }
    }

    void give(long bytes) {
        used.addAndGet(-bytes);
    }

    long limit() {
        return limit;
    }

    long used() {
        return used.get();
    }
}
