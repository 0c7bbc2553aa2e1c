package dev.strata.cache.support.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;

class DaemonTest {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private volatile long events;

    private void signal() {
        lock.lock();
        try {
            events++;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * A signal that arrives while the task runs (after it looked for work and found none) must
     * not be lost: the loop runs the task again instead of sleeping for the idle interval (an
     * hour here, so the old behaviour fails the 30 s deadline). This was the flusher sleeping
     * while the writers waited for it.
     */
    @Test
    void aSignalDuringARunIsNotLost() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch again = new CountDownLatch(1);
        Daemon d = new Daemon("test-daemon", () -> {
            int n = runs.incrementAndGet();
            if (n == 1) {
                signal(); // work came in after the task decided there was none
            } else {
                again.countDown();
            }
            return false;
        }, lock, changed, TimeUnit.HOURS.toMillis(1), () -> events);
        d.start();
        try {
            assertTrue(again.await(30, TimeUnit.SECONDS), "the daemon slept through a signal that came while it ran");
        } finally {
            d.stop();
        }
        assertTrue(!d.running());
    }

    /** Without new events the loop waits; a signal wakes it (once per signal, not in a spin). */
    @Test
    void waitsUntilSignalled() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch first = new CountDownLatch(1);
        CountDownLatch second = new CountDownLatch(1);
        Daemon d = new Daemon("test-daemon", () -> {
            int n = runs.incrementAndGet();
            if (n == 1) {
                first.countDown();
            } else if (n == 2) {
                second.countDown();
            }
            return false;
        }, lock, changed, TimeUnit.HOURS.toMillis(1), () -> events);
        d.start();
        try {
            assertTrue(first.await(30, TimeUnit.SECONDS));
            // the daemon is (or will be) waiting: it has not seen an event since its first run
            lock.lock();
            try {
                while (!lock.hasWaiters(changed)) {
                    changed.await(10, TimeUnit.MILLISECONDS);
                }
            } finally {
                lock.unlock();
            }
            assertEquals(1, runs.get(), "the daemon ran again without a signal");
            signal();
            assertTrue(second.await(30, TimeUnit.SECONDS));
        } finally {
            d.stop();
        }
    }

    /**
     * A stop from an interrupted thread (the close of a target whose build Ctrl-C cancelled) still
     * waits for the loop to end, and keeps the caller's interrupt. It had returned at once and
     * logged "thread did not stop", leaving the thread free to write to the cache device.
     */
    @Test
    void anInterruptedStopStillJoinsTheThread() throws Exception {
        java.util.concurrent.atomic.AtomicReference<Thread> loop = new java.util.concurrent.atomic.AtomicReference<>();
        java.util.concurrent.atomic.AtomicReference<Thread> stopper = new java.util.concurrent.atomic.AtomicReference<>();
        CountDownLatch running = new CountDownLatch(1);
        Daemon d = new Daemon("test-daemon", () -> {
            loop.set(Thread.currentThread());
            running.countDown();
            // busy until the stopper waits in its join: an early return leaves this still running
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline) {
                Thread s = stopper.get();
                if (s != null && (s.getState() == Thread.State.TIMED_WAITING || s.getState() == Thread.State.TERMINATED)) {
                    break;
                }
                Thread.onSpinWait();
            }
            return false;
        }, lock, changed, TimeUnit.HOURS.toMillis(1), () -> events);
        d.start();
        assertTrue(running.await(30, TimeUnit.SECONDS));
        java.util.concurrent.atomic.AtomicBoolean aliveAfterStop = new java.util.concurrent.atomic.AtomicBoolean(true);
        java.util.concurrent.atomic.AtomicBoolean keptInterrupt = new java.util.concurrent.atomic.AtomicBoolean();
        Thread t = new Thread(() -> {
            Thread.currentThread().interrupt();
            d.stop();
            keptInterrupt.set(Thread.currentThread().isInterrupted());
            aliveAfterStop.set(loop.get().isAlive());
        });
        stopper.set(t);
        t.start();
        t.join(TimeUnit.SECONDS.toMillis(60));
        assertTrue(!aliveAfterStop.get(), "stop() returned while the daemon's thread still ran");
        assertTrue(keptInterrupt.get(), "the caller's interrupt was swallowed");
    }

    /**
     * A task in a long round (writeback of many batches) sees the stop at once through
     * {@link Daemon#stopping()} and ends the round; it is not left to run until the stop's 30 s
     * interrupt (a cache:replace paused client I/O for 30 s that way). The task is released only
     * by seeing the flag, so without it the stop would end only through that interrupt.
     */
    @Test
    void aLongRoundSeesTheStopAndEndsIt() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        java.util.concurrent.atomic.AtomicBoolean sawStop = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicInteger steps = new java.util.concurrent.atomic.AtomicInteger();
        Daemon[] self = new Daemon[1];
        Daemon d = new Daemon("test-daemon", () -> {
            running.countDown();
            while (!self[0].stopping()) {
                steps.incrementAndGet(); // one more batch
                if (Thread.currentThread().isInterrupted()) {
                    return false; // the stop's last resort: the flag was not seen
                }
                Thread.onSpinWait();
            }
            sawStop.set(true);
            return true;
        }, lock, changed, TimeUnit.HOURS.toMillis(1), () -> events);
        self[0] = d;
        assertTrue(!d.stopping());
        d.start();
        assertTrue(running.await(30, TimeUnit.SECONDS));
        d.stop();
        assertTrue(sawStop.get(), "the round did not see the stop");
        assertTrue(!d.running());
        assertTrue(d.stopping());
    }
}
