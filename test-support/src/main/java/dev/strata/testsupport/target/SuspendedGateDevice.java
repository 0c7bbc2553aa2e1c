package dev.strata.testsupport.target;

import java.io.IOException;
import java.nio.ByteBuffer;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceIOException;

/**
 * A device below a cache that the user suspended ({@code dev:suspend}): while its gate is closed,
 * every write, flush, discard and write-zeroes waits, as core's mapped-device gate makes them wait,
 * and an interrupt fails the waiting request the way that gate does — a {@link DeviceIOException}
 * ("interrupted while waiting at the gate"), not an {@code InterruptedIOException}, with the
 * thread's interrupt status kept. Unlike the real gate it has no timeout: a request nobody
 * interrupts waits until {@link #open}, so a caller that does not pass the interrupt on hangs
 * (and the test's own cap reports it). Reads pass, so a test can check the data underneath.
 */
public class SuspendedGateDevice extends ForwardingBlockDevice {
    private final String name;
    private final Object lock = new Object();
    private boolean closed;
    private int waiting;

    public SuspendedGateDevice(String name, BlockDevice lower) {
        super(lower);
        this.name = name;
    }

    /** Closes the gate ({@code dev:suspend}): later writes and flushes wait (those already past it go on). */
    public void closeGate() {
        synchronized (lock) {
            closed = true;
        }
    }

    /** Opens the gate ({@code dev:resume}): every waiting request goes on. */
    public void open() {
        synchronized (lock) {
            closed = false;
            lock.notifyAll();
        }
    }

    /** Requests waiting at the closed gate now. */
    public int waiting() {
        synchronized (lock) {
            return waiting;
        }
    }

    private void enter(long offset) throws IOException {
        synchronized (lock) {
            if (!closed) {
                return;
            }
            waiting++;
            try {
                while (closed) {
                    lock.wait();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new DeviceIOException(name, offset, "interrupted while waiting at the gate");
            } finally {
                waiting--;
            }
        }
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        enter(offset);
        super.write(offset, src, flags);
    }

    @Override
    public void flush() throws IOException {
        enter(-1);
        super.flush();
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        enter(offset);
        super.discard(offset, length);
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws IOException {
        enter(offset);
        super.writeZeroes(offset, length, flags);
    }
}
