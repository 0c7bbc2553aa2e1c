package dev.strata.testsupport.crash;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceIOException;
import dev.strata.api.Requests;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Random;

/**
 * An in-memory disk with a volatile write cache, to crash on purpose.
 *
 * <p>A completed write (or zeroing or discard) lands in the volatile cache and is visible to
 * reads at once. It becomes durable when a later {@link #flush()} completes, or at once if it
 * carried {@link #FUA}. {@link #crash(CrashMode, Random)} is a power loss: the durable contents
 * survive, volatile writes are dropped (all, a random subset, or with one torn at a sector
 * boundary — see {@link CrashMode}), and this instance is dead: every later call fails with a
 * {@link DeviceIOException}, so a target that was running above it cannot touch the medium any
 * more. {@link #restart()} powers the disk on again and returns a new device over what
 * survived.
 *
 * <p>A FUA write supersedes the volatile copies of its sectors (a disk never destages an older
 * cached copy over newer durable data). Two volatile writes to the same sector may survive in
 * any combination: the later one wins if both do.
 *
 * <p>Thread-safe (one lock); meant for tests of a few MiB.
 */
public final class CrashableDevice implements BlockDevice {
    private static final int SECTOR_SHIFT = 9;

    private final String name;
    private final int blockSize;
    private final byte[] durable;
    private final byte[] current;
    private final List<Volatile> pending = new ArrayList<>();
    private boolean alive = true;
    private volatile PowerSwitch power;
    private long nextSeq;
    private long writes;
    private long flushes;
    private long fuaWrites;

    /** A zero-filled device of {@code size} bytes. */
    public CrashableDevice(String name, long size, int blockSize) {
        this(name, new byte[checkedSize(size, blockSize)], new byte[(int) size], blockSize);
    }

    private CrashableDevice(String name, byte[] image, int blockSize) {
        this(name, image, image.clone(), blockSize);
    }

    private CrashableDevice(String name, byte[] image, byte[] current, int blockSize) {
        if (blockSize != 512 && blockSize != 4096) {
            throw new IllegalArgumentException("block size must be 512 or 4096: " + blockSize);
        }
        if (image.length % blockSize != 0) {
            throw new IllegalArgumentException("image of " + image.length + " bytes is not a multiple of " + blockSize);
        }
        this.name = name;
        this.blockSize = blockSize;
        this.durable = image;
        this.current = current;
    }

    /** A device whose durable contents are {@code image} (copied). */
    public static CrashableDevice ofImage(String name, byte[] image, int blockSize) {
        return new CrashableDevice(name, image.clone(), blockSize);
    }

    private static int checkedSize(long size, int blockSize) {
        if (size <= 0 || size > Integer.MAX_VALUE - 4096 || size % blockSize != 0) {
            throw new IllegalArgumentException("size " + size + " must be a positive multiple of " + blockSize + " below 2 GiB");
        }
        return (int) size;
    }

    public String name() {
        return name;
    }

    @Override
    public long size() {
        return durable.length;
    }

    @Override
    public int blockSize() {
        return blockSize;
    }

    @Override
    public boolean canFastZero() {
        return true;
    }

