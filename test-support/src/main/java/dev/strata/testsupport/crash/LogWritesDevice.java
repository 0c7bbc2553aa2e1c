package dev.strata.testsupport.crash;

import dev.strata.api.BlockDevice;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The in-process twin of the {@code logwrites} target: passes every request to the device below
 * and, once it has completed, records it in a {@link WriteLog} — writes with their data, zeroing,
 * discards, FUA, and flushes with the log position at the moment they were called. A request
 * that fails is not recorded. The log is in completion order, so replaying it never shows a
 * state the device below could not have had.
 */
public final class LogWritesDevice implements BlockDevice {
    private final BlockDevice lower;
    private final WriteLog log;
    private final int device;

    /** Records requests to {@code lower} into {@code log} as device number {@code device}. */
    public LogWritesDevice(BlockDevice lower, WriteLog log, int device) {
        this.lower = lower;
        this.log = log;
        this.device = device;
    }

    public BlockDevice lower() {
        return lower;
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
        lower.read(offset, dst);
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        byte[] data = new byte[src.remaining()];
        src.duplicate().get(data);
        lower.write(offset, src, flags);
        log.append(device, LogEntry.Kind.WRITE, (flags & FUA) != 0, offset, data.length, 0, data);
    }

    @Override
    public void flush() throws IOException {
        long covers = log.position();
        lower.flush();
        log.append(device, LogEntry.Kind.FLUSH, false, 0, 0, covers, null);
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        lower.discard(offset, length);
        log.append(device, LogEntry.Kind.DISCARD, false, offset, length, 0, null);
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws IOException {
        lower.writeZeroes(offset, length, flags);
        log.append(device, LogEntry.Kind.ZERO, (flags & FUA) != 0, offset, length, 0, null);
    }

    @Override
    public void extents(long offset, long length, ExtentSink sink) throws IOException {
        lower.extents(offset, length, sink);
    }

    /** Does not close the device below (it is not ours). */
    @Override
    public void close() {
    }

    @Override
    public String toString() {
        return "logwrites:" + lower;
    }
}
