package dev.strata.driver.support.internal;

import dev.strata.api.DeviceIOException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;

/**
 * The positional I/O of a file-backed target over a {@link FileChannel} that survives interrupts.
 *
 * <p>A {@code FileChannel} closes itself when a thread doing I/O on it is interrupted, which would
 * fail every other request in flight. Every call here clears the caller's interrupt status for its
 * duration (and restores it afterwards) and, if the channel is closed under it anyway, reopens the
 * file (with the same {@link Opener}) and retries; positional I/O is idempotent, and data written
 * through the old channel is in the same file, so a later {@code force} covers it. I/O errors
 * become {@link DeviceIOException}s naming the device and offset, and are counted.
 *
 * <p>A caller that is interrupted again and again (another thread interrupting it in a loop) could
 * see its request closed under it every time; after {@value #QUIET_AFTER} tries the request is
 * handed to a thread of this class's own, which nobody else can interrupt, and the caller waits
 * for it without reacting to interrupts (its interrupt status is kept). So an interrupt never
 * fails a request; only a channel that keeps being closed by <em>other</em> threads' interrupts
 * for {@value #MAX_REOPENS} tries in a row on the quiet thread does.
 */
public final class ReopeningChannel {
    private static final int MAX_REOPENS = 16;
    private static final int QUIET_AFTER = 4;

    /** Threads nobody else holds, so nobody interrupts them; idle ones end after a minute. */
    private static final ExecutorService QUIET = Executors.newCachedThreadPool(QuietThread::new);

    private static final class QuietThread extends Thread {
        QuietThread(Runnable r) {
            super(r, "strata-file-quiet-io");
            setDaemon(true);
        }
    }

    @FunctionalInterface
    private interface Call<T> {
        T run() throws IOException;
    }

    /** Opens the file (again). */
    @FunctionalInterface
    public interface Opener {
        FileChannel open(Path path) throws IOException;
    }

    private final Path path;
    private final String name;
    private final Opener opener;
    private final Logger log;
    private volatile FileChannel channel;
    private volatile boolean closed;
    private boolean closing; // guarded by this: close() runs once
    private final LongAdder errors = new LongAdder();
    private final LongAdder reopens = new LongAdder();

    /**
     * @param channel the channel already opened with {@code opener}
     * @param log     the target's logger (reopens are logged there)
     */
    public ReopeningChannel(Path path, FileChannel channel, Opener opener, Logger log) {
        this.path = path;
        this.name = path.toString();
        this.channel = channel;
        this.opener = opener;
        this.log = log;
    }

    /** I/O errors so far (including a failed flush on close). */
    public long errors() {
        return errors.sum();
    }

    /** Times the channel was reopened after an interrupt closed it. */
    public long reopens() {
        return reopens.sum();
    }

    /** Reads until {@code dst} is full; past the end of the file (truncated behind our back) reads zeroes. */
    public void readFully(ByteBuffer dst, long pos) throws IOException {
        long p = pos;
        while (dst.hasRemaining()) {
            int r = read(dst, p);
            if (r < 0) { // the file is shorter than the device (truncated behind our back): zeroes
                while (dst.hasRemaining()) {
                    dst.put((byte) 0);
                }
                return;
            }
            p += r;
        }
    }

    /** Writes all of {@code src}. */
    public void writeFully(ByteBuffer src, long pos) throws IOException {
        long p = pos;
        while (src.hasRemaining()) {
            p += write(src, p);
        }
    }

