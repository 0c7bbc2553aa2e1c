package dev.strata.cache.support.writeback;

import dev.strata.cache.support.buffer.Buffers;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Writes one batch of dirty blocks to the backing device: sorted by backing offset, adjacent full
 * blocks merged into one write of up to {@code maxRunBlocks}, partial blocks (sector valid bits)
 * written as one write per run of valid sectors. The caller has read the blocks' data into one
 * buffer, entry {@code i} at {@code i * blockSize}.
 *
 * <p>Sorting packs (backing block, entry index) into one {@code long} so that a primitive sort
 * does it without an object per block: the index takes just as many low bits as the batch size
 * needs, and a block number that does not fit the remaining bits is refused (an explicit check,
 * not a cap elsewhere that happens to keep it correct). Arrays are kept between batches and grown
 * when needed: no allocation per batch once warm. One instance per writeback task (not
 * thread-safe).
 *
 * <p>With {@code inFlight > 1} the runs are submitted in backing order to a small pool owned by
 * the batcher, at most {@code inFlight} at a time, so that a real disk's queue can merge them and
 * its head moves forward; {@link #write} returns only when all have ended (the caller's backing
 * flush then covers every one of them). The first failure stops further submissions and is
 * thrown once the in-flight runs have ended. Each slot has its own staging buffer and the pool's
 * queue is an array: nothing is allocated per run beyond the buffer view that the sequential path
 * makes too. The pool's threads are daemons that end when idle, and {@link #close} ends them.
 *
 * <h2>Cancellation</h2>
 * A batch is cancelled when the calling thread is interrupted while it submits or waits (Ctrl-C of
 * {@code cache:writeback}, a detach or switch cancelled), or when the caller's {@code abandon}
 * check turns true (a suspend or stop, a cancelled drain; polled every {@link #POLL_MILLIS} ms
 * while the caller waits). Then no further run is submitted, every run in flight is interrupted
 * (each slot records the pool thread running it, so a run blocked at a closed gate below or in a
 * slow backing write gives up), and {@link #write} throws {@link InterruptedIOException} once
 * those runs have ended — with the caller's interrupt status kept. Waiting for them is what
 * lets the caller release the batch's blocks: a run still in flight afterwards could land an
 * older copy on the backing device after a newer write that went around the cache. A backing
 * write that ignores interrupts (a driver finishing its request first) is waited for; it ends on
 * its own. The caller marks nothing clean for a cancelled batch and does not flush for it: every
 * block of it stays dirty.
 *
 * <h2>Locking</h2>
 * Each slot's {@code runner} is guarded by the slot's monitor: a run sets it before it starts
 * and clears it, with the thread's interrupt status, before it frees the slot; a cancel
 * interrupts it under the same monitor. So a cancel's interrupt reaches only the run it was
 * meant for, never the pool thread's next task.
 */
public final class WritebackBatcher implements AutoCloseable {
    /** Runs in flight that the caches use: enough for a disk queue to merge and reorder. */
    public static final int IN_FLIGHT = 4;

    /** How often a waiting caller asks its {@code abandon} check (only when it passed one). */
    static final long POLL_MILLIS = 20;

    /**
     * The abandon check that never abandons (that of {@link #write(int, long[], int[], ByteBuffer,
     * Backing)}): the caller waits without polling, and only its interrupt cancels.
     */
    public static final BooleanSupplier NEVER = () -> false;

    /** Where the batch goes: the backing device. */
    @FunctionalInterface
    public interface Backing {
        void write(long offset, ByteBuffer src) throws IOException;
    }

    private static final int SECTOR = 512;
    private final int blockSize;
    private final int sectors;
    private final int full;
    private final int maxRun;
    private final boolean sorted;
    private final ByteBuffer stage;
    private long[] order = new long[0];
    private final ThreadPoolExecutor pool;
    private final Slot[] slots;
    private final ArrayBlockingQueue<Slot> free;
    private volatile Throwable failure;
    /** Whether the batch in progress was cancelled (calling thread only). */
    private boolean cancelled;

    /** One run in flight: its target, its data view, its own staging buffer. */
    private final class Slot implements Runnable {
        final ByteBuffer stage;
        Backing backing;
        long at;
        ByteBuffer src;
        /** The pool thread running this slot's write; null between runs (guarded by this). */
        private Thread runner;

        Slot(ByteBuffer stage) {
            this.stage = stage;
        }

        @Override
        public void run() {
            synchronized (this) {
                runner = Thread.currentThread();
            }
            try {
                // a cancel sets the failure before it interrupts the runners: a run that starts
                // after its interrupt went by sees the failure here and skips
                if (failure == null) {
                    backing.write(at, src);
                }
            } catch (Throwable e) {
                fail(e);
            } finally {
                synchronized (this) {
                    runner = null;
                    Thread.interrupted(); // a cancel's interrupt ends with this run
                }
                src = null;
                backing = null;
                free.add(this);
            }
        }

        synchronized void interruptRunner() {
            if (runner != null) {
                runner.interrupt();
            }
        }
    }

    private synchronized void fail(Throwable e) {
        if (failure == null) {
            failure = e;
        }
    }

    /**
     * @param blockSize    the cache block size (512 to 8192, a power of two)
     * @param maxRunBlocks most blocks merged into one write
     * @param sorted       sort and merge (false: write in batch order, one write per sector run;
     *                     the benchmark's baseline)
     */
    public WritebackBatcher(int blockSize, int maxRunBlocks, boolean sorted) {
        this(blockSize, maxRunBlocks, sorted, 1);
    }

    /**
     * @param inFlight most runs written at the same time (1: one after another in the calling
     *                 thread, no pool)
     */
    public WritebackBatcher(int blockSize, int maxRunBlocks, boolean sorted, int inFlight) {
        if (blockSize < SECTOR || blockSize > 8192 || Integer.bitCount(blockSize) != 1) {
            throw new IllegalArgumentException("block size " + blockSize + " is not a power of two from 512 to 8192");
        }
        if (maxRunBlocks < 1 || (long) maxRunBlocks * blockSize > 64 << 20) {
            throw new IllegalArgumentException("maxRunBlocks " + maxRunBlocks + " is not 1 to " + (64 << 20) / blockSize);
        }
        this.blockSize = blockSize;
        this.sectors = blockSize / SECTOR;
        this.full = (1 << sectors) - 1;
        this.maxRun = maxRunBlocks;
        this.sorted = sorted;
        if (inFlight < 1 || inFlight > 64) {
            throw new IllegalArgumentException("inFlight " + inFlight + " is not 1 to 64");
        }
        if (inFlight == 1) {
            this.stage = sorted ? Buffers.aligned(maxRunBlocks * blockSize) : null;
            this.pool = null;
            this.slots = null;
            this.free = null;
        } else {
            this.stage = null;
            this.slots = new Slot[inFlight];
            this.free = new ArrayBlockingQueue<>(inFlight);
            for (int i = 0; i < inFlight; i++) {
                slots[i] = new Slot(sorted ? Buffers.aligned(maxRunBlocks * blockSize) : null);
                free.add(slots[i]);
            }
            // at most inFlight tasks are ever outstanding, so an array queue of that size never
            // rejects and never allocates a node per task
            this.pool = new ThreadPoolExecutor(inFlight, inFlight, 10, TimeUnit.SECONDS,
                    new ArrayBlockingQueue<>(inFlight), r -> {
                        Thread t = new Thread(r, "strata-writeback-io");
                        t.setDaemon(true);
                        return t;
                    });
            pool.allowCoreThreadTimeOut(true);
        }
    }

    /** Ends the pool's threads (a batch in progress still waits for its runs). */
    @Override
    public void close() {
        if (pool != null) {
            pool.shutdown();
        }
    }

    /** Whether a run of the batch in progress has failed (tests wait for it). */
    boolean failed() {
        return failure != null;
    }

    /** The valid bits of a block all of whose sectors are valid. */
    public int fullMask() {
        return full;
    }

    /** Bits of the sort key the entry index takes for a batch of {@code count} entries. */
    static int indexBits(int count) {
        return count <= 1 ? 1 : 32 - Integer.numberOfLeadingZeros(count - 1);
    }

    /** The largest backing block number a batch of {@code count} entries can sort. */
    public static long maxBlock(int count) {
        return Long.MAX_VALUE >>> indexBits(count);
    }

    /**
     * Writes entries {@code [0, count)}; an entry with {@code valid == 0} is skipped (no longer
     * dirty). Returns how many writes were issued.
     *
     * @throws IllegalArgumentException a block number outside {@code [0, maxBlock(count)]}
     * @throws IOException              the backing device failed (some writes may have been issued)
     */
    public int write(int count, long[] blocks, int[] valid, ByteBuffer data, Backing backing) throws IOException {
        return write(count, blocks, valid, data, backing, NEVER);
    }

    /**
     * As {@link #write(int, long[], int[], ByteBuffer, Backing)}, cancelled (see the class
     * comment) when the calling thread is interrupted or {@code abandon} turns true. The
     * sequential path ({@code inFlight == 1}) writes in the calling thread, where the interrupt
     * reaches the backing write itself; {@code backing} asks its own abandon check there.
     *
     * @throws InterruptedIOException the batch was cancelled; every run it started has ended
     */
    public int write(int count, long[] blocks, int[] valid, ByteBuffer data, Backing backing,
            BooleanSupplier abandon) throws IOException {
        if (order.length < count) {
            order = new long[Math.max(count, 64)];
        }
        int shift = indexBits(count);
        long max = maxBlock(count);
        for (int k = 0; k < count; k++) {
            if (blocks[k] < 0 || blocks[k] > max) {
                throw new IllegalArgumentException("backing block " + blocks[k] + " cannot be sorted in a batch of "
                        + count + " (at most " + max + ")");
            }
            order[k] = sorted ? (blocks[k] << shift) | k : k;
        }
        if (sorted) {
            Arrays.sort(order, 0, count);
        }
        long mask = (1L << shift) - 1;
        if (pool == null) {
            return runs(count, blocks, valid, data, backing, mask, abandon);
        }
        failure = null;
        cancelled = false;
        int writes;
        try {
            writes = runs(count, blocks, valid, data, backing, mask, abandon);
        } finally {
            awaitAll(abandon);
        }
        Throwable f = failure;
        failure = null;
        cancelled = false;
        if (f instanceof IOException e) {
            throw e;
        }
        if (f instanceof RuntimeException e) {
            throw e;
        }
        if (f instanceof Error e) {
            throw e;
        }
        return writes;
    }

    private int runs(int count, long[] blocks, int[] valid, ByteBuffer data, Backing backing, long mask,
            BooleanSupplier abandon) throws IOException {
        int writes = 0;
        int k = 0;
        while (k < count && failure == null) {
            int idx = (int) (order[k] & mask);
            if (valid[idx] == 0) {
                k++;
                continue;
            }
            if (valid[idx] != full || !sorted) {
                writes += writeSectors(blocks[idx], valid[idx], data, idx, backing, abandon);
                k++;
                continue;
            }
            int run = 1;
            while (k + run < count && run < maxRun) {
                int nx = (int) (order[k + run] & mask);
                if (blocks[nx] != blocks[idx] + run || valid[nx] != full) {
                    break;
                }
                run++;
            }
            long at = blocks[idx] * blockSize;
            Slot slot = pool == null ? null : take(abandon);
            if (slot == null && pool != null) {
                break;
            }
            ByteBuffer st = slot == null ? stage : slot.stage;
            ByteBuffer src;
            if (run == 1) {
                src = data.duplicate().limit((idx + 1) * blockSize).position(idx * blockSize);
            } else {
                for (int r = 0; r < run; r++) {
                    int nx = (int) (order[k + r] & mask);
                    st.put(r * blockSize, data, nx * blockSize, blockSize);
                }
                src = st.duplicate().position(0).limit(run * blockSize);
            }
            issue(slot, at, src, backing);
            writes++;
            k += run;
        }
        return writes;
    }

    /** One write per run of consecutive valid sectors of entry {@code idx}. */
    private int writeSectors(long block, int bits, ByteBuffer data, int idx, Backing backing, BooleanSupplier abandon)
            throws IOException {
        int writes = 0;
        int base = idx * blockSize;
        int s = 0;
        while (s < sectors) {
            if ((bits & (1 << s)) == 0) {
                s++;
                continue;
            }
            int e = s;
            while (e + 1 < sectors && (bits & (1 << (e + 1))) != 0) {
                e++;
            }
            Slot slot = pool == null ? null : take(abandon);
            if (slot == null && pool != null) {
                return writes;
            }
            issue(slot, block * blockSize + (long) s * SECTOR,
                    data.duplicate().limit(base + (e + 1) * SECTOR).position(base + s * SECTOR), backing);
            writes++;
            s = e + 1;
        }
        return writes;
    }

    /** Writes now (sequential), or hands the run to the pool. */
    private void issue(Slot slot, long at, ByteBuffer src, Backing backing) throws IOException {
        if (slot == null) {
            backing.write(at, src);
            return;
        }
        slot.at = at;
        slot.src = src;
        slot.backing = backing;
        try {
            pool.execute(slot);
        } catch (RejectedExecutionException e) {
            slot.src = null;
            slot.backing = null;
            free.add(slot);
            fail(new IOException("writeback is closed"));
        }
    }

    /**
     * A free slot, or null when a run has failed or the batch is cancelled (no more are
     * submitted): an interrupt of the caller or {@code abandon} while it waits cancels it.
     */
    private Slot take(BooleanSupplier abandon) {
        if (failure != null) {
            return null;
        }
        Slot s;
        try {
            s = next(abandon);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            cancel("writeback interrupted");
            return null;
        }
        if (s == null) {
            cancel("writeback batch abandoned");
            return null;
        }
        if (failure != null) {
            free.add(s);
            return null;
        }
        return s;
    }

    /** The next free slot; null once {@code abandon} says so. */
    private Slot next(BooleanSupplier abandon) throws InterruptedException {
        if (abandon == NEVER) {
            return free.take();
        }
        while (!abandon.getAsBoolean()) {
            Slot s = free.poll(POLL_MILLIS, TimeUnit.MILLISECONDS);
            if (s != null) {
                return s;
            }
        }
        return null;
    }

    /**
     * Cancels the batch (calling thread): no further run is submitted (the failure is set first,
     * so a run not yet started skips), and every run in flight is interrupted.
     */
    private void cancel(String why) {
        if (cancelled) {
            return;
        }
        cancelled = true;
        fail(new InterruptedIOException(why));
        for (Slot s : slots) {
            s.interruptRunner();
        }
    }

    /**
     * Waits until every slot is free again, i.e. every submitted run has ended. An interrupt of
     * the caller, or {@code abandon} turning true, cancels the batch and the wait goes on only
     * for the interrupted runs to end; the caller's interrupt status is kept for afterwards.
     */
    private void awaitAll(BooleanSupplier abandon) {
        boolean interrupted = false;
        int got = 0;
        while (got < slots.length) {
            try {
                Slot s = !cancelled && abandon != NEVER ? free.poll(POLL_MILLIS, TimeUnit.MILLISECONDS) : free.take();
                if (s != null) {
                    got++;
                } else if (!cancelled && abandon.getAsBoolean()) {
                    cancel("writeback batch abandoned");
                }
            } catch (InterruptedException e) {
                interrupted = true;
                cancel("writeback interrupted");
            }
        }
        for (Slot s : slots) {
            free.add(s);
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
