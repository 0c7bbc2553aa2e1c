package dev.strata.tools.internal.format;

import dev.strata.api.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.TreeMap;

/**
 * A read-only view of a cache device with corrected blocks laid over it: the check runs the
 * cache's own recovery through this view, so a correction found for one header lets the scan go
 * on to the next, without writing anything. {@code repair} writes the same patches for real.
 */
public final class Overlay implements BlockDevice {
    private final BlockDevice device;
    private final TreeMap<Long, byte[]> patches = new TreeMap<>();

    public Overlay(BlockDevice device) {
        this.device = device;
    }

    /** Lays {@code bytes} over the device at {@code offset} (replacing an earlier patch there). */
    public void patch(long offset, byte[] bytes) {
        patches.put(offset, bytes.clone());
    }

    public Map<Long, byte[]> patches() {
        return patches;
    }

    /** Writes every patch to the device and flushes it. */
    public void commit() throws IOException {
        for (Map.Entry<Long, byte[]> e : patches.entrySet()) {
            device.write(e.getKey(), ByteBuffer.wrap(e.getValue()), 0);
        }
        device.flush();
    }

    @Override
    public long size() {
        return device.size();
    }

    @Override
    public int blockSize() {
        return device.blockSize();
    }

    @Override
    public synchronized void read(long offset, ByteBuffer dst) throws IOException {
        int start = dst.position();
        int len = dst.remaining();
        device.read(offset, dst);
        Long from = patches.floorKey(offset);
        for (Map.Entry<Long, byte[]> e : patches.tailMap(from == null ? offset : from, true).entrySet()) {
            long p = e.getKey();
            byte[] b = e.getValue();
            if (p >= offset + len) {
                break;
            }
            long lo = Math.max(p, offset);
            long hi = Math.min(p + b.length, offset + len);
            for (long i = lo; i < hi; i++) {
                dst.put(start + (int) (i - offset), b[(int) (i - p)]);
            }
        }
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) {
        throw new UnsupportedOperationException("the check's view of a device is read-only");
    }

    @Override
    public void flush() {
    }

    @Override
    public void discard(long offset, long length) {
        throw new UnsupportedOperationException("the check's view of a device is read-only");
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) {
        throw new UnsupportedOperationException("the check's view of a device is read-only");
    }

    @Override
    public void close() {
    }
}
