package dev.strata.cache.commands.internal;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

import dev.strata.api.BlockDevice;
import dev.strata.testsupport.target.ForwardingBlockDevice;

/**
 * A device whose writes pass a gate: open, or closed after a number of further writes, so a
 * writeback can be stopped half-way at a known point. A write waiting at the gate waits
 * interruptibly (an interrupted wait fails the write with {@link InterruptedIOException}).
 */
final class GatedDevice extends ForwardingBlockDevice {
    private final Object lock = new Object();
    private long allowance = Long.MAX_VALUE;
    private final AtomicInteger waiting = new AtomicInteger();

    GatedDevice(BlockDevice lower) {
        super(lower);
    }

    /**
     * A write held at the gate ignores interrupts until {@link #open}, as one waiting on a policy's
     * own I/O thread at a suspended device's gate does for the command that waits for it.
     */
    private volatile boolean deaf;

    void ignoreInterrupts(boolean on) {
        deaf = on;
    }

    /** Lets {@code n} more writes through, then holds every further one. */
    void closeAfter(long n) {
        synchronized (lock) {
            allowance = n;
        }
    }

    void open() {
        synchronized (lock) {
            allowance = Long.MAX_VALUE;
            lock.notifyAll();
        }
    }

    /** Writes waiting at the gate now. */
    int waiting() {
        return waiting.get();
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        synchronized (lock) {
            if (allowance == 0) {
                waiting.incrementAndGet();
                boolean ignored = false;
                try {
                    while (allowance == 0) {
                        try {
                            lock.wait();
                        } catch (InterruptedException e) {
                            if (!deaf) {
                                throw e;
                            }
                            ignored = true;
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("write at " + offset + " interrupted at the gate");
                } finally {
                    waiting.decrementAndGet();
                    if (ignored) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
            if (allowance != Long.MAX_VALUE) {
                allowance--;
            }
        }
        super.write(offset, src, flags);
    }
}
