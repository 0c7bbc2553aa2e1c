package dev.strata.testsupport.target;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;

import dev.strata.api.BlockDevice;

/**
 * A device whose {@code write} calls wait at a gate while it is held, so a test can stop a
 * writeback with its backing writes in flight and check what else still runs meanwhile. Only
 * {@code write} waits (reads, flushes, zeroes and discards pass), and only the writes that
 * {@link #holds} picks (default: all). A held write waits interruptibly (an interrupted wait
 * fails it with {@link InterruptedIOException}); {@link #release} lets every one through.
 */
public class GatedDevice extends ForwardingBlockDevice {
    /** Which writes the gate holds. */
    @FunctionalInterface
    public interface Picker {
        boolean holds(long offset, int length);
    }

    private final Object lock = new Object();
    private boolean held;
    private int waiting;
    private volatile Picker holds = (o, l) -> true;

    public GatedDevice(BlockDevice lower) {
        super(lower);
    }

    /** Holds the writes {@code which} picks from now on. */
    public void hold(Picker which) {
        holds = which;
        synchronized (lock) {
            held = true;
        }
    }

    /** Holds every write from now on. */
    public void hold() {
        hold((o, l) -> true);
    }

    /** Lets every waiting and later write through. */
    public void release() {
        synchronized (lock) {
            held = false;
            lock.notifyAll();
        }
    }

    /** Writes waiting at the gate now. */
    public int waiting() {
        synchronized (lock) {
            return waiting;
        }
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        if (holds.holds(offset, src.remaining())) {
            synchronized (lock) {
                if (held) {
                    waiting++;
                    try {
                        while (held) {
                            lock.wait();
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new InterruptedIOException("write at " + offset + " interrupted at the gate");
                    } finally {
                        waiting--;
                    }
                }
            }
        }
        super.write(offset, src, flags);
    }
}
