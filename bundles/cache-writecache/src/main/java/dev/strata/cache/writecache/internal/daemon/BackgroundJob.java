package dev.strata.cache.writecache.internal.daemon;

import java.io.IOException;

/**
 * One background thread around a {@code runOnce()}: it runs when woken, and at least once a
 * second. Deliberately minimal and isolated: the shared cache-support jar (daemon loop with an
 * injectable clock, controller binding) is meant to replace it. Errors do not stop the loop: the
 * work stays to be done and the foreground sees the device's errors itself.
 */
public final class BackgroundJob {
    /** The work of one round. */
    @FunctionalInterface
    public interface Work {
        /** Returns whether more work is waiting (run again at once). */
        boolean runOnce() throws IOException;
    }

    private final String name;
    private final Work work;
    private Thread thread;
    private boolean stopping;
    private boolean woken;
    private long rounds;
    private long errors;

    public BackgroundJob(String name, Work work) {
        this.name = name;
        this.work = work;
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

    /** Stops the thread and waits for its current round to end. */
    public void stop() {
        Thread t;
        synchronized (this) {
            t = thread;
            if (t == null) {
                return;
            }
            stopping = true;
            notifyAll();
        }
        boolean interrupted = false;
        while (t.isAlive()) {
            try {
                t.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        synchronized (this) {
            thread = null;
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    public synchronized void wake() {
        woken = true;
        notifyAll();
    }

    public synchronized long rounds() {
        return rounds;
    }

    public synchronized long errors() {
        return errors;
    }

    private void loop() {
        boolean more = false;
        while (true) {
            synchronized (this) {
                if (!more && !woken && !stopping) {
                    try {
                        wait(1000);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                if (stopping) {
                    return;
                }
                woken = false;
                rounds++;
            }
            try {
                more = work.runOnce();
            } catch (IOException | RuntimeException e) {
                more = false;
                synchronized (this) {
                    errors++;
                }
            }
        }
    }
}
