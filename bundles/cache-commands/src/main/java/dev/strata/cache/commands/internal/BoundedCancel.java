package dev.strata.cache.commands.internal;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.strata.cache.commands.internal.CacheOps.Cancelled;

/**
 * Runs a command's writeback on a thread of its own, so that Ctrl-C ends the command within
 * {@link #WAIT_MILLIS} whatever the writeback waits on. A cache's writeback thread takes the
 * interrupt between batches, but a batch whose backing writes run on the policy's own I/O threads
 * waits for them without looking at it (writecache's and writeboost's writers, cache-support's
 * {@code WritebackBatcher}): a write held at a closed gate below the cache (a suspended device, a
 * target being updated) kept the command, and the console, waiting until the gate's timeout.
 *
 * <p>After Ctrl-C the command waits {@link #WAIT_MILLIS} for the writeback to stop and report
 * as usual; if it has not, it prints one line saying that the batch in flight ends on its own and
 * ends, and whatever the writeback prints later (its progress, its report) is dropped, so that
 * nothing lands over the console's prompt. Nothing is lost: the batch's blocks stay dirty.
 */
final class BoundedCancel {
    /** Well inside the console's 10 s wait for an interrupted command. */
    static final long WAIT_MILLIS = 5000;

    /** The operation, printing on the stream it is given. */
    interface Op<R> {
        R run(PrintStream out) throws IOException, InterruptedException;
    }

    private BoundedCancel() {
    }

    /**
     * Runs {@code op}; {@code what} ({@code writeback}, {@code mode change}) and {@code after}
     * (what the stopping writeback still puts back, e.g. {@code "; the mode stays writeback"}) are for
     * the line printed when it does not stop in time.
     */
    static <R> R run(String device, String what, String after, PrintStream out, Op<R> op) throws IOException, Cancelled {
        Mutable muted = new Mutable(out);
        FutureTask<R> task = new FutureTask<>(() -> op.run(muted));
        // no inherited thread locals: Gogo's per-thread streams must not follow this thread (as ReplaceCommand)
        Thread thread = new Thread(null, task, "cache-" + what.replace(' ', '-') + "-" + device, 0, false);
        thread.setDaemon(true);
        thread.start();
        try {
            return task.get();
        } catch (InterruptedException e) {
            thread.interrupt();
            try {
                return task.get(WAIT_MILLIS, TimeUnit.MILLISECONDS);
            } catch (TimeoutException | InterruptedException late) {
                if (muted.mute()) {
                    out.println(); // end the progress line it left
                }
                out.println(Render.cancelPending(device, what, after));
                out.flush();
                throw new Cancelled(device, what);
            } catch (ExecutionException failed) {
                throw rethrow(device, failed);
            }
        } catch (ExecutionException failed) {
            throw rethrow(device, failed);
        }
    }

    private static IOException rethrow(String device, ExecutionException e) throws Cancelled {
        Throwable c = e.getCause();
        if (c instanceof Cancelled cancelled) {
            throw cancelled;
        }
        if (c instanceof InterruptedException) {
            throw new Cancelled(device, "command");
        }
        if (c instanceof IOException io) {
            return io;
        }
        if (c instanceof RuntimeException r) {
            throw r;
        }
        if (c instanceof Error err) {
            throw err;
        }
        return new IOException(device + ": " + c, c);
    }

    /** The operation's output: the console's until {@link #mute}, nothing after. */
    private static final class Mutable extends PrintStream {
        private final PrintStream to;
        private final AtomicBoolean off;
        private volatile boolean muted;

        Mutable(PrintStream to) {
            this(to, new AtomicBoolean());
        }

        private Mutable(PrintStream to, AtomicBoolean off) {
            // what PrintStream writes through its own stream (println(Object)'s newline) checks the flag too
            super(new OutputStream() {
                @Override
                public void write(int b) {
                    if (!off.get()) {
                        to.write(b);
                    }
                }

                @Override
                public void write(byte[] b, int o, int len) {
                    if (!off.get()) {
                        to.write(b, o, len);
                    }
                }
            }, true);
            this.to = to;
            this.off = off;
        }

        /** Drops what comes from now on; true if the last text printed left its line open (a progress line). */
        synchronized boolean mute() {
            off.set(true);
            muted = true;
            return open;
        }

        /** The last text printed did not end its line. */
        private boolean open;

        @Override
        public synchronized void print(String s) {
            if (!muted) {
                to.print(s);
                open = s != null && !s.isEmpty() && !s.endsWith("\n") || open && (s == null || s.isEmpty());
            }
        }

        @Override
        public synchronized void println(String s) {
            if (!muted) {
                to.println(s);
                open = false;
            }
        }

        @Override
        public synchronized void println() {
            if (!muted) {
                to.println();
                open = false;
            }
        }

        @Override
        public void write(int b) {
            if (!muted) {
                to.write(b);
            }
        }

        @Override
        public void write(byte[] b, int off, int len) {
            if (!muted) {
                to.write(b, off, len);
            }
        }

        @Override
        public void flush() {
            if (!muted) {
                to.flush();
            }
        }
    }
}
