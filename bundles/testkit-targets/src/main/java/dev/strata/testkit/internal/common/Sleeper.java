package dev.strata.testkit.internal.common;

import java.io.InterruptedIOException;
import java.util.concurrent.locks.LockSupport;

/**
 * Waits until a {@link System#nanoTime()} deadline. Injected into the slow targets so that a unit
 * test can record the waits instead of sleeping.
 */
public interface Sleeper {

    /** Waits until {@code deadlineNanos} (a {@code System.nanoTime()} value); returns at once if it passed. */
    void sleepUntil(long deadlineNanos) throws InterruptedIOException;

    /** The current time, in the same scale as the deadlines. */
    long nanoTime();

    /** The real clock: parks the calling thread. */
    Sleeper SYSTEM = new Sleeper() {
        @Override
        public void sleepUntil(long deadlineNanos) throws InterruptedIOException {
            for (long left = deadlineNanos - System.nanoTime(); left > 0; left = deadlineNanos - System.nanoTime()) {
                LockSupport.parkNanos(left);
                if (Thread.interrupted()) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("interrupted while delaying a request");
                }
            }
        }

        @Override
        public long nanoTime() {
            return System.nanoTime();
        }
    };
}
