package dev.strata.mirror.internal.io;

import java.io.IOException;

/**
 * The mirror's one background thread: the log's own work (a cluster log's rejoin and recovery),
 * resync in small batches (so writes interleave), and the clear-only commit once clears have
 * waited {@code clear_delay}. Stopped by close.
 */
final class MirrorDaemon implements Runnable {
    private static final long IDLE_WAIT_MS = 100;
    private final MirrorTarget mirror;
    private final Thread thread;
    private volatile boolean stopped;
    private volatile String lastError;

    MirrorDaemon(String name, MirrorTarget mirror) {
        this.mirror = mirror;
        this.thread = new Thread(this, "mirror-" + name);
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    synchronized void wake() {
        notifyAll();
    }

    void stop() {
        stopped = true;
        wake();
        boolean interrupted = false;
        while (thread.isAlive()) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    String lastError() {
        return lastError;
    }

    @Override
    public void run() {
        while (!stopped) {
            boolean worked = false;
            try {
                worked = mirror.clusterRunOnce();
                if (mirror.hasResyncWork()) {
                    worked |= mirror.resyncRunOnce(8) > 0;
                }
                mirror.clearerRunOnce();
            } catch (IOException | RuntimeException e) {
                // retried on the next round; the leg states in status say what broke
                lastError = String.valueOf(e.getMessage());
                worked = false;
            }
            if (!worked) {
                synchronized (this) {
                    if (!stopped) {
                        try {
                            wait(IDLE_WAIT_MS);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }
            }
        }
    }
}
