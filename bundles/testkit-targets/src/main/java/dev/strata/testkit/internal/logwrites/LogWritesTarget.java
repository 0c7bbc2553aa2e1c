package dev.strata.testkit.internal.logwrites;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceIOException;
import dev.strata.api.Requests;
import dev.strata.testkit.internal.common.ForwardingTarget;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;

/**
 * The {@code logwrites} target (after dm-log-writes): passes every request to {@code device}
 * and, once it has completed, appends it to the log device — writes with their data, zeroing,
 * discards, the FUA flag, and flushes with the sequence number current when they were called
 * (the writes they make durable). Entries are in completion order, so a replay never shows a
 * state the device could not have had. The format is documented in {@code docs/testing.md}
 * (and read by {@code dev.strata.testsupport.crash.LogFormat}).
 *
 * <p>Sequence numbers come from one counter per JVM, so the logs of several devices (a cache and
 * its backing device) merge into one order. Every create starts a new recording (a new log id).
 * A request that does not fit in the log fails with an I/O error (it may or may not have reached
 * the device, as with any failed write) and so does everything after it: the recording stays
 * a faithful prefix.
 */
final class LogWritesTarget extends ForwardingTarget {
    static final String TYPE = "logwrites";
    static final long SUPER_MAGIC = 0x53544C4F47575231L;
    static final long ENTRY_MAGIC = 0x4C57454E54525931L;
    static final int KIND_WRITE = 1;
    static final int KIND_ZERO = 2;
    static final int KIND_DISCARD = 3;
    static final int KIND_FLUSH = 4;
    private static final int SECTOR = BlockDevice.SECTOR;

    /** Global completion order of every log in this JVM. */
    private static final AtomicLong SEQUENCE = new AtomicLong();

    private final BlockDevice log;
    private final long logId;
    private final ByteBuffer header = ByteBuffer.allocate(SECTOR);
    private long position = SECTOR;
    private long index;
    private boolean full;
    private long bytesLogged;

    private LogWritesTarget(String name, BlockDevice device, BlockDevice log, long logId) {
        super(name, device);
        this.log = log;
        this.logId = logId;
    }

    /** Starts a new recording on {@code log}: writes its superblock. */
    static LogWritesTarget create(String name, BlockDevice device, BlockDevice log) throws IOException {
        long logId = ThreadLocalRandom.current().nextLong();
        ByteBuffer sb = ByteBuffer.allocate(SECTOR);
        sb.putLong(0, SUPER_MAGIC).putInt(8, 1).putInt(12, device.blockSize()).putLong(16, device.size()).putLong(24, logId);
        sb.putInt(32, crc(sb, 0, 32));
        log.write(0, sb, FUA);
        // end any older recording right after the superblock
        log.write(SECTOR, ByteBuffer.allocate(SECTOR), FUA);
        return new LogWritesTarget(name, device, log, logId);
    }

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        Requests.check(this, offset, src.remaining());
        ByteBuffer data = src.duplicate();
        checkRoom(offset, SECTOR + (long) src.remaining());
        lower.write(offset, src, flags);
        append(KIND_WRITE, flags & FUA, offset, data.remaining(), 0, data);
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws IOException {
        Requests.check(this, offset, length);
        checkRoom(offset, SECTOR);
        lower.writeZeroes(offset, length, flags);
        append(KIND_ZERO, flags & FUA, offset, length, 0, null);
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        Requests.check(this, offset, length);
        checkRoom(offset, SECTOR);
        lower.discard(offset, length);
        append(KIND_DISCARD, 0, offset, length, 0, null);
    }

    @Override
    public void flush() throws IOException {
        checkRoom(-1, SECTOR);
        long covers = SEQUENCE.get();
        lower.flush();
        append(KIND_FLUSH, 0, 0, 0, covers, null);
    }

    private void checkRoom(long offset, long bytes) throws DeviceIOException {
        synchronized (header) {
            if (full || position + bytes > log.size()) {
                full = true;
                throw new DeviceIOException(name, offset, "log device full after " + index + " entries ("
                        + position + " of " + log.size() + " bytes); recording stopped");
            }
        }
    }

    private void append(int kind, int flags, long offset, long length, long covers, ByteBuffer data) throws IOException {
        synchronized (header) {
            long need = SECTOR + (data == null ? 0 : length);
            if (full || position + need > log.size()) {
                full = true;
                throw new DeviceIOException(name, offset, "log device full after " + index + " entries; recording stopped");
            }
            long seq = SEQUENCE.getAndIncrement();
            header.clear();
            header.putLong(0, ENTRY_MAGIC).putLong(8, logId).putLong(16, index).putLong(24, seq).putInt(32, kind).putInt(36, flags)
                    .putLong(40, offset).putLong(48, length).putLong(56, covers).putInt(64, data == null ? 0 : crc(data, data.position(), data.limit()));
            header.putInt(68, crc(header, 0, 68));
            try {
                log.write(position, header, 0);
                if (data != null) {
                    log.write(position + SECTOR, data, 0);
                }
                if (kind == KIND_FLUSH || flags != 0) {
                    log.flush();
                }
            } catch (IOException e) {
                full = true;
                throw new DeviceIOException(name, offset, "log device failed; recording stopped: " + e.getMessage(), e);
            }
            position += need;
            index++;
            bytesLogged += length;
        }
    }

    private static int crc(ByteBuffer b, int from, int to) {
        CRC32C c = new CRC32C();
        ByteBuffer d = b.duplicate();
        d.limit(to).position(from);
        c.update(d);
        return (int) c.getValue();
    }

    @Override
    public Map<String, String> status() {
        Map<String, String> m = new LinkedHashMap<>();
        synchronized (header) {
            m.put("entries", Long.toString(index));
            m.put("data_bytes", Long.toString(bytesLogged));
            m.put("log_used", Long.toString(position));
            m.put("log_size", Long.toString(log.size()));
            m.put("state", full ? "full" : "recording");
        }
        return m;
    }

    /** Makes everything durable; the flush is recorded (unless the log is full). */
    @Override
    public void close() throws IOException {
        boolean recording;
        synchronized (header) {
            recording = !full;
        }
        if (recording) {
            flush();
        } else {
            lower.flush();
        }
        log.flush();
    }
}
