package dev.strata.driver.file.internal;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceIOException;
import dev.strata.api.FastZeroUnsupportedException;
import dev.strata.api.Requests;
import dev.strata.api.Target;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code file} target: a regular file through {@link FileChannel} positional I/O (page
 * cache). {@code flush()} is {@code force(false)} (fdatasync); a FUA write is the write followed
 * by {@code force(false)}. {@code discard} is a no-op (the JDK cannot punch holes).
 *
 * <p><b>Interrupts.</b> A {@code FileChannel} closes itself when a thread doing I/O on it is
 * interrupted, which would fail every other request in flight. This target clears the caller's
 * interrupt status for the duration of a call (and restores it afterwards) and, if the channel
 * is closed under it anyway, reopens the file and retries the request; positional I/O is
 * idempotent, and data written through the old channel is in the same file, so a later
 * {@code force} covers it.
 */
final class FileTarget implements Target {
    private static final Logger LOG = LoggerFactory.getLogger(FileTarget.class);
    static final String TYPE = "file";
    /** Zeroes for writeZeroes, shared and read-only (direct, so the JDK writes it without copying). */
    private static final ByteBuffer ZEROES = ByteBuffer.allocateDirect(1 << 20).asReadOnlyBuffer();
    private static final int MAX_REOPENS = 16;

    private final Path path;
    private final String name;
    private final long size;
    private final int blockSize;
    private volatile FileChannel channel;
    private volatile boolean closed;

    private final LongAdder reads = new LongAdder();
    private final LongAdder readBytes = new LongAdder();
    private final LongAdder writes = new LongAdder();
    private final LongAdder writtenBytes = new LongAdder();
    private final LongAdder fuaWrites = new LongAdder();
    private final LongAdder flushes = new LongAdder();
    private final LongAdder zeroes = new LongAdder();
    private final LongAdder zeroedBytes = new LongAdder();
    private final LongAdder discards = new LongAdder();
    private final LongAdder errors = new LongAdder();
    private final LongAdder reopens = new LongAdder();

    private FileTarget(Path path, long size, FileChannel channel) {
        this.path = path;
        this.name = path.toString();
        this.size = size;
        this.blockSize = size % 4096 == 0 ? 4096 : BlockDevice.SECTOR;
        this.channel = channel;
    }

    /** Checks the spec against the file system, creates or grows the file if asked, opens it. */
    static FileTarget open(FileSpec spec) throws IOException {
        FileSpec.Plan plan = spec.check();
        spec.prepare(plan);
        FileChannel ch;
        try {
            ch = openChannel(spec.path);
        } catch (IOException e) {
            throw new DeviceIOException(spec.path.toString(), 0, "cannot open: " + e, e);
        }
        return new FileTarget(spec.path, plan.size, ch);
    }

    private static FileChannel openChannel(Path path) throws IOException {
        return FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
    }

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public int blockSize() {
        return blockSize;
    }

    Path path() {
        return path;
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        int n = dst.remaining();
        Requests.check(size, offset, n);
        if (n == 0) {
            return;
        }
        reads.increment();
        readBytes.add(n);
        long pos = offset;
        while (dst.hasRemaining()) {
            int r = pread(dst, pos);
            if (r < 0) { // the file is shorter than the device (truncated behind our back): zeroes
                while (dst.hasRemaining()) {
                    dst.put((byte) 0);
                }
                break;
            }
            pos += r;
        }
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        int n = src.remaining();
        Requests.check(size, offset, n);
        if (n == 0) {
            return;
        }
        writes.increment();
        writtenBytes.add(n);
        long pos = offset;
        while (src.hasRemaining()) {
            pos += pwrite(src, pos);
        }
        if ((flags & FUA) != 0) {
            fuaWrites.increment();
            force(offset);
        }
    }

    @Override
    public void flush() throws IOException {
        flushes.increment();
        force(-1);
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        Requests.check(size, offset, length);
        // Advisory, and the JDK cannot punch holes (no fallocate): the data stays.
        discards.increment();
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws IOException {
        Requests.check(size, offset, length);
        if ((flags & FAST_ZERO) != 0) {
            throw new FastZeroUnsupportedException(name);
        }
        if (length == 0) {
            return;
        }
        zeroes.increment();
        zeroedBytes.add(length);
        ByteBuffer z = ZEROES.duplicate();
        long pos = offset;
        long end = offset + length;
        while (pos < end) {
            z.clear().limit((int) Math.min(z.capacity(), end - pos));
            while (z.hasRemaining()) {
                pos += pwrite(z, pos);
            }
        }
        if ((flags & FUA) != 0) {
            force(offset);
        }
    }

    @Override
    public Map<String, String> status() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("path", name);
        m.put("size", Long.toString(size));
        m.put("block_size", Integer.toString(blockSize));
        m.put("reads", reads.toString());
        m.put("read_bytes", readBytes.toString());
        m.put("writes", writes.toString());
        m.put("written_bytes", writtenBytes.toString());
        m.put("fua_writes", fuaWrites.toString());
        m.put("flushes", flushes.toString());
        m.put("zeroes", zeroes.toString());
        m.put("zeroed_bytes", zeroedBytes.toString());
        m.put("discards", discards.toString());
        m.put("errors", errors.toString());
        m.put("reopens", reopens.toString());
        return m;
    }

    @Override
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

    // ------------------------------------------------------------------ channel primitives

    private int pread(ByteBuffer dst, long pos) throws IOException {
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

    private int pwrite(ByteBuffer src, long pos) throws IOException {
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

    private void force(long pos) throws IOException {
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
            channel = openChannel(path);
            reopens.increment();
            if (reopens.sum() == 1) {
                LOG.warn("{}: the file channel was closed by a thread interrupt; reopened it (further reopens are logged at debug level)", name);
            } else {
                LOG.debug("{}: the file channel was closed by a thread interrupt; reopened it", name);
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
