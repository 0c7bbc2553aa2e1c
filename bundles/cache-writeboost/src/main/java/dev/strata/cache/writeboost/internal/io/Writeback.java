package dev.strata.cache.writeboost.internal.io;

import dev.strata.api.CacheTarget;
import dev.strata.api.DeviceIOException;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.DeviceTimeoutException;
import dev.strata.api.WritebackController;
import dev.strata.cache.support.buffer.Buffers;
import dev.strata.cache.support.daemon.Daemon;
import dev.strata.cache.support.writeback.Cancellation;
import dev.strata.cache.support.writeback.ControllerBinding;
import dev.strata.cache.support.writeback.WritebackBatcher;
import dev.strata.cache.writeboost.internal.format.Layout;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/** The writeback task: oldest segments first, paced by the bound controller, sorted and merged by {@link dev.strata.cache.support.writeback.WritebackBatcher}. */
final class Writeback {
    static final int SB = Layout.SEGMENT_BLOCKS;
    static final int BS = Layout.BLOCK;
    private final Parts parts;
    private final LogState log;
    private final Stats stats;

    Writeback(Parts parts, Function<String, WritebackController> controllers, boolean sorted) {
        this.parts = parts;
        this.log = parts.log;
        this.stats = parts.stats;
        this.controller = ControllerBinding.withModulator(log.name, controllers);
        this.batcher = new WritebackBatcher(BS, MAX_RUN, sorted, WritebackBatcher.IN_FLIGHT);
    }

    final ControllerBinding controller;

    /**
     * A {@code cache:set} of {@code writeback.<key>}: the controller's own tunable, checked and kept
     * by the binding and passed on at the next decision (docs/daemons.md); the writeback task is
     * woken so a waiting cache sees it now.
     */
    void setControllerSetting(String key, String value) {
        Tunables t = log.tunables();
        controller.set("writeboost", t.controller(),
                Map.of(Tunables.WRITEBACK_THRESHOLD, Integer.toString(t.writebackThreshold())), key, value);
        log.lock.lock();
        try {
            log.signal();
        } finally {
            log.lock.unlock();
        }
    }

    // ------------------------------------------------------------------------------------------
    // writeback

    /** Blocks per merged writeback write (1 MiB). */
    static final int MAX_RUN = 256;
    final WritebackBatcher batcher;
    final WritebackBatcher.Backing backingWriter = this::writeBacking;

    void writeBacking(long offset, ByteBuffer src) throws IOException {
        if (abandoned()) {
            throw new Abandoned(log.name);
        }
        log.backing.write(offset, src, 0);
    }

    /** {@link LogState#writebackCancels} when the batch in progress was collected. */
    private volatile long batchCancels;

    /** Whether the batch in progress is to be given up: the daemons stop, or a writebackAll was cancelled since it was collected. */
    private boolean abandoned() {
        return log.stopWriteback || log.writebackCancels != batchCancels;
    }

    /**
     * {@link #abandoned()} as the batcher's abandon check: polled while the writeback thread waits
     * for the batch's runs, so that a stop or a cancelled writebackAll also interrupts the runs in
     * flight (a run waiting at a suspended device's gate below had waited there for the gate's
     * timeout, about two minutes, and the stop with it), not only the writes not yet issued.
     */
    private final java.util.function.BooleanSupplier abandonCheck = this::abandoned;

    /** Given the urgency by {@link #writebackRunOnce} before it collects the batch (a seam for tests). */
    volatile java.util.function.Consumer<Boolean> beforeCollect;

    /** Whether a batch goes back now, whatever the controller says (under the log's lock). */
    private boolean urgent() {
        return log.forceWriteback || log.reclaimWaiters > 0 || (log.headSid + 2L * log.nb - log.nSeg > log.lwb);
    }

    ByteBuffer wbData;
    long[] wbKeys = new long[0];
    int[] wbLocs = new int[0];
    int[] wbValid = new int[0];

