package dev.strata.testsupport.load;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.zip.CRC32C;

import dev.strata.api.BlockDevice;

/**
 * Concurrent verified I/O through one or more block devices: each thread owns its own 4 KiB blocks,
 * writes stamped and checksummed blocks (a flush every 16 writes), reads them back and checks
 * them. Counts errors and mismatches, and keeps the longest single request (the I/O pause a
 * client sees). {@link #verifyAll} checks every block's last acknowledged stamp at the end;
 * {@link #verifyAfterCrash} checks the disk rule after a power cut: each block holds its last
 * durable stamp (acknowledged before a flush of its thread completed) or one written since.
 */
public final class VerifiedIo {
    public static final int BLOCK = 4096;
    private final List<BlockDevice> devices;
    private final int blocksPerThread;
    private final AtomicBoolean stop = new AtomicBoolean();
    public final AtomicLong ops = new AtomicLong();
    public final AtomicLong errors = new AtomicLong();
    public final AtomicLong mismatches = new AtomicLong();
    public final AtomicLong longestNanos = new AtomicLong();
    public final List<String> firstErrors = java.util.Collections.synchronizedList(new ArrayList<>());
    /** Per thread and block: the last acknowledged stamp (0: never written). */
    private final AtomicLongArray stamps;
    private final List<Future<?>> running = new ArrayList<>();
    /** Per block: the last stamp known durable, and every stamp issued since (owned by the block's thread). */
    private final long[] durable;
    private final List<List<Long>> since = new ArrayList<>();
    /** Whether errors are expected (after a power cut): a thread then just stops. */
    private volatile boolean crashing;

    /** {@code threads} threads on each device, in turn; every thread gets {@code blocksPerThread} blocks. */
    public VerifiedIo(List<BlockDevice> devices, int threads, int blocksPerThread) {
        this.devices = List.copyOf(devices);
        this.blocksPerThread = blocksPerThread;
        this.stamps = new AtomicLongArray(threads * blocksPerThread);
        this.threads = threads;
        this.durable = new long[threads * blocksPerThread];
        for (int i = 0; i < durable.length; i++) {
            since.add(new ArrayList<>());
        }
    }

    /** From now on errors are expected (the power was cut): threads stop at their first one. */
    public void crashing() {
        crashing = true;
    }

    private final int threads;

    public VerifiedIo start(ExecutorService pool) {
        for (int t = 0; t < threads; t++) {
            int thread = t;
            running.add(pool.submit(() -> run(thread)));
        }
        return this;
    }

