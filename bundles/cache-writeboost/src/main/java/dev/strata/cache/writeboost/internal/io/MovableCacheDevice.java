package dev.strata.cache.writeboost.internal.io;

import dev.strata.api.BlockDevice;
import dev.strata.api.InvalidArgumentException;
import dev.strata.cache.support.units.Iec;
import dev.strata.cache.writeboost.internal.format.Superblock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The cache device as every part of a writeboost cache holds it ({@code LogState.cache}): a
 * forwarder to the device in use, so that {@code cache:replace} can move a suspended cache onto a
 * copy of its device with its in-memory state (index, log positions, per-segment arrays) instead
 * of closing it and recovering the log over the copy inside the pause — that recovery reads one
 * header per log record and grew with the dirty data (≈ 350 ms at 1 GiB).
 * <p>
 * What the copy must hold ({@link #liveExtents}): the metadata area (superblock, record slots) and
 * the segments after the reclaimed one up to the head. Outside them a copy may hold anything:
 * recovery reads only the segments after the durable record's reclaimed segment, the in-memory
 * {@code reclaimSid} is that record's (set once it is durable), and a header there is taken only if
 * it carries the next record id and chains to the previous header's CRC — garbage ends the log,
 * as the end of the log does on the old device.
 */
final class MovableCacheDevice implements BlockDevice {
    private volatile BlockDevice device;

    MovableCacheDevice(BlockDevice device) {
        this.device = device;
    }

    /** The byte ranges a copy of the cache device must hold, as {@code offset, length} pairs. */
    static long[] liveExtents(LogState log) {
        long reclaimed;
        long head;
        log.lock.lock();
        try {
            reclaimed = log.reclaimSid;
            head = log.headSid;
        } finally {
            log.lock.unlock();
        }
        Superblock sb = log.sb;
        long first = sb.firstSegmentOffset();
        long seg = sb.segmentSize();
        int n = log.nSeg;
        List<long[]> out = new ArrayList<>();
        out.add(new long[] {0, first});
        long count = Math.max(0, Math.min(n, head - reclaimed));
        if (count == n) {
            out.add(new long[] {first, n * seg});
        } else {
            for (long sid = reclaimed + 1; sid <= head; sid++) {
                long off = first + (sid % n) * seg;
                long[] last = out.get(out.size() - 1);
                if (last[0] + last[1] == off) {
                    last[1] += seg; // the next physical segment: one range
                } else {
                    out.add(new long[] {off, seg});
                }
            }
        }
        long[] pairs = new long[out.size() * 2];
        for (int i = 0; i < out.size(); i++) {
            pairs[2 * i] = out.get(i)[0];
            pairs[2 * i + 1] = out.get(i)[1];
        }
        return pairs;
    }

    /** Moves a suspended cache onto {@code copy}; false if its cache device is not movable. */
    static boolean move(LogState log, BlockDevice copy) throws IOException {
        if (!(log.cache instanceof MovableCacheDevice m)) {
            return false;
        }
        log.lock.lock();
        try {
            if (!log.suspended || log.closed) {
                throw new IllegalStateException("writeboost: the cache device can be moved only while suspended");
            }
            if (log.failure != null) {
                throw new IOException("writeboost: the cache failed (" + log.failure.getMessage()
                        + "); it cannot move to another cache device", log.failure);
            }
        } finally {
            log.lock.unlock();
        }
        if (copy.size() < log.sb.usedBytes()) {
            throw new InvalidArgumentException("writeboost: the new cache device has " + Iec.size(copy.size())
                    + "; the cache needs " + Iec.size(log.sb.usedBytes()));
        }
        if (copy.blockSize() > BS || BS % copy.blockSize() != 0) {
            throw new InvalidArgumentException("writeboost: the new cache device has " + copy.blockSize()
                    + "-byte blocks; the cache needs blocks that divide " + BS);
        }
        m.device = copy;
        return true;
    }

    private static final int BS = dev.strata.cache.writeboost.internal.format.Layout.BLOCK;

    @Override
    public long size() {
        return device.size();
    }

    @Override
    public int blockSize() {
        return device.blockSize();
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        device.read(offset, dst);
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        device.write(offset, src, flags);
    }

    @Override
    public void flush() throws IOException {
        device.flush();
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        device.discard(offset, length);
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws IOException {
        device.writeZeroes(offset, length, flags);
    }

    @Override
    public boolean canFastZero() {
        return device.canFastZero();
    }

    @Override
    public void extents(long offset, long length, ExtentSink sink) throws IOException {
        device.extents(offset, length, sink);
    }

    @Override
    public void close() {
        // the cache device belongs to the manager
    }

    @Override
    public String toString() {
        return String.valueOf(device);
    }
}
