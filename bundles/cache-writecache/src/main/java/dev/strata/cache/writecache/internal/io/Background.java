package dev.strata.cache.writecache.internal.io;

import dev.strata.api.WritebackController;
import dev.strata.cache.support.daemon.Daemon;
import dev.strata.cache.support.time.Clock;
import dev.strata.cache.support.writeback.ControllerBinding;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The cache's background work — autocommit, writeback between the watermarks, {@code max_age},
 * the cleaner — run by cache-support's {@link Daemon} and paced by the cache's
 * {@link WritebackController} through a {@link ControllerBinding} (one session per cache; the
 * built-in modulator while no service of the wanted name is registered).
 *
 * <p>Pacing applies to the background writeback only: the cleaner and the {@code flush} action
 * write everything back at full speed, and a writer that finds no free slot writes back a batch
 * itself ({@link WritePath}), so no writer ever waits for a controller's decision.
 * {@code pause_writeback} (dm-writecache's) holds the paced writeback (watermarks and
 * {@code max_age}) while writes go around to the backing device: the backing device serves them
 * first.
 */
final class Background {
    /**
     * How long the daemon waits when it found nothing to do: a controller's "ask again" (the
     * modulator's is 100 ms) and the end of a pause are noticed within this, and
     * autocommit_time is kept to within it.
     */
    static final long IDLE_MILLIS = 100;

    private final CacheState state;
    private final Committer committer;
    private final Writeback writeback;
    private final Stats stats;
    private final Supplier<Tunables> tunables;
    private final BooleanSupplier closed;
    private final Clock clock;
    private final ControllerBinding binding;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private long events;
    private final Daemon daemon;
    /** {@link #ending()} as the batches' abandon check (one object, not one per batch). */
    private final BooleanSupplier endingCheck = this::ending;
    /** Whether the last round held writeback for pause_writeback (status). */
    private volatile boolean paused;
    /**
     * Paced writeback is not tried before this clock value: the controller's "ask again" or the
     * end of a pause. Writes do not wake the daemon for it before then, so a waiting controller
     * is not asked again on every write.
     */
    private volatile long notBefore;
    /** Whether notBefore is the controller's ask-again time (a setting change ends that wait), not a pause. */
    private volatile boolean controllerWait;

    Background(String name, CacheState state, Committer committer, Writeback writeback, Stats stats,
            Supplier<Tunables> tunables, BooleanSupplier closed, Clock clock,
            Function<String, WritebackController> controllers, boolean run) {
        this.state = state;
        this.committer = committer;
        this.writeback = writeback;
        this.stats = stats;
        this.tunables = tunables;
        this.closed = closed;
        this.clock = clock;
        this.notBefore = clock.nanoTime();
        this.binding = ControllerBinding.withModulator(name, controllers);
        this.daemon = run ? new Daemon("strata-writecache-" + name, this::runOnce, lock, changed, IDLE_MILLIS,
                this::events) : null;
    }

    private long events() {
        return events;
    }

    void start() {
        if (daemon != null) {
            daemon.start();
        }
    }

    void stop() {
        if (daemon != null) {
            daemon.stop();
        }
    }

    /** Stops the daemon and closes the controller session. */
    void close() {
        stop();
        binding.close();
    }