    /**
     * Writes back one batch of the oldest complete segments: dirty blocks sorted by backing
     * offset, adjacent ones merged into large writes, the backing device flushed, then the
     * segments counted as written back. Returns false when there was nothing to do (or the
     * controller said wait).
     */
    public boolean writebackRunOnce() throws IOException {
        Tunables t = log.tunables();
        boolean urgent;
        long deadline = log.deadline();
        log.lock.lock();
        try {
            if (log.failure != null || log.closed) {
                return false;
            }
            if (log.lwb >= log.completedSid) {
                if (log.forceWriteback) {
                    if (log.dirty > 0 && log.headSid > log.lwb && (log.recStart < SB ? log.recEntries > 0 || log.recStart > 0 : true)) {
                        log.pad();
                        return true;
                    }
                    if (log.dirty == 0) {
                        log.forceWriteback = false;
                    }
                }
                return false;
            }
            urgent = urgent();
        } finally {
            log.lock.unlock();
        }
        java.util.function.Consumer<Boolean> hook = beforeCollect;
        if (hook != null) {
            hook.accept(urgent);
        }
        int segs = t.maxBatchedWriteback();
        if (!urgent) {
            long[] sample = stats.busy.sample();
            int allowance;
            log.lock.lock();
            long d;
            try {
                d = log.dirty;
            } finally {
                log.lock.unlock();
            }
            // one session per bound controller (ControllerBinding); writeboost's own threshold is
            // the modulator's tunable
            allowance = controller.decide(t.controller(), controllerTunables(t),
                    new WritebackController.CacheLoad(log.clock.nanoTime(), d, (long) log.nSeg * Layout.MAX_DATA, BS,
                            (int) sample[0], 0, sample[1], sample[2], segs * Layout.MAX_DATA)).blocks();
            if (allowance <= 0) {
                return false;
            }
            segs = (int) Math.max(1, Math.min(segs, (allowance + Layout.MAX_DATA - 1L) / Layout.MAX_DATA));
        }
        int capacity = segs * Layout.MAX_DATA;
        if (wbKeys.length < capacity) {
            wbKeys = new long[capacity];
            wbLocs = new int[capacity];
        }
        long from;
        long to;
        int count;
        log.lock.lock();
        try {
            if (urgent && !urgent()) {
                // the force that made this batch urgent was withdrawn since (a cancelled
                // writebackAll, whose stopForcing found no batch in flight and reported the dirty
                // count): a batch started now would go back after that report and make it wrong
                return false;
            }
            collect:
            while (true) {
                from = log.lwb + 1;
                to = Math.min(log.completedSid, log.lwb + segs);
                count = 0;
                for (long sid = from; sid <= to; sid++) {
                    int p = log.phys(sid);
                    int segStart = count;
                    for (int b = 1; b < SB; b++) {
                        int loc = p * SB + b;
                        long owner = log.map.owner(loc);
                        if (owner >= 0 && !log.map.clean(loc)) {
                            if (log.bypassOverlaps(owner)) {
                                // a bypass is writing this block: write back the segments before
                                // this one, or wait for it if this is the oldest. A bypass waits
                                // only for its own backing I/O while the copies it found are in
                                // the map (it drops them before it waits for log space), so this
                                // wait ends; only a copy a concurrent cached write puts into its
                                // range later can make both wait (until io_timeout_ms), and that
                                // copy lives in a segment newer than the one the bypass waits for
                                if (sid > from) {
                                    to = sid - 1;
                                    count = segStart;
                                    break collect;
                                }
                                log.await(deadline, "a bypass write before writeback");
                                continue collect;
                            }
                            wbLocs[count] = loc;
                            wbKeys[count] = owner;
                            count++;
                        }
                    }
                }
                break;
            }
            if (log.wbBlocks.length < count) {
                log.wbBlocks = new long[Math.max(count, 16)];
            }
            System.arraycopy(wbKeys, 0, log.wbBlocks, 0, count);
            Arrays.sort(log.wbBlocks, 0, count);
            log.wbCount = count;
            batchCancels = log.writebackCancels;
        } finally {
            log.lock.unlock();
        }
        // write back only what the cache device holds durably: otherwise a crash could leave the
        // backing device with writes that the recovered log no longer has (not a prefix)
        long lastOfBatch;
        log.lock.lock();
        try {
            lastOfBatch = log.segLastId[log.phys(to)];
        } finally {
            log.lock.unlock();
        }
        if (log.lastFlushedId.get() < lastOfBatch) {
            try {
                parts.flush.flushCacheDevice();
            } catch (IOException e) {
                log.lock.lock();
                try {
                    log.wbCount = 0;
                    log.signal();
                } finally {
                    log.lock.unlock();
                }
                throw e;
            }
        }
        if (wbData == null || wbData.capacity() < count * BS) {
            // once, for the largest batch the tunable and the log allow (only a raised tunable
            // grows it again): sized to each batch, a fresh cache allocated, and the kernel
            // zeroed, a new direct buffer whenever a batch outgrew the last, while the user wrote
            int most = Math.min(t.maxBatchedWriteback(), log.nSeg) * Layout.MAX_DATA;
            wbData = Buffers.aligned(Math.max(count, most) * BS);
        }
        try {
            writeBack(count);
            if (abandoned()) {
                throw new Abandoned(log.name);
            }
            log.backing.flush();
        } catch (IOException e) {
            if (!(e instanceof Abandoned) && !Cancellation.isCancellation(e)) {
                stats.lastWritebackError = e.getMessage();
            }
            log.lock.lock();
            try {
                log.wbCount = 0;
                log.signal();
            } finally {
                log.lock.unlock();
            }
            if (e instanceof Abandoned || (e instanceof InterruptedIOException && abandoned())) {
                return false; // stopping or cancelled: not an error, nothing was written back
            }
            throw e;
        }
        long now = log.clock.nanoTime();
        log.lock.lock();
        try {
            if (log.writebackCancels != batchCancels) {
                // cancelled during the backing flush: its report counted these blocks as dirty,
                // and they stay so (a later batch writes the same data again)
                log.wbCount = 0;
                log.signal();
                return false;
            }
            long still = 0;
            for (long sid = from; sid <= to; sid++) {
                int p = log.phys(sid);
                for (int b = 1; b < SB; b++) {
                    int loc = p * SB + b;
                    if (log.map.owner(loc) >= 0 && !log.map.clean(loc)) {
                        still++;
                    }
                }
            }
            log.dirty -= still;
            log.lwb = to;
            log.lwbAnchorId = log.segLastId[log.phys(to)];
            log.lwbAnchorCrc = log.segLastCrc[log.phys(to)];
            log.wbCount = 0;
            if (log.dirty == 0 && log.forceWriteback && log.lwb >= log.headSid) {
                log.forceWriteback = false;
            }
            log.signal();
        } finally {
            log.lock.unlock();
        }
        stats.writtenBackBlocks.add(count);
        if (!urgent) {
            // whole segments go back, often more than the grant: the controller charges the rest
            controller.wroteBack(count, now);
        }
        stats.writebackBatches.increment();
        stats.writebackRate.add(count, now);
        stats.lastWritebackError = "";
        return true;
    }