    @Override
    public synchronized void read(long offset, ByteBuffer dst) throws DeviceIOException {
        Requests.check(this, offset, dst.remaining());
        checkAlive(offset);
        dst.put(current, (int) offset, dst.remaining());
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws DeviceIOException {
        Requests.check(this, offset, src.remaining());
        checkPower(offset);
        writeLocked(offset, src, flags);
    }

    private synchronized void writeLocked(long offset, ByteBuffer src, int flags) throws DeviceIOException {
        checkAlive(offset);
        byte[] data = new byte[src.remaining()];
        src.get(data);
        record(offset, data, data.length, (flags & FUA) != 0);
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws DeviceIOException {
        Requests.check(this, offset, length);
        checkPower(offset);
        zeroLocked(offset, length, flags);
    }

    private synchronized void zeroLocked(long offset, long length, int flags) throws DeviceIOException {
        checkAlive(offset);
        record(offset, null, (int) length, (flags & FUA) != 0);
    }

    @Override
    public void discard(long offset, long length) throws DeviceIOException {
        Requests.check(this, offset, length);
        checkPower(offset);
        discardLocked(offset, length);
    }

    private synchronized void discardLocked(long offset, long length) throws DeviceIOException {
        checkAlive(offset);
        record(offset, null, (int) length, false);
    }

    @Override
    public void flush() throws DeviceIOException {
        checkPower(-1);
        flushLocked();
    }

    private synchronized void flushLocked() throws DeviceIOException {
        checkAlive(-1);
        flushes++;
        flushBefore(Long.MAX_VALUE);
    }

    /** Nothing to release; a closed device keeps its contents (it is not a crash). */
    @Override
    public void close() {
    }

    // ---- test controls -------------------------------------------------------------------

    /**
     * Writes with a FUA flag or not, returning the write's sequence number (for
     * {@link #flushBefore}); used by log replay, which must reproduce a flush that covered only
     * the writes completed before it was called.
     */
    synchronized long record(long offset, byte[] data, int length, boolean fua) {
        writes++;
        int first = (int) (offset >>> SECTOR_SHIFT);
        int sectors = length >>> SECTOR_SHIFT;
        if (data == null) {
            java.util.Arrays.fill(current, (int) offset, (int) offset + length, (byte) 0);
        } else {
            System.arraycopy(data, 0, current, (int) offset, length);
        }
        long seq = nextSeq++;
        if (fua) {
            fuaWrites++;
            if (data == null) {
                java.util.Arrays.fill(durable, (int) offset, (int) offset + length, (byte) 0);
            } else {
                System.arraycopy(data, 0, durable, (int) offset, length);
            }
            for (Volatile v : pending) {
                v.supersede(first, sectors);
            }
            pending.removeIf(v -> v.live.isEmpty());
        } else {
            pending.add(new Volatile(seq, first, sectors, data));
        }
        return seq;
    }

    /** Makes durable the volatile writes with a sequence number below {@code seq}. */
    synchronized void flushBefore(long seq) {
        var it = pending.iterator();
        while (it.hasNext()) {
            Volatile v = it.next();
            if (v.seq < seq) {
                v.applyTo(durable, null);
                it.remove();
            }
        }
    }

    /**
     * Power loss: computes what survives (see {@link CrashMode}), makes it the durable contents
     * and kills this instance. Returns what happened to the volatile writes.
     */
    public synchronized CrashReport crash(CrashMode mode, Random random) {
        CrashReport report = survivors(mode, random, durable);
        pending.clear();
        System.arraycopy(durable, 0, current, 0, durable.length);
        alive = false;
        return report;
    }

    /**
     * The contents a crash in {@code mode} would leave, without crashing: a new image. Used by
     * log replay to produce several crash images of one point.
     */
    public synchronized byte[] crashImage(CrashMode mode, Random random) {
        byte[] image = durable.clone();
        survivors(mode, random, image);
        return image;
    }

    private CrashReport survivors(CrashMode mode, Random random, byte[] image) {
        int torn = -1;
        if (mode == CrashMode.TORN) {
            List<Integer> candidates = new ArrayList<>();
            for (int i = 0; i < pending.size(); i++) {
                if (pending.get(i).live.cardinality() >= 2) {
                    candidates.add(i);
                }
            }
            if (!candidates.isEmpty()) {
                torn = candidates.get(random.nextInt(candidates.size()));
            }
        }
        int kept = 0;
        for (int i = 0; i < pending.size(); i++) {
            Volatile v = pending.get(i);
            if (i == torn) {
                BitSet part = (BitSet) v.live.clone();
                int n = v.live.cardinality();
                int boundary = 1 + random.nextInt(n - 1);
                int cut = v.live.stream().skip(boundary).findFirst().orElseThrow();
                if (random.nextBoolean()) {
                    part.clear(cut, v.sectors);
                } else {
                    part.clear(0, cut);
                }
                v.applyTo(image, part);
                continue;
            }
            boolean keep = switch (mode) {
                case DROP_ALL -> false;
                case KEEP_ALL -> true;
                case SUBSET, TORN -> random.nextBoolean();
            };
            if (keep) {
                v.applyTo(image, null);
                kept++;
            }
        }
        return new CrashReport(mode, pending.size(), kept, torn >= 0 ? 1 : 0);
    }

    /**
     * Powers the disk on again after {@link #crash}: a new, live device over the surviving
     * contents, with an empty volatile cache.
     */
    public synchronized CrashableDevice restart() {
        if (alive) {
            throw new IllegalStateException(name + " has not crashed");
        }
        return new CrashableDevice(name, durable, blockSize);
    }

    /** Whether this instance is usable (it has not crashed). */
    public synchronized boolean alive() {
        return alive;
    }

    /** A copy of the contents reads return. */
    public synchronized byte[] currentImage() {
        return current.clone();
    }

    /** A copy of the durable contents (what a {@link CrashMode#DROP_ALL} crash would leave). */
    public synchronized byte[] durableImage() {
        return durable.clone();
    }

    /** How many completed writes are still volatile. */
    public synchronized int volatileWrites() {
        return pending.size();
    }

    /** Counters: writes (incl. zeroes/discards), FUA writes, flushes. */
    public synchronized String stats() {
        return name + ": writes " + writes + ", fua " + fuaWrites + ", flushes " + flushes + ", volatile " + pending.size();
    }

    /**
     * Connects this device to a {@link PowerSwitch}: every later write, zeroing, discard or flush
     * counts against its budget, and the request that exceeds it cuts the power of every device
     * on the switch (and fails). Called outside the device's lock, so the switch can crash the
     * other devices without lock-order trouble.
     */
    public void connect(PowerSwitch power) {
        this.power = power;
    }

    private void checkPower(long offset) throws DeviceIOException {
        PowerSwitch p = power;
        if (p != null && p.consume()) {
            throw new DeviceIOException(name, offset, "power lost while this request was issued");
        }
    }

    private void checkAlive(long offset) throws DeviceIOException {
        if (!alive) {
            throw new DeviceIOException(name, offset, "device has crashed (power lost); restart it");
        }
    }

    @Override
    public String toString() {
        return "crashable:" + name;
    }

    /** What a crash did to the volatile writes. */
    public record CrashReport(CrashMode mode, int volatileWrites, int kept, int torn) {
    }

    private static final class Volatile {
        final long seq;
        final int first;
        final int sectors;
        final byte[] data; // null: zeroes
        final BitSet live;

        Volatile(long seq, int first, int sectors, byte[] data) {
            this.seq = seq;
            this.first = first;
            this.sectors = sectors;
            this.data = data;
            this.live = new BitSet(sectors);
            live.set(0, sectors);
        }

        void supersede(int from, int count) {
            int lo = Math.max(from, first);
            int hi = Math.min(from + count, first + sectors);
            if (lo < hi) {
                live.clear(lo - first, hi - first);
            }
        }

        void applyTo(byte[] image, BitSet only) {
            BitSet which = only == null ? live : only;
            for (int i = which.nextSetBit(0); i >= 0; i = which.nextSetBit(i + 1)) {
                int at = (first + i) << SECTOR_SHIFT;
                if (data == null) {
                    java.util.Arrays.fill(image, at, at + 512, (byte) 0);
                } else {
                    System.arraycopy(data, i << SECTOR_SHIFT, image, at, 512);
                }
            }
        }
    }
}