    /** Wakes the daemon if there is background work (called after writes and tunable changes). */
    void maybeWake() {
        if (daemon != null && needed()) {
            lock.lock();
            try {
                events++;
                changed.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * A controller setting changed: the session decides again at the next round, not at the time
     * it asked for under its old settings (a higher rate is seen at once); a pause still holds.
     */
    void controllerSettingChanged() {
        if (controllerWait) {
            controllerWait = false;
            notBefore = clock.nanoTime();
        }
        maybeWake();
    }

    /**
     * Whether to wake the daemon now. A hint, read without the state monitor: it runs after every
     * write, and taking the monitor here put the in-place writes that skip it (CacheState's gate)
     * back into one queue. A stale value only wakes the daemon once too often, or leaves it to its
     * next round (at most 100 ms later), which decides under the monitor.
     */
    private boolean needed() {
        Tunables t = tunables.get();
        long used = state.slots() - state.free.count();
        if (state.uncommitted >= t.autocommitBlocks() || (t.cleaner() && state.index.size() > 0)) {
            return true;
        }
        if (used * 100 < (long) t.highWatermark() * state.slots()) {
            return false;
        }
        return clock.nanoTime() - notBefore >= 0;
    }

    private boolean runOnce() throws IOException {
        return closed.getAsBoolean() ? false : runRound();
    }

    /**
     * Whether the round should end now: the cache closes, or the daemon is being stopped (a
     * suspend: the batch in flight is abandoned, its blocks stay dirty; a stop used to wait for
     * the whole writeback down to the low watermark, 30 s on a slow backing device).
     */
    private boolean ending() {
        return closed.getAsBoolean() || (daemon != null && daemon.stopping());
    }

    /**
     * One round: commit once {@code autocommit_blocks} are uncommitted or the first of them is
     * {@code autocommit_time} old; from the high watermark write back the oldest blocks, as fast
     * as the controller allows, until the low watermark; in cleaner mode everything, unpaced;
     * write back blocks older than {@code max_age}. Returns whether there is more to do now.
     */
    boolean runRound() throws IOException {
        Tunables t = tunables.get();
        boolean commit;
        boolean wb;
        synchronized (state) {
            long used = state.slots() - state.free.count();
            commit = state.uncommitted >= t.autocommitBlocks() || (t.autocommitTime() > 0 && state.uncommitted > 0
                    && state.now() - state.firstUncommittedNanos >= t.autocommitTime() * 1_000_000L);
            wb = t.cleaner() ? state.index.size() > 0 : used * 100 >= (long) t.highWatermark() * state.slots();
        }
        if (commit) {
            committer.commit();
        }
        if (!t.cleaner()) {
            if (clock.nanoTime() - notBefore < 0) {
                return false;
            }
            boolean hold = stats.aroundWithin(t.pauseWriteback());
            paused = hold;
            if (hold) {
                controllerWait = false;
                notBefore = stats.pauseEnd(t.pauseWriteback());
                return false;
            }
        } else {
            paused = false;
        }
        while (wb && !ending()) {
            int n;
            long cached;
            synchronized (state) {
                long used = state.slots() - state.free.count();
                long low = t.cleaner() ? 0 : (long) t.lowWatermark() * state.slots() / 100;
                n = (int) Math.max(1, Math.min(t.writebackBatch(), used - low));
                cached = state.index.size();
            }
            if (!t.cleaner()) {
                n = Math.min(n, allowance(t, cached));
                if (n <= 0) {
                    return false;
                }
            }
            if (writeback.oldest(n, Long.MAX_VALUE, endingCheck) == 0) {
                if (ending()) {
                    break;
                }
                committer.commit();
                if (writeback.oldest(n, Long.MAX_VALUE, endingCheck) == 0) {
                    break;
                }
            }
            synchronized (state) {
                long used = state.slots() - state.free.count();
                wb = t.cleaner() ? state.index.size() > 0 : used * 100 > (long) t.lowWatermark() * state.slots();
            }
        }
        // max_age: blocks written longer ago than that go back whatever the watermarks
        if (t.maxAge() > 0 && !ending()) {
            long limit;
            synchronized (state) {
                limit = state.agedSeqLimit(state.now() - t.maxAge() * 1_000_000L);
            }
            while (limit >= 0 && !ending() && writeback.oldest(t.writebackBatch(), limit, endingCheck) > 0) {
                // next batch
            }
        }
        return false;
    }

    /** Blocks the bound controller lets this batch write back now (0: wait). */
    private int allowance(Tunables t, long cached) {
        long[] sample = stats.busy.sample();
        WritebackController.Decision d = binding.decide(t.controller(), t.controllerTunables(),
                new WritebackController.CacheLoad(clock.nanoTime(), cached, state.slots(), state.layout.blockSize(),
                        (int) sample[0], 0, sample[1], sample[2], t.writebackBatch()));
        if (d.blocks() <= 0) {
            long again = d.askAgainNanos() > 0 ? d.askAgainNanos() : IDLE_MILLIS * 1_000_000L;
            controllerWait = true;
            notBefore = clock.nanoTime() + again;
        }
        return d.blocks();
    }

    /** The controller binding's keys and whether writeback is paused for writes going around. */
    void status(Map<String, String> m) {
        m.put("writeback_paused", paused ? "1" : "0");
        m.putAll(binding.status(tunables.get().controller()));
    }

    ControllerBinding binding() {
        return binding;
    }
}