    void writeBack(int count) throws IOException {
        // read the dirty blocks: runs of consecutive locations, into wbData[i * 4096]
        int i = 0;
        while (i < count) {
            int j = i;
            while (j + 1 < count && wbLocs[j + 1] == wbLocs[j] + 1 && wbLocs[j + 1] / SB == wbLocs[i] / SB) {
                j++;
            }
            log.cache.read(log.locOffset(wbLocs[i]), wbData.duplicate().position(i * BS).limit((j + 1) * BS));
            i = j + 1;
        }
        if (wbValid.length < count) {
            wbValid = new int[Math.max(count, 64)];
        }
        log.lock.lock();
        try {
            for (int k = 0; k < count; k++) {
                wbValid[k] = log.map.owner(wbLocs[k]) == wbKeys[k] ? log.map.valid(wbLocs[k]) : 0;
            }
        } finally {
            log.lock.unlock();
        }
        stats.writebackWrites.add(batcher.write(count, wbKeys, wbValid, wbData, backingWriter, abandonCheck));
    }

    Tunables controllerTunablesOf;
    Map<String, String> controllerTunables;

    /** The controller's tunables as set on this cache (writeback task only; cached per snapshot). */
    Map<String, String> controllerTunables(Tunables t) {
        if (t != controllerTunablesOf) {
            controllerTunables = Map.of(Tunables.WRITEBACK_THRESHOLD, Integer.toString(t.writebackThreshold()));
            controllerTunablesOf = t;
        }
        return controllerTunables;
    }

    /** Writes back until nothing is dirty and (if {@code segment} is given) that segment is written back. */
    void drain(long segment) throws IOException {
        long deadline = log.deadline();
        log.lock.lock();
        try {
            log.forceWriteback = true;
            log.signal();
        } finally {
            log.lock.unlock();
        }
        while (true) {
            boolean daemon = parts.daemons.writeback().running();
            log.lock.lock();
            try {
                log.checkFailure();
                if (log.dirty == 0 && log.lwb >= segment) {
                    return;
                }
                if (daemon) {
                    log.forceWriteback = true;
                    log.await(deadline, "writeback of all dirty blocks");
                    continue;
                }
            } finally {
                log.lock.unlock();
            }
            if (!writebackRunOnce()) {
                log.lock.lock();
                try {
                    log.forceWriteback = true;
                    log.await(deadline, "writeback of all dirty blocks");
                } finally {
                    log.lock.unlock();
                }
            }
        }
    }

