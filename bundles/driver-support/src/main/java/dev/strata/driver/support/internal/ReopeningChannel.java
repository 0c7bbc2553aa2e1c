package dev.strata.driver.support.internal;

import dev.strata.api.DeviceIOException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
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
 */
public final class ReopeningChannel {
    private static final int MAX_REOPENS = 16;

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

    /** Flushes and closes the channel, once; later I/O fails with "the device is closed". */
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        FileChannel ch = channel;
        boolean interrupted = Thread.interrupted();
        try {
            ch.force(false);
        } catch (IOException e) {
            errors.increment();
            throw new DeviceIOException(name, -1, "flush on close failed: " + e, e);
        } finally {
            try {
                ch.close();
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
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