    /** Waits until at least {@code n} more requests have completed (deadline: 60 s). */
    public void awaitOps(long n) throws InterruptedException {
        long target = ops.get() + n;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        synchronized (progress) {
            while (ops.get() < target && errors.get() == 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new AssertionError("I/O made no progress: " + ops.get() + " of " + target + " " + summary());
                }
                progress.wait(TimeUnit.NANOSECONDS.toMillis(left) + 1);
            }
        }
    }

    private final Object progress = new Object();

    private void progressed() {
        synchronized (progress) {
            progress.notifyAll();
        }
    }

    public void stop() throws Exception {
        stop.set(true);
        for (Future<?> f : running) {
            f.get(60, TimeUnit.SECONDS);
        }
    }

    private void run(int thread) {
        BlockDevice dev = devices.get(thread % devices.size());
        ByteBuffer w = ByteBuffer.allocateDirect(BLOCK);
        ByteBuffer r = ByteBuffer.allocateDirect(BLOCK);
        long seq = 0;
        while (!stop.get()) {
            int i = (int) (seq % blocksPerThread);
            long block = (long) thread * blocksPerThread + i;
            long stamp = (seq + 1) << 16 | thread;
            try {
                fill(w, block, stamp);
                since.get((int) block).add(stamp); // may survive a crash from the moment it is issued
                long t0 = System.nanoTime();
                dev.write(block * BLOCK, w, 0);
                note(System.nanoTime() - t0);
                stamps.set((int) block, stamp);
                if (seq % 16 == 15) {
                    t0 = System.nanoTime();
                    dev.flush();
                    note(System.nanoTime() - t0);
                    for (int b = thread * blocksPerThread; b < (thread + 1) * blocksPerThread; b++) {
                        if (stamps.get(b) != 0) {
                            durable[b] = stamps.get(b);
                            since.get(b).clear();
                        }
                    }
                }
                long back = (long) thread * blocksPerThread + (seq * 7 % blocksPerThread);
                r.clear();
                t0 = System.nanoTime();
                dev.read(back * BLOCK, r);
                note(System.nanoTime() - t0);
                r.flip();
                check(r, back, stamps.get((int) back));
            } catch (Exception e) {
                if (crashing) {
                    return;
                }
                errors.incrementAndGet();
                if (firstErrors.size() < 5) {
                    firstErrors.add(e.toString());
                }
                progressed();
                return;
            }
            if (ops.incrementAndGet() % 16 == 0) {
                progressed();
            }
            seq++;
        }
    }

    private void note(long nanos) {
        longestNanos.accumulateAndGet(nanos, Math::max);
    }

    private void check(ByteBuffer r, long block, long expected) {
        long got = stampOf(r, block);
        if (got != expected) {
            mismatches.incrementAndGet();
            if (firstErrors.size() < 5) {
                firstErrors.add("block " + block + ": stamp " + Long.toHexString(got) + ", expected "
                        + Long.toHexString(expected));
            }
        }
    }

    /** Reads every block through {@code dev} and counts those without their last acknowledged stamp. */
    public long verifyAll(BlockDevice dev) throws java.io.IOException {
        ByteBuffer r = ByteBuffer.allocateDirect(BLOCK);
        long bad = 0;
        for (int b = 0; b < stamps.length(); b++) {
            r.clear();
            dev.read((long) b * BLOCK, r);
            r.flip();
            if (stampOf(r, b) != stamps.get(b)) {
                bad++;
            }
        }
        return bad;
    }

    /**
     * After a power cut and a restart: reads every block through {@code dev} and returns the ones
     * that break the disk rule (neither the last durable stamp nor one issued since), described.
     */
    public List<String> verifyAfterCrash(BlockDevice dev) throws java.io.IOException {
        ByteBuffer r = ByteBuffer.allocateDirect(BLOCK);
        List<String> bad = new ArrayList<>();
        for (int b = 0; b < durable.length; b++) {
            r.clear();
            dev.read((long) b * BLOCK, r);
            r.flip();
            long got = stampOf(r, b);
            if (got != durable[b] && !since.get(b).contains(got)) {
                bad.add("block " + b + ": " + Long.toHexString(got) + ", durable " + Long.toHexString(durable[b])
                        + ", since " + since.get(b).size());
            }
        }
        return bad;
    }

    /** Starts a new measurement of the longest request; returns the longest one until now. */
    public long resetLongest() {
        return longestNanos.getAndSet(0);
    }

    public String summary() {
        return ops.get() + " requests, " + errors.get() + " errors, " + mismatches.get() + " mismatches, longest "
                + TimeUnit.NANOSECONDS.toMicros(longestNanos.get()) + " µs" + (firstErrors.isEmpty() ? "" : " " + firstErrors);
    }

    public static void fill(ByteBuffer b, long block, long stamp) {
        b.clear();
        b.putLong(block);
        b.putLong(stamp);
        long x = stamp * 0x9E3779B97F4A7C15L + block;
        while (b.remaining() > 4) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            b.putInt((int) x);
        }
        CRC32C crc = new CRC32C();
        ByteBuffer d = b.duplicate().flip();
        crc.update(d);
        b.putInt((int) crc.getValue());
        b.flip();
    }

    /** The stamp of a block read back: 0 for a block never written (all zero), -1 for a torn or foreign one. */
    public static long stampOf(ByteBuffer r, long block) {
        ByteBuffer d = r.duplicate();
        long blk = d.getLong(0);
        long stamp = d.getLong(8);
        if (blk == 0 && stamp == 0) {
            boolean zero = true;
            for (int i = 0; i < BLOCK && zero; i++) {
                zero = d.get(i) == 0;
            }
            if (zero) {
                return 0;
            }
        }
        CRC32C crc = new CRC32C();
        ByteBuffer body = d.duplicate().position(0).limit(BLOCK - 4);
        crc.update(body);
        if ((int) crc.getValue() != d.getInt(BLOCK - 4) || blk != block) {
            return -1;
        }
        return stamp;
    }
}
