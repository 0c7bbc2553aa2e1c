package dev.strata.testkit.internal.error;

import dev.strata.api.DeviceIOException;
import dev.strata.api.Requests;
import dev.strata.api.Target;

import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The {@code error} target: a device of a given size on which every I/O fails at once with a
 * {@link DeviceIOException} naming the device and the offset (like dm-error). Misaligned or
 * out-of-range requests are still rejected as such first.
 */
final class ErrorTarget implements Target {
    static final String TYPE = "error";

    private final String name;
    private final long size;
    private final int blockSize;
    private final AtomicLong errors = new AtomicLong();

    ErrorTarget(String name, long size, int blockSize) {
        this.name = name;
        this.size = size;
        this.blockSize = blockSize;
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

    @Override
    public void read(long offset, ByteBuffer dst) throws DeviceIOException {
        Requests.check(this, offset, dst.remaining());
        throw fail(offset, "read");
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws DeviceIOException {
        Requests.check(this, offset, src.remaining());
        throw fail(offset, "write");
    }

    @Override
    public void flush() throws DeviceIOException {
        throw fail(-1, "flush");
    }

    @Override
    public void discard(long offset, long length) throws DeviceIOException {
        Requests.check(this, offset, length);
        throw fail(offset, "discard");
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws DeviceIOException {
        Requests.check(this, offset, length);
        throw fail(offset, "write zeroes");
    }

    private DeviceIOException fail(long offset, String what) {
        errors.incrementAndGet();
        return new DeviceIOException(name, offset, what + " failed: error target (every I/O fails)");
    }

    @Override
    public Map<String, String> status() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("size", Long.toString(size));
        m.put("errors", Long.toString(errors.get()));
        return m;
    }

    @Override
    public void suspend() {
    }

    @Override
    public void close() {
    }

    @Override
    public String toString() {
        return "error:" + name;
    }
}
