package dev.strata.cache.support.daemon;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A background loop around one {@link Task}: run it while it finds work, otherwise wait on the
 * owner's condition (signalled whenever the owner's state changes) for at most the idle interval.
 * Tests leave daemons unstarted and call {@link Task#runOnce()} themselves.
 *
 * <p>With an event counter (the owner increments it, under its lock, whenever it signals the
 * condition), a signal that comes while the task runs is not lost: the loop reads the counter
 * before each run and, after a run without work, waits only if the counter has not moved.
 * Without one, such a signal is lost and the loop waits for the next signal or the idle
 * interval (which for the flusher meant an idle cache device while writers waited for it).
 */
public final class Daemon {
    private static final Logger LOG = LoggerFactory.getLogger(Daemon.class);

    /** One step of a daemon's work. */
    @FunctionalInterface
    public interface Task {
        /** Does one unit of work; returns whether there was any (false: the loop waits). */
        boolean runOnce() throws Exception;
    }

    private final String name;
    private final Task task;
    private final ReentrantLock lock;
    private final Condition wake;
    private final long idleNanos;
    private final LongSupplier events;
    private volatile boolean stopping;
    private Thread thread;

    public Daemon(String name, Task task, ReentrantLock lock, Condition wake, long idleMillis) {
        this(name, task, lock, wake, idleMillis, null);
    }

    /**
     * @param events the owner's event counter (read under {@code lock}; it increments it whenever
     *               it signals {@code wake}), or null
     */
    public Daemon(String name, Task task, ReentrantLock lock, Condition wake, long idleMillis, LongSupplier events) {
        this.events = events;
        this.name = name;
        this.task = task;
        this.lock = lock;
        this.wake = wake;
        this.idleNanos = TimeUnit.MILLISECONDS.toNanos(idleMillis);
    }

    public synchronized void start() {
        if (thread != null) {
            return;
        }
        stopping = false;
        thread = new Thread(this::loop, name);
        thread.setDaemon(true);
        thread.start();
    }

    private void loop() {
        long backoff = 0;
        while (!stopping) {
            boolean worked;
            boolean failed = false;
            long seen = events == null ? 0 : events.getAsLong();
            try {
                worked = task.runOnce();
                backoff = 0;
            } catch (Throwable t) {
                if (stopping) {
                    break;
                }
                LOG.warn("{}: {}", name, t.toString());
                worked = false;
                failed = true;
                backoff = Math.min(Math.max(backoff * 2, TimeUnit.MILLISECONDS.toNanos(50)), TimeUnit.SECONDS.toNanos(2));
            }
            if (!worked && !stopping) {
                lock.lock();
                try {
                    if (!stopping && (failed || events == null || events.getAsLong() == seen)) {
                        wake.awaitNanos(Math.max(idleNanos, backoff));
                    }
                } catch (InterruptedException e) {
                    break;
                } finally {
                    lock.unlock();
                }
            }
        }
    }

    /** Stops the loop and waits for its thread to end, also when the caller is interrupted. */
    public void stop() {
        Thread t;
        synchronized (this) {
            t = thread;
            thread = null;
        }
        if (t == null) {
            return;
        }
        stopping = true;
        lock.lock();
        try {
            wake.signalAll();
        } finally {
            lock.unlock();
        }
        // not interruptible: stop() runs on close, and a close from a cancelled command (Ctrl-C
        // of a switch while its new target was built) has the interrupt set; returning at once
        // left the loop running, still writing to a device a retry was about to format. The
        // caller's interrupt is kept for after the join.
        boolean interrupted = false;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        boolean kicked = false;
        while (t.isAlive()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                if (kicked) {
                    break;
                }
                kicked = true; // a task blocked past 30 s: interrupt it, wait 5 s more
                t.interrupt();
                deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                continue;
            }
            try {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (t.isAlive()) {
            LOG.error("{}: thread did not stop", name);
        }
    }

    /**
     * Whether {@link #stop()} has been called: a task whose round can run long (writeback of many
     * batches to a slow device) polls it between steps and abandons the rest, so that a stop (a
     * suspend, a replace's pause) waits only for the I/O already issued, not for the whole round
     * (it waited the full 30 s before the interrupt).
     */
    public boolean stopping() {
        return stopping;
    }

    public boolean running() {
        Thread t = thread;
        return t != null && t.isAlive();
    }

    public String name() {
        return name;
    }
}
