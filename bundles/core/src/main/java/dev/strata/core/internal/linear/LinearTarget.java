package dev.strata.core.internal.linear;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;

import dev.strata.api.BlockDevice;
import dev.strata.api.Requests;
import dev.strata.api.Target;

/**
 * {@code [offset, offset+length)} of a lower device as a device of its own. Every request is
 * checked against the window, then passed on with the offset added; flags (FUA, NO_HOLE,
 * FAST_ZERO), flush, discard and extents pass through. Holds no state: the lower device is
 * always up to date, {@code suspend} and {@code close} only flush it.
 */
final class LinearTarget implements Target {
    private final String name;
    private final String lowerName;
    private final BlockDevice lower;
    private final long offset;
    private final long length;
    private final int blockSize;

    LinearTarget(String name, String lowerName, BlockDevice lower, long offset, long length) {
        this.name = name;
        this.lowerName = lowerName;
        this.lower = lower;
        this.offset = offset;
        this.length = length;
        int lbs = lower.blockSize();
        this.blockSize = offset % lbs == 0 && length % lbs == 0 ? lbs : BlockDevice.SECTOR;
    }

    @Override
    public String type() {
        return LinearTargetFactory.TYPE;
    }

    @Override
    public long size() {
        return length;
    }

    @Override
    public int blockSize() {
        return blockSize;
    }

    @Override
    public void read(long off, ByteBuffer dst) throws IOException {
        Requests.check(length, off, dst.remaining());
        lower.read(offset + off, dst);
    }

    @Override
    public void write(long off, ByteBuffer src, int flags) throws IOException {
        Requests.check(length, off, src.remaining());
        lower.write(offset + off, src, flags);
    }

    @Override
    public void flush() throws IOException {
        lower.flush();
    }

    @Override
    public void discard(long off, long len) throws IOException {
        Requests.check(length, off, len);
        lower.discard(offset + off, len);
    }

    @Override
    public void writeZeroes(long off, long len, int flags) throws IOException {
        Requests.check(length, off, len);
        lower.writeZeroes(offset + off, len, flags);
    }

    @Override
    public boolean canFastZero() {
        return lower.canFastZero();
    }

    @Override
    public void extents(long off, long len, ExtentSink sink) throws IOException {
        Requests.check(length, off, len);
        long base = offset;
        long end = off + len;
        lower.extents(base + off, len, (o, l, flags) -> {
            long from = Math.max(o - base, off);
            long to = Math.min(o - base + l, end);
            if (to > from) {
                sink.extent(from, to - from, flags);
            }
        });
    }

    @Override
    public Map<String, String> status() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("device", lowerName);
        m.put("offset", Long.toString(offset));
        m.put("length", Long.toString(length));
        return m;
    }

    @Override
    public void close() throws IOException {
        lower.flush();
    }

    @Override
    public String toString() {
        return "linear " + name + " over " + lowerName + " [" + offset + ", +" + length + ")";
    }
}
