package dev.strata.driver.file.internal;

import dev.strata.api.DeviceIOException;
import dev.strata.api.FastZeroUnsupportedException;
import dev.strata.api.Requests;
import dev.strata.driver.support.internal.FileBackedTarget;
import dev.strata.driver.support.internal.FileSpec;
import dev.strata.driver.support.internal.ImageClaims;
import dev.strata.driver.support.internal.ReopeningChannel;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code file} target: a regular file through {@link FileChannel} positional I/O (page
 * cache). {@code flush()} is {@code force(false)} (fdatasync); a FUA write is the write followed
 * by {@code force(false)}. {@code discard} is a no-op (the JDK cannot punch holes).
 *
 * <p><b>Interrupts.</b> I/O goes through a {@link ReopeningChannel} (embedded from
 * driver-support): the caller's interrupt status is cleared for the duration of a call, and a
 * channel closed by an interrupt anyway is reopened and the request retried.
 */
final class FileTarget extends FileBackedTarget {
    private static final Logger LOG = LoggerFactory.getLogger(FileTarget.class);
    static final String TYPE = "file";
    /** Zeroes for writeZeroes, shared and read-only (direct, so the JDK writes it without copying). */
    private static final ByteBuffer ZEROES = ByteBuffer.allocateDirect(1 << 20).asReadOnlyBuffer();

    private FileTarget(Path path, long size, FileChannel channel, ImageClaims.Claim claim) {
        super(path, size, new ReopeningChannel(path, channel, FileTarget::openChannel, LOG), claim);
    }

    /**
     * Checks the spec against the file system, claims the file for {@code device} (refused if
     * another device has it open), creates or grows the file if asked, opens it.
     */
    static FileTarget open(FileSpec spec, String device) throws IOException {
        return open(spec, device, FileSpec.Progress.NONE);
    }

    /** As {@link #open(FileSpec, String)}; a preallocation reports to {@code progress}. */
    static FileTarget open(FileSpec spec, String device, FileSpec.Progress progress) throws IOException {
        FileSpec.Plan plan = spec.check();
        ImageClaims.Claim claim = spec.prepareClaimed(plan, device, progress);
        FileChannel ch = null;
        try {
            try {
                ch = openChannel(spec.path);
            } catch (IOException e) {
                throw new DeviceIOException(spec.path.toString(), 0, "cannot open: " + e, e);
            }
            return new FileTarget(spec.path, plan.size, ch, claim);
        } catch (Throwable e) {
            // also a NoClassDefFoundError when this bundle is refreshed during the build: the
            // claim must not outlive a target that never came to be, or the rebuild is refused
            claim.release();
            ReopeningChannel.closeQuietly(ch);
            throw e;
        }
    }

    private static FileChannel openChannel(Path path) throws IOException {
        return FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
    }

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        int n = dst.remaining();
        Requests.check(size, offset, n);
        if (n == 0) {
            return;
        }
        counters.reads.increment();
        counters.readBytes.add(n);
        io.readFully(dst, offset);
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        int n = src.remaining();
        Requests.check(size, offset, n);
        if (n == 0) {
            return;
        }
        counters.writes.increment();
        counters.writtenBytes.add(n);
        io.writeFully(src, offset);
        if ((flags & FUA) != 0) {
            counters.fuaWrites.increment();
            io.force(offset);
        }
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
        counters.zeroes.increment();
        counters.zeroedBytes.add(length);
        ByteBuffer z = ZEROES.duplicate();
        long pos = offset;
        long end = offset + length;
        while (pos < end) {
            z.clear().limit((int) Math.min(z.capacity(), end - pos));
            io.writeFully(z, pos);
            pos += z.limit();
        }
        if ((flags & FUA) != 0) {
            io.force(offset);
        }
    }
}
