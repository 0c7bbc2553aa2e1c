package dev.strata.testsupport.target;

import java.io.IOException;
import java.nio.ByteBuffer;

import dev.strata.api.BlockDevice;

/**
 * A {@link BlockDevice} that passes every call to another one. Tests extend it to wrap a device
 * (close a server with it, hold a name, break one rule) and override only what differs. Its
 * {@link #close()} does nothing: the wrapped device belongs to whoever made it.
 */
public class ForwardingBlockDevice implements BlockDevice {
    protected final BlockDevice lower;

    public ForwardingBlockDevice(BlockDevice lower) {
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
    public void read(long offset, ByteBuffer dst) throws IOException {
        lower.read(offset, dst);
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        lower.write(offset, src, flags);
    }

    @Override
    public void flush() throws IOException {
        lower.flush();
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        lower.discard(offset, length);
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws IOException {
        lower.writeZeroes(offset, length, flags);
    }

    @Override
    public boolean canFastZero() {
        return lower.canFastZero();
    }

    @Override
    public void extents(long offset, long length, ExtentSink sink) throws IOException {
        lower.extents(offset, length, sink);
    }

    @Override
    public void close() throws IOException {
    }
}
