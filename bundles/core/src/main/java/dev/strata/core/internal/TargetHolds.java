package dev.strata.core.internal;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The calls running with a device's target outside the I/O path ({@code withTarget},
 * {@code status}). A target is closed, swapped or dropped only after {@link #close} returned:
 * from then on no new call gets in, and the running ones have returned (or the bounded wait
 * ran out). {@link #open} lets calls in again once a target is attached.
 * <p>
 * Locking: its own lock, held only for bookkeeping, never while a call runs; a call's thread
 * is interrupted only by a closer that must not wait for it (stop, hot update, forced remove).
 */
final class TargetHolds {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition released = lock.newCondition();
    private final Map<Thread, Integer> running = new HashMap<>();
    private boolean closed = true;

    /** Registers a call on the current thread; false while the target is closed or being closed. */
    boolean enter() {
        lock.lock();
        try {
            if (closed) {
                return false;
            }
            running.merge(Thread.currentThread(), 1, Integer::sum);
            return true;
        } finally {
            lock.unlock();
        }
    }

    void exit() {
        lock.lock();
        try {
            running.computeIfPresent(Thread.currentThread(), (t, n) -> n == 1 ? null : n - 1);
            released.signalAll();
        } finally {
            lock.unlock();
        }
    }

    void open() {
        lock.lock();
        try {
            closed = false;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Lets no new call in and waits up to {@code timeoutNanos} for the running ones (other than
     * the current thread's) to return; with {@code interrupt} their threads are interrupted
     * first. Without {@code interrupt}, a timeout reopens (nothing changes for the caller to undo).
     *
     * @return true when no other call runs any more
     */
    boolean close(long timeoutNanos, boolean interrupt) {
        long deadline = System.nanoTime() + timeoutNanos;
        lock.lock();
        try {
            boolean wasClosed = closed;
            closed = true;
            if (interrupt) {
                for (Thread t : running.keySet()) {
                    if (t != Thread.currentThread()) {
                        t.interrupt();
                    }
                }
            }
            boolean interrupted = false;
            try {
                while (others() > 0) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        if (!interrupt && !wasClosed) {
                            closed = false;
                        }
                        return false;
                    }
                    try {
                        released.awaitNanos(left);
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
                return true;
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /** Calls running on threads other than the current one. */
    int others() {
        lock.lock();
        try {
            int n = 0;
            for (Map.Entry<Thread, Integer> e : running.entrySet()) {
                if (e.getKey() != Thread.currentThread()) {
                    n += e.getValue();
                }
            }
            return n;
        } finally {
            lock.unlock();
        }
    }
}
