package dev.strata.core.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;

import dev.strata.api.BlockDevice;
import dev.strata.api.Target;

/**
 * The backing device standing in for a cache target while the cache's new target is built on a
 * released cache device ({@link Switcher}, in place): every request goes straight to the backing
 * device's view, so clients are served while the new cache formats its device instead of waiting
 * at the gate. Only safe while no cache holds copies of the backing device — the old one is closed
 * and the new one starts empty (formatted) — and while the backing device holds every block (the
 * old one was clean). Holds no state; {@code close} does not close the backing device.
 */
final class Bridge implements Target {
    static final String TYPE = "switching";
    private final String backingName;
    private final BlockDevice backing;

    Bridge(String backingName, BlockDevice backing) {
        this.backingName = backingName;
        this.backing = backing;
    }

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public long size() {
        return backing.size();
    }

    @Override
    public int blockSize() {
        return backing.blockSize();
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        backing.read(offset, dst);
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        backing.write(offset, src, flags);
    }

    @Override
    public void flush() throws IOException {
        backing.flush();
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        backing.discard(offset, length);
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws IOException {
        backing.writeZeroes(offset, length, flags);
    }

    @Override
    public boolean canFastZero() {
        return backing.canFastZero();
    }

    @Override
    public void extents(long offset, long length, ExtentSink sink) throws IOException {
        backing.extents(offset, length, sink);
    }

    @Override
    public Map<String, String> status() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("serving_from", backingName);
        return m;
    }

    @Override
    public void close() {
        // the backing device belongs to the device manager; its writes are flushed by the switch
    }
}