    /** One positional read. */
    public int read(ByteBuffer dst, long pos) throws IOException {
        for (int attempt = 0;; attempt++) {
            if (attempt == QUIET_AFTER && !onQuietThread()) {
                return quietly(() -> read(dst, pos));
            }
            FileChannel ch = channel;
            boolean interrupted = Thread.interrupted();
            try {
                return ch.read(dst, pos);
            } catch (AsynchronousCloseException e) {
                retryOrFail(ch, attempt, pos, "read", e);
            } catch (IOException e) {
                throw failed(pos, "read", e);
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /** One positional write. */
    public int write(ByteBuffer src, long pos) throws IOException {
        for (int attempt = 0;; attempt++) {
            if (attempt == QUIET_AFTER && !onQuietThread()) {
                return quietly(() -> write(src, pos));
            }
            FileChannel ch = channel;
            boolean interrupted = Thread.interrupted();
            try {
                return ch.write(src, pos);
            } catch (AsynchronousCloseException e) {
                retryOrFail(ch, attempt, pos, "write", e);
            } catch (IOException e) {
                throw failed(pos, "write", e);
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /** {@code force(false)} (fdatasync); {@code pos} is the offset named in an error, or -1. */
    public void force(long pos) throws IOException {
        for (int attempt = 0;; attempt++) {
            if (attempt == QUIET_AFTER && !onQuietThread()) {
                quietly(() -> {
                    force(pos);
                    return null;
                });
                return;
            }
            FileChannel ch = channel;
            boolean interrupted = Thread.interrupted();
            try {
                ch.force(false);
                return;
            } catch (AsynchronousCloseException e) {
                retryOrFail(ch, attempt, pos, "flush", e);
            } catch (IOException e) {
                throw failed(pos, "flush (fdatasync)", e);
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /** Closes {@code ch} (may be null), ignoring errors: for an open that failed after it. */
    public static void closeQuietly(FileChannel ch) {
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException | RuntimeException ignored) {
                // the open failed anyway; its error is the one reported
            }
        }
    }

    /** Flushes and closes the channel, once; later I/O fails with "the device is closed". */
    public void close() throws IOException {
        synchronized (this) {
            if (closing) {
                return;
            }
            closing = true;
        }
        IOException flushFailed = null;
        try {
            // not under the monitor: a flush handed to a quiet thread may need reopen(), which takes it
            force(-1); // reopens like any flush if an interrupt closed the channel
        } catch (IOException e) {
            flushFailed = e; // counted by force
        }
        boolean interrupted = Thread.interrupted();
        try {
            synchronized (this) {
                closed = true;
                channel.close();
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        if (flushFailed != null) {
            throw new DeviceIOException(name, -1, "flush on close failed: " + flushFailed.getMessage(), flushFailed);
        }
    }

    private static boolean onQuietThread() {
        return Thread.currentThread() instanceof QuietThread;
    }

    /** Runs {@code call} on a quiet thread; waits for it whatever interrupts come (join keeps the status). */
    private static <T> T quietly(Call<T> call) throws IOException {
        CompletableFuture<T> done = new CompletableFuture<>();
        QUIET.execute(() -> {
            try {
                done.complete(call.run());
            } catch (Throwable e) {
                done.completeExceptionally(e);
            }
        });
        try {
            return done.join();
        } catch (CompletionException e) {
            Throwable c = e.getCause();
            if (c instanceof IOException io) {
                throw io;
            }
            if (c instanceof RuntimeException r) {
                throw r;
            }
            if (c instanceof Error err) {
                throw err;
            }
            throw e;
        }
    }

    /** The channel was closed by an interrupt (ours or another thread's): reopen it, unless we are closed. */
    private void retryOrFail(FileChannel broken, int attempt, long pos, String op, IOException e) throws IOException {
        if (closed) {
            throw failed(pos, op, "the device is closed", e);
        }
        if (attempt >= MAX_REOPENS) {
            throw failed(pos, op, "the channel keeps being closed by interrupts", e);
        }
        reopen(broken);
    }

    private synchronized void reopen(FileChannel broken) throws IOException {
        if (closed) {
            throw failed(-1, "reopen", "the device is closed", null);
        }
        if (channel != broken) {
            return; // another thread already reopened it
        }
        boolean interrupted = Thread.interrupted();
        try {
            channel = opener.open(path);
            reopens.increment();
            if (reopens.sum() == 1) {
                log.warn("{}: the file channel was closed by a thread interrupt; reopened it (further reopens are logged at debug level)", name);
            } else {
                log.debug("{}: the file channel was closed by a thread interrupt; reopened it", name);
            }
        } catch (IOException e) {
            throw failed(-1, "reopen", e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private DeviceIOException failed(long pos, String op, IOException e) {
        return failed(pos, op, e.toString(), e);
    }

    private DeviceIOException failed(long pos, String op, String why, IOException e) {
        errors.increment();
        return new DeviceIOException(name, pos, op + " failed: " + why, e);
    }
}
