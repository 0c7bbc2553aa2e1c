package dev.strata.testkit.internal.common;

import dev.strata.api.BlockDevice;
import dev.strata.api.Requests;
import dev.strata.api.Target;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A target that passes every request to one lower device; the test-kit targets override the
 * requests they change. Requests are checked ({@link Requests#check}) before anything else so
 * a bad request never reaches a fault or a delay. The lower device is not closed (it belongs to
 * the manager).
 */
public abstract class ForwardingTarget implements Target {
    protected final String name;
    protected final BlockDevice lower;

    protected ForwardingTarget(String name, BlockDevice lower) {
        this.name = name;
        this.lower = lower;
    }

    @Override
    public long size() {
        return lower.size();
    }

    @Override
    public int blockSize() {
        return lower.blockSize();
    }

    @Override
    public boolean canFastZero() {
        return lower.canFastZero();
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        Requests.check(this, offset, dst.remaining());
        lower.read(offset, dst);
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        Requests.check(this, offset, src.remaining());
        lower.write(offset, src, flags);
    }

    @Override
    public void flush() throws IOException {
        lower.flush();
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        Requests.check(this, offset, length);
        lower.discard(offset, length);
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws IOException {
        Requests.check(this, offset, length);
        lower.writeZeroes(offset, length, flags);
    }

    @Override
    public void extents(long offset, long length, ExtentSink sink) throws IOException {
        lower.extents(offset, length, sink);
    }

    @Override
    public Map<String, String> status() {
        return new LinkedHashMap<>();
    }

    /** Makes everything durable below; does not close the lower device. */
    @Override
    public void close() throws IOException {
        lower.flush();
    }

    @Override
    public String toString() {
        return type() + ":" + name;
    }
}
