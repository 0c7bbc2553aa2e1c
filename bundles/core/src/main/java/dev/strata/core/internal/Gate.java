package dev.strata.core.internal;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import dev.strata.api.DeviceIOException;
import dev.strata.api.DeviceTimeoutException;

/**
 * The I/O gate of a mapped device.
 *
 * <h2>Design</h2>
 * One {@link AtomicLong} holds a {@code CLOSED} bit and the number of requests in flight. The
 * hot path is one {@code getAndIncrement} on entry and one {@code decrementAndGet} on exit (both
 * wait-free {@code LOCK XADD}s); no lock is taken and nothing is held while the request runs, so
 * any number of requests pass the gate at once. Only the slow paths use the lock: a request that
 * finds the gate closed undoes its increment and waits on {@code opened} (with a deadline); an
 * exit that brings the count to zero while the gate is closed signals {@code drained}.
 *
 * <h2>Locking rules</h2>
 * <ul>
 * <li>{@link #close()}, {@link #drain(long)} and {@link #open()} are called by one manager thread
 * at a time (the device's operation lock serialises them); {@link #enter} and {@link #exit} by
 * any number of I/O threads.</li>
 * <li>A waiter re-checks the word under the lock before it sleeps, and {@link #open()} signals
 * under the lock after clearing the bit, so no wake-up is lost.</li>
 * <li>The lock is never held while a request runs, nor while a target is called.</li>
 * </ul>
 */
final class Gate {
    private static final long CLOSED = 1L << 62;
    private static final long COUNT = CLOSED - 1;

    private final AtomicLong word = new AtomicLong(CLOSED);
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition opened = lock.newCondition();
    private final Condition drained = lock.newCondition();
    private int waiting;
    private volatile String shutMessage;

    /**
     * Passes the gate, waiting while it is closed for at most {@code timeoutNanos}.
     *
     * @throws DeviceTimeoutException when the gate stayed closed past the deadline
     * @throws DeviceIOException when the gate was shut for good (device removed, manager stopped)
     */
    void enter(String device, long offset, long timeoutNanos) throws IOException {
        long s = word.getAndIncrement();
        if ((s & CLOSED) != 0) {
            slowEnter(device, offset, timeoutNanos);
        }
    }

    /** Leaves the gate after a request passed {@link #enter}. */
    void exit() {
        if (word.decrementAndGet() == CLOSED) {
            signalDrained();
        }
    }

    private void slowEnter(String device, long offset, long timeoutNanos) throws IOException {
        exit(); // undo the optimistic increment
        long deadline = System.nanoTime() + timeoutNanos;
        lock.lock();
        try {
            waiting++;
            try {
                for (;;) {
                    String shut = shutMessage;
                    if (shut != null) {
                        throw new DeviceIOException(device, offset, shut);
                    }
                    if ((word.get() & CLOSED) == 0) {
                        long s = word.getAndIncrement();
                        if ((s & CLOSED) == 0) {
                            return;
                        }
                        exit();
                        continue;
                    }
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        throw new DeviceTimeoutException(device, offset, "the request waited "
                                + TimeUnit.NANOSECONDS.toSeconds(timeoutNanos)
                                + " s at the closed gate (device suspended or its target being updated); giving up");
                    }
                    try {
                        opened.awaitNanos(left);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new DeviceIOException(device, offset, "interrupted while waiting at the gate");
                    }
                }
            } finally {
                waiting--;
            }
        } finally {
            lock.unlock();
        }
    }

    private void signalDrained() {
        lock.lock();
        try {
            drained.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Closes the gate: new requests wait. Requests in flight continue; see {@link #drain}. */
    void close() {
        word.getAndUpdate(s -> s | CLOSED);
    }

    /**
     * Waits until no request is in flight (the gate must be closed).
     *
     * @return true when drained, false when the deadline passed first
     */
    boolean drain(long timeoutNanos) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutNanos;
        lock.lock();
        try {
            while ((word.get() & COUNT) != 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                drained.awaitNanos(left);
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Opens the gate and wakes every waiting request. Does nothing once the gate is shut: a
     * reload or reconcile finishing after the manager stopped must not let I/O reach a target
     * that nobody will close. Open and shut change state under the lock so neither can undo the
     * other.
     */
    void open() {
        lock.lock();
        try {
            if (shutMessage != null) {
                return;
            }
            word.getAndUpdate(s -> s & ~CLOSED);
            opened.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Shuts the gate for good: waiting and future requests fail with {@code message}. */
    void shut(String message) {
        lock.lock();
        try {
            shutMessage = message;
            close();
            opened.signalAll();
        } finally {
            lock.unlock();
        }
    }

    boolean isOpen() {
        return (word.get() & CLOSED) == 0;
    }

    /** Requests in flight (passed the gate, not yet finished). */
    long inFlight() {
        return word.get() & COUNT;
    }

    /** Requests waiting at the closed gate. */
    int waiting() {
        lock.lock();
        try {
            return waiting;
        } finally {
            lock.unlock();
        }
    }
}