        /**
     * {@link CacheTarget#writebackAll}: writes back until nothing is dirty, reporting progress
     * twice a second; cancelled by an interrupt; a stall of {@code io_timeout_ms} fails it.
     */
    void writebackAll(CacheTarget.WritebackProgress progress, Daemon writeback) throws IOException, InterruptedException {
        long stall = TimeUnit.MILLISECONDS.toNanos(log.tunables().ioTimeoutMillis());
        long start;
        log.lock.lock();
        try {
            start = log.dirty;
        } finally {
            log.lock.unlock();
        }
        try {
            writebackAll(progress, writeback, stall, start);
        } catch (InterruptedException e) {
            long d = stopForcing();
            progress.update(d, Math.max(0, start - d));
            throw e;
        } catch (IOException e) {
            if (!Thread.currentThread().isInterrupted() || !Cancellation.isCancellation(e)) {
                throw e;
            }
            // interrupted in a batch this thread ran itself (no writeback daemon): the batcher
            // gave up its runs and counted nothing; a cancel like any other (thrown as it came,
            // with the interrupt kept: the commands read it as a cancel)
            long d = stopForcing();
            progress.update(d, Math.max(0, start - d));
            throw e;
        }
    }

    private void writebackAll(CacheTarget.WritebackProgress progress, Daemon writeback, long stall, long start)
            throws IOException, InterruptedException {
        long best = start;
        long lastProgress = System.nanoTime();
        long lastReport = 0;
        while (true) {
            if (Thread.interrupted()) {
                throw new InterruptedException(log.name + ": writeback cancelled");
            }
            boolean daemon = writeback.running();
            long d;
            log.lock.lock();
            try {
                log.checkFailure();
                d = log.dirty;
                if (d > 0) {
                    log.forceWriteback = true;
                    log.signal();
                }
            } finally {
                log.lock.unlock();
            }
            long now = System.nanoTime();
            if (d == 0 || now - lastReport >= 500_000_000L) {
                progress.update(d, Math.max(0, start - d));
                lastReport = now;
            }
            if (d == 0) {
                return;
            }
            if (d < best) {
                best = d;
                lastProgress = now;
            } else if (now - lastProgress > stall) {
                throw new DeviceTimeoutException(log.name, -1, "writeback made no progress for "
                        + log.tunables().ioTimeoutMillis() / 1000 + " s (" + d + " dirty blocks left)");
            }
            if (daemon || !writebackRunOnce()) {
                log.lock.lock();
                try {
                    log.changed.await(200, TimeUnit.MILLISECONDS);
                } finally {
                    log.lock.unlock();
                }
            }
        }
    }

    /**
     * A cancelled {@link #writebackAll}: no further batch is forced, and the one in flight is
     * abandoned ({@link LogState#writebackCancels}), not waited for: waiting took up to a whole
     * batch of backing writes (9 s and more on a slow disk, up to {@code io_timeout_ms}) before
     * Ctrl-C returned. Returns the blocks still dirty, exact: a batch that completed before this
     * is counted, one that had not never will be (its blocks stay dirty; its backing writes in
     * flight end in the writeback thread, which keeps them registered against bypasses until then).
     */
    private long stopForcing() {
        log.lock.lock();
        try {
            log.forceWriteback = false;
            log.writebackCancels++;
            return log.dirty;
        } finally {
            log.lock.unlock();
        }
    }

    /** {@link WriteboostCache#invalidateAll()}: the cache must be clean; pads, writes back and records everything reclaimed. */
    void invalidateAll() throws IOException {
        long target;
        log.lock.lock();
        try {
            log.checkFailure();
            if (log.dirty > 0) {
                throw new InvalidArgumentException("writeboost: the cache still holds " + log.dirty
                        + " dirty blocks; write them back first (writeback=all)");
            }
            log.pad();
            target = log.headSid;
            log.forceWriteback = true;
            log.signal();
        } finally {
            log.lock.unlock();
        }
        drain(target);
        parts.record.updateRecord(target);
    }

    /** The batch was abandoned because the cache is stopping; its blocks stay dirty. */
    static final class Abandoned extends DeviceIOException {
        private static final long serialVersionUID = 1L;

        Abandoned(String device) {
            super(device, -1, "writeback batch abandoned: the cache is stopping");
        }
    }
}
