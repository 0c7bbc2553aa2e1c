package dev.strata.driver.direct.internal;

import dev.strata.api.DeviceTimeoutException;
import java.nio.ByteBuffer;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A bounded pool of direct buffers of one size, aligned for O_DIRECT. Buffers are made on demand
 * up to {@code max} and reused; when all are in use, {@link #take} waits (with a deadline) for
 * one to come back.
 *
 * <p>Rule for callers: take the buffer <em>before</em> any lock and release it after, so that a
 * thread never waits for a buffer while holding a lock that a buffer holder may need.
 */
final class BufferPool {
    private static final long WAIT_SECONDS = 30;

    private final String name;
    private final int bufferSize;
    private final int align;
    private final int max;
    private final ArrayBlockingQueue<ByteBuffer> free;
    private final AtomicInteger created = new AtomicInteger();

    BufferPool(String name, int bufferSize, int align, int max) {
        this.name = name;
        this.bufferSize = bufferSize;
        this.align = align;
        this.max = max;
        this.free = new ArrayBlockingQueue<>(max);
    }

    int bufferSize() {
        return bufferSize;
    }

    /** A cleared buffer of {@link #bufferSize()} bytes whose address is aligned. */
    ByteBuffer take() throws DeviceTimeoutException {
        ByteBuffer b = free.poll();
        if (b != null) {
            return b.clear();
        }
        if (created.incrementAndGet() <= max) {
            return ByteBuffer.allocateDirect(bufferSize + align).alignedSlice(align).limit(bufferSize).slice();
        }
        created.decrementAndGet();
        boolean interrupted = false;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        try {
            while (true) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new DeviceTimeoutException(name, -1, "no I/O buffer became free in " + WAIT_SECONDS + " s");
                }
                try {
                    b = free.poll(left, TimeUnit.NANOSECONDS);
                    if (b != null) {
                        return b.clear();
                    }
                } catch (InterruptedException e) {
                    interrupted = true; // finish the request; the caller sees its interrupt afterwards
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    void release(ByteBuffer b) {
        free.offer(b);
    }

    /** Buffers made so far (for status). */
    int created() {
        return created.get();
    }
}
