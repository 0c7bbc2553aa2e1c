package dev.strata.core.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The manager's background threads: a pool for reconciles and factory departures (daemon
 * threads {@code strata-core-N}) and one lane that applies configuration events in order
 * ({@code strata-core-definitions}). Counts queued and running tasks so tests and shutdown can
 * wait for quiet.
 */
final class Tasks {
    private static final Logger LOG = LoggerFactory.getLogger(Tasks.class);

    /** A background task; its failure is logged. */
    interface Task {
        void run() throws Exception;
    }

    private final ExecutorService pool;
    private final ExecutorService lane;
    private final java.util.concurrent.ScheduledExecutorService ticker;
    private final ReentrantLock quiet = new ReentrantLock();
    private final Condition quietCondition = quiet.newCondition();
    private final AtomicInteger busy = new AtomicInteger();

    Tasks() {
        AtomicInteger n = new AtomicInteger();
        pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "strata-core-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        lane = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "strata-core-definitions");
            t.setDaemon(true);
            return t;
        });
        ticker = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "strata-core-ticker");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Runs {@code r} every {@code periodNanos} on the ticker thread until shutdown. It should only
     * submit work (the ticker does not count as busy: {@link #awaitQuiet} does not wait for it).
     */
    void every(long periodNanos, Runnable r) {
        ticker.scheduleWithFixedDelay(() -> {
            try {
                r.run();
            } catch (RuntimeException e) {
                LOG.error("periodic device task failed", e);
            }
        }, periodNanos, periodNanos, TimeUnit.NANOSECONDS);
    }

    Future<?> submit(Task task) {
        return submitTo(pool, task);
    }

    /** Runs {@code task} on the definitions lane, after every task submitted there before. */
    Future<?> submitInOrder(Task task) {
        return submitTo(lane, task);
    }

    private Future<?> submitTo(ExecutorService ex, Task task) {
        busy.incrementAndGet();
        try {
            return ex.submit(() -> {
                try {
                    task.run();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (Exception | Error e) {
                    LOG.error("background device task failed", e);
                } finally {
                    if (busy.decrementAndGet() == 0) {
                        quiet.lock();
                        try {
                            quietCondition.signalAll();
                        } finally {
                            quiet.unlock();
                        }
                    }
                }
                return null;
            });
        } catch (RejectedExecutionException e) {
            busy.decrementAndGet();
            return CompletableFuture.completedFuture(null);
        }
    }

    /** Waits until no background task is queued or running. */
    boolean awaitQuiet(long timeout, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        quiet.lock();
        try {
            while (busy.get() != 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                quietCondition.awaitNanos(left);
            }
            return true;
        } finally {
            quiet.unlock();
        }
    }

    /** Interrupts every task and waits (bounded) for the threads to end. */
    void shutdown(long timeoutNanos) {
        ticker.shutdownNow();
        lane.shutdownNow();
        pool.shutdownNow();
        try {
            pool.awaitTermination(timeoutNanos, TimeUnit.NANOSECONDS);
            lane.awaitTermination(timeoutNanos, TimeUnit.NANOSECONDS);
            ticker.awaitTermination(timeoutNanos, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
