package dev.strata.core.internal;

import java.io.IOException;
import java.nio.ByteBuffer;

import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceIOException;

/** A use of a mapped device by a holder (an NBD export, a tool); gated like every I/O. */
final class Handle implements DeviceHandle {
    private final MappedDevice device;
    private final java.util.function.BiConsumer<MappedDevice, Handle> release;
    final String holder;
    private volatile boolean closed;

    Handle(java.util.function.BiConsumer<MappedDevice, Handle> release, MappedDevice device, String holder) {
        this.release = release;
        this.device = device;
        this.holder = holder;
    }

    private void check(long offset) throws IOException {
        if (closed) {
            throw new DeviceIOException(device.name, offset, "the handle held by " + holder + " is closed");
        }
    }

    @Override
    public String name() {
        return device.name;
    }

    @Override
    public long size() {
        return device.size;
    }

    @Override
    public int blockSize() {
        return device.blockSize;
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        check(offset);
        device.read(offset, dst);
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        check(offset);
        device.write(offset, src, flags);
    }

    @Override
    public void flush() throws IOException {
        check(-1);
        device.flush();
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        check(offset);
        device.discard(offset, length);
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws IOException {
        check(offset);
        device.writeZeroes(offset, length, flags);
    }

    @Override
    public boolean canFastZero() {
        return device.canFastZero();
    }

    @Override
    public void extents(long offset, long length, ExtentSink sink) throws IOException {
        check(offset);
        device.extents(offset, length, sink);
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            release.accept(device, this);
        }
    }

    @Override
    public String toString() {
        return "handle of " + device.name + " held by " + holder;
    }
}
