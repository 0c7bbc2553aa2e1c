package dev.strata.cache.commands.internal;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.PrintStream;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedByInterruptException;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

import dev.strata.api.CacheMode;
import dev.strata.api.CacheTarget;
import dev.strata.api.CacheTarget.Actions;
import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager;
import dev.strata.api.InvalidArgumentException;

/**
 * The long cache operations behind the commands — write back everything, switch mode, detach —
 * on any {@link CacheTarget}, reached only through {@link DeviceManager#withTarget}.
 *
 * <h2>Cancellation</h2>
 * An interrupt of the calling thread (Ctrl-C in the shell, or the manager closing the target)
 * makes {@link CacheTarget#writebackAll} throw {@link InterruptedException}; nothing is lost by
 * that (blocks written back stay so, the rest stay dirty). The operation then puts back what it
 * changed (the mode), prints a line saying how far it got on the output the progress line was on,
 * and throws {@link Cancelled}. The line is printed, not returned, because Gogo drops the result
 * of a job it interrupted (Ctrl-C): the session's {@code execute} throws its own
 * InterruptedException instead.
 */
final class CacheOps {

    /** A cancelled operation; its report has been printed already. */
    static final class Cancelled extends InterruptedException {
        private static final long serialVersionUID = 1L;

        Cancelled(String device, String what) {
            super(device + ": " + what + " cancelled");
        }
    }

    /** The target type a detached cache becomes (core's). */
    static final String LINEAR = "linear";
    /**
     * How many times a drain is retried when the cache is dirty again right after it (writes the
     * new mode still lets into the cache, e.g. sub-block writes of a log cache).
     */
    static final int DRAIN_ATTEMPTS = 5;

    private final DeviceManager manager;
    private final LongSupplier nanoTime;
    /** Whether progress is drawn for a terminal ({@code \r}) or printed as occasional whole lines. */
    private final boolean terminal;

    CacheOps(DeviceManager manager, LongSupplier nanoTime) {
        this(manager, nanoTime, true);
    }

    CacheOps(DeviceManager manager, LongSupplier nanoTime, boolean terminal) {
        this.manager = manager;
        this.nanoTime = nanoTime;
        this.terminal = terminal;
    }

    /**
     * {@code cache:stats}: the cache API's figures and every status key of the device. Read from the
     * device's status (which takes no lock of the device's operations), so that it answers at once
     * also while a long operation runs, e.g. a {@code cache:replace} copying; only when the keys are
     * not there (not a cache: the one-line refusal; a target being swapped) through the target.
     */
    CacheStatus status(String device) throws IOException, Cancelled {
        Map<String, String> values = manager.status(device);
        CacheStatus s = CacheStatus.fromKeys(device, values);
        if (s != null) {
            return s;
        }
        CacheStatus typed = call(device, t -> CacheStatus.of(device, t, Map.of()));
        values = manager.status(device);
        return new CacheStatus(device, typed.mode(), typed.blockSize(), typed.capacityBlocks(), typed.cachedBlocks(),
                typed.dirtyBlocks(), values);
    }

    /** {@code cache:set}: refuses a device that is not a cache before the manager sees the key. */
    String set(String device, String key, String value, boolean persist) throws IOException, Cancelled {
        call(device, t -> null);
        // the target's note: a change accepted that takes effect later (writecache's mode writearound
        // while dirty is pending until the dirty blocks are written back)
        String note = manager.messageWithNote(device, key, value, persist);
        // the manager keeps only what the cache reports in its status (a setting); say so for the rest,
        // or "rc0: threshold=4" reads as kept while a policy's tunable is not (docs/readcache.md)
        Map<String, String> status = manager.status(device);
        boolean action = status != null && !status.containsKey(key);
        return Render.set(device, key, value, persist, action) + (note == null || note.isBlank() ? "" : " (" + note + ")");
    }

    /** {@code cache:writeback}: every dirty block, with a progress line on {@code out}. */
    String writeback(String device, PrintStream out) throws IOException, Cancelled {
        return call(device, t -> {
            ProgressLine p = progress(device, t, out);
            if (t.dirtyBlocks() == 0) {
                return Render.clean(device, 0, 0);
            }
            SuspendedBelow.refuse(manager, device, t); // the writeback would wait at its gate
            try {
                writebackAll(t, p);
            } catch (InterruptedException e) {
                p.end();
                p.settle(t.dirtyBlocks());
                throw cancelled(out, device, "writeback", Render.cancelled(device, "writeback", p.writtenBack(), p.dirty()));
            } catch (IOException | RuntimeException e) {
                p.end();
                throw new IOException(device + ": writeback failed after " + Render.count(p.writtenBack())
                        + " blocks, " + Render.count(t.dirtyBlocks()) + " still dirty: " + e.getMessage(), e);
            }
            p.end();
            return Render.clean(device, p.writtenBack(), p.elapsedNanos());
        });
    }

    /**
     * {@code cache:attach}: the manager moves the device's target to a new lower device and swaps
     * the cache in (no drain: nothing is dirty yet); the report names the new lower device and the
     * pause the manager measured.
     */
    String attach(String device, String type, Map<String, String> args, String lower) throws IOException {
        DeviceInfo before = manager.info(device)
                .orElseThrow(() -> new InvalidArgumentException("no device named '" + device + "'; see dev:list"));
        DeviceInfo after = manager.attach(device, type, args, lower);
        String moved = lower;
        if (moved == null) {
            for (String l : after.lower()) {
                if (!args.containsValue(l)) {
                    moved = l;
                }
            }
        }
        String pause = manager.status(device).get("last_swap_pause_us");
        return Render.attached(device, type, args.get("cache"), before.type(), moved, pause);
    }

    /** {@code cache:mode DEV}: the mode and the supported ones. */
    String mode(String device) throws IOException, Cancelled {
        return call(device, t -> Render.modes(device, t.mode(), pending(t), t.dirtyBlocks(), t.supportedModes()));
    }

    /**
     * {@code cache:mode DEV MODE}: drains first (with progress) if the mode cannot hold dirty data.
     * The word is read against the modes this cache has, so that a mistake lists those.
     */
    String mode(String device, String word, PrintStream out) throws IOException, Cancelled {
        String[] persistKey = new String[1];
        CacheMode[] chosen = new CacheMode[1];
        String done = call(device, t -> {
            persistKey[0] = t.modeTunable();
            CacheMode old = t.mode();
            CacheMode mode = parseMode(word);
            if (mode == null) {
                throw new InvalidArgumentException(Render.unknownMode(device, word, t.supportedModes()));
            }
            chosen[0] = mode;
            if (!t.supportedModes().contains(mode)) {
                throw new InvalidArgumentException(Render.unsupported(device, mode, t.supportedModes()));
            }
            String pending = pending(t);
            if (old == mode && pending != null && !pending.equals(mode.label())) {
                // the mode reads writeback while a switch away from it waits for the dirty blocks:
                // asking for writeback again cancels that switch (the message below sets it)
                return Render.pendingCancelled(device, mode, pending);
            }
            if (old == mode) {
                return Render.modeChanged(device, mode, old);
            }
            if (!mode.holdsDirtyData() && t.dirtyBlocks() != 0) {
                SuspendedBelow.refuse(manager, device, t); // the drain would wait at its gate
            }
            ProgressLine p = progress(device, t, out);
            try {
                switchTo(t, mode, p);
            } catch (InterruptedException e) {
                p.end();
                p.settle(t.dirtyBlocks());
                String restored = restore(t, old);
                throw cancelled(out, device, "mode change",
                        Render.cancelled(device, "mode change", p.writtenBack(), p.dirty()) + restored);
            } catch (IOException | RuntimeException e) {
                p.end();
                throw failure(device, e, restore(t, old));
            }
            p.end();
            return Render.modeChanged(device, mode, old);
        });
        if (persistKey[0] != null) {
            // stored like dev:message --persist so the mode survives a restart; the target is in
            // the mode already, and setting its tunable again does not drain
            manager.message(device, persistKey[0], chosen[0].label(), true);
        }
        return done;
    }

    /** The mode a cache is switching to once its dirty blocks are written back, or null. */
    private static String pending(dev.strata.api.CacheTarget t) {
        Map<String, String> status = t.status();
        String p = status == null ? null : status.get(dev.strata.api.CacheTarget.Keys.MODE_PENDING);
        return p == null || p.isBlank() ? null : p.trim();
    }

    /** The mode a word names, or null. */
    static CacheMode parseMode(String word) {
        try {
            return CacheMode.parse(word);
        } catch (InvalidArgumentException e) {
            return null;
        }
    }

    /**
     * {@code cache:detach}: a mode that keeps new writes out of the cache, every dirty block
     * written back while I/O continues, the cache's copies invalidated (so a later cache over the
     * same devices cannot serve a copy older than the backing device; not with {@code keepCache}),
     * then one short swap: a cache that {@code cache:attach} put there collapses back onto the lower
     * device it made ({@link DeviceManager#collapse}: the device's old target is back, the lower
     * device gone); any other becomes {@code linear} over its authoritative device. Cancelled
     * (Ctrl-C, {@code --cancel}) or failed before the swap: the old mode comes back and the device
     * stays cached.
     */
    String detach(String device, PrintStream out, boolean keepCache, Detaches.Run run) throws IOException, Cancelled {
        Prepared prep = call(device, t -> prepareDetach(device, t, out, keepCache, run));
        run.reached("drained");
        if (!run.beginSwap()) {
            Thread.interrupted(); // the cancel's interrupt is handled here; the restore must run
            String restored = restoreAfter(device, prep.old());
            throw cancelled(out, device, "detach", Render.cancelled(device, "detach", prep.writtenBack(), 0) + restored);
        }
        for (int attempt = 1;; attempt++) {
            try {
                if (prep.collapse()) {
                    manager.collapse(device, prep.lower());
                } else {
                    manager.reload(device, LINEAR, Map.of("device", prep.lower()), false);
                }
                break;
            } catch (InvalidArgumentException e) {
                // dirty again when the pause looked (a write that read the cache's mode before the
                // drain set the clean one lands after it): nothing changed; drain once more and
                // retry. None dirty by now is no other reason (a later write of the block went around
                // and dropped the copy since: as SwitchOp); the drain below is then a no-op
                if (attempt >= DRAIN_ATTEMPTS) {
                    throw failure(device, e, restoreAfter(device, prep.old()));
                }
                call(device, t -> {
                    ProgressLine p = progress(device, t, out);
                    try {
                        if (keepCache) {
                            drain(t, p);
                        } else {
                            invalidate(t, p);
                        }
                    } finally {
                        p.end();
                    }
                    return null;
                });
            } catch (IOException | RuntimeException e) {
                // Ctrl-C reaches the thread in the swap too: the restore must not run with the
                // interrupt set (its own call would be refused, leaving the clean mode), and the line
                // must be printed, as Gogo drops an interrupted command's result
                boolean interrupted = Thread.interrupted() | byInterrupt(e);
                String restored = restoreAfter(device, prep.old());
                if (interrupted) {
                    throw cancelled(out, device, "detach", Render.cancelled(device, "detach", prep.writtenBack(), 0) + restored);
                }
                throw failure(device, e, restored);
            }
        }
        if (prep.collapse()) {
            DeviceInfo now = manager.info(device).orElseThrow(() -> new IOException(device + ": gone after the detach"));
            return Render.collapsed(device, now.type(), prep.lower(), prep.writtenBack(),
                    manager.status(device).get("last_swap_pause_us"), keepCache);
        }
        return Render.detached(device, prep.lower(), prep.writtenBack());
    }

    /** The old mode put back after the drain (the target is no longer held). */
    String restoreAfter(String device, CacheMode old) {
        try {
            return call(device, t -> restore(t, old));
        } catch (IOException | RuntimeException | Cancelled again) {
            return "; could not restore mode " + old.label() + ": " + again.getMessage();
        }
    }

    /** The outcome of the part of a detach that runs with the target held. */
    private record Prepared(String lower, CacheMode old, long writtenBack, boolean collapse) {
    }

    private Prepared prepareDetach(String device, CacheTarget t, PrintStream out, boolean keepCache, Detaches.Run run)
            throws IOException, Cancelled {
        String arg = t.authoritativeDeviceArgument();
        DeviceInfo info = manager.info(device)
                .orElseThrow(() -> new InvalidArgumentException("no device named '" + device + "'; see dev:list"));
        String lower = info.arguments().get(arg);
        if (lower == null || lower.isBlank()) {
            throw new InvalidArgumentException(device + ": its definition names no " + arg + " device; cannot detach");
        }
        // a lower device cache:attach made for this device (core's lower_of status key) is collapsed
        // back onto; its identity goes with it, so no cache can later be reopened over it
        boolean collapse = device.equals(manager.status(lower).get("lower_of"));
        if (keepCache && !collapse) {
            throw new InvalidArgumentException(Render.keepCacheNeedsAttach(device, lower));
        }
        CacheMode old = t.mode();
        CacheMode clean = old.holdsDirtyData() ? cleanMode(device, t) : old;
        try {
            SuspendedBelow.refuse(manager, device, t); // the drain and the invalidation would wait at its gate
        } catch (InterruptedException e) {
            throw new Cancelled(device, "detach"); // nothing changed yet
        }
        ProgressLine p = progress(device, t, out);
        try {
            if (run.cancelled()) {
                Thread.interrupted();
                throw new InterruptedException("cancelled before the drain");
            }
            switchTo(t, clean, p);
            if (keepCache) {
                for (int i = 0; i < DRAIN_ATTEMPTS && t.dirtyBlocks() != 0; i++) {
                    drain(t, p);
                }
            } else {
                invalidate(t, p);
            }
            if (run.cancelled()) {
                Thread.interrupted();
                throw new InterruptedException("cancelled after the drain");
            }
        } catch (InterruptedException e) {
            Thread.interrupted(); // a --cancel may interrupt again after the call that threw; the restore must run
            p.end();
            p.settle(t.dirtyBlocks());
            String restored = restore(t, old);
            throw cancelled(out, device, "detach", Render.cancelled(device, "detach", p.writtenBack(), p.dirty()) + restored);
        } catch (IOException | RuntimeException e) {
            p.end();
            throw failure(device, e, restore(t, old));
        }
        p.end();
        return new Prepared(lower, old, p.writtenBack(), collapse);
    }

    /** The first supported mode that cannot hold dirty data, preferring the one that keeps reads cached. */
    static CacheMode cleanMode(String device, CacheTarget t) {
        for (CacheMode m : List.of(CacheMode.WRITEAROUND, CacheMode.WRITETHROUGH, CacheMode.PASSTHROUGH)) {
            if (t.supportedModes().contains(m)) {
                return m;
            }
        }
        throw new InvalidArgumentException(device + ": this cache has no mode that keeps new writes clean (supported: "
                + Render.labels(t.supportedModes()) + "), so it cannot be drained while in use; stop the writers first");
    }

    /**
     * Sets {@code mode}; for a mode that cannot hold dirty data, drains until the cache is clean
     * in that mode. The contract lets a target refuse such a switch while dirty (having already
     * stopped new dirty data), so a refusal while dirty is answered by a writeback and a retry.
     */
    static void switchTo(CacheTarget t, CacheMode mode, ProgressLine p) throws IOException, InterruptedException {
        InvalidArgumentException refused = null;
        for (int attempt = 0; attempt < DRAIN_ATTEMPTS; attempt++) {
            try {
                t.setMode(mode);
                refused = null;
            } catch (InvalidArgumentException e) {
                if (mode.holdsDirtyData() || !t.supportedModes().contains(mode)) {
                    throw e; // not about dirty data
                }
                // about dirty data, also when none is dirty by now: a client's write around dropped
                // the last copy since (SwitchCommandTest[23] under load); the drain is then a no-op
                refused = e;
            }
            if (mode.holdsDirtyData() || (refused == null && t.dirtyBlocks() == 0)) {
                return;
            }
            drain(t, p);
        }
        if (refused != null) {
            throw refused;
        }
        // the mode is set; what is still dirty came in through it and is written back as usual
    }

    /** {@code invalidate=all}, which needs a clean cache: drains and retries while it is dirty again. */
    static void invalidate(CacheTarget t, ProgressLine p) throws IOException, InterruptedException {
        for (int attempt = 1;; attempt++) {
            drain(t, p);
            try {
                t.message(Actions.INVALIDATE, Actions.ALL);
                return;
            } catch (InvalidArgumentException e) {
                // refused while dirty: a write that read the mode before the drain landed after it.
                // None dirty by now is no other reason (a later write of the block went around and
                // dropped it): try again; a refusal of another kind ends with the last attempt
                if (attempt >= DRAIN_ATTEMPTS) {
                    throw e;
                }
            }
        }
    }

    private static void drain(CacheTarget t, ProgressLine p) throws IOException, InterruptedException {
        if (t.dirtyBlocks() == 0) {
            return; // already clean: no wait, no progress line
        }
        p.nextCall();
        writebackAll(t, p);
    }

    /**
     * {@link CacheTarget#writebackAll}, with an interrupt that reached the target during a batch's
     * I/O reported as what it is, a cancel. A target checks for the interrupt between batches and
     * throws InterruptedException; but Ctrl-C may land while a batch reads or writes, and then the
     * driver underneath throws an I/O error (InterruptedIOException from a sleeping device,
     * ClosedByInterruptException from a file channel). Nothing is lost either way (the batch stays
     * dirty), and the user must read "cancelled" with how far it got, not "writeback failed".
     */
    static void writebackAll(CacheTarget t, CacheTarget.WritebackProgress p) throws IOException, InterruptedException {
        try {
            t.writebackAll(p);
        } catch (IOException e) {
            if (!byInterrupt(e)) {
                throw e;
            }
            InterruptedException cancel = new InterruptedException("writeback interrupted during a batch's I/O");
            cancel.initCause(e);
            throw cancel;
        }
    }

    /** An I/O error that an interrupt of the calling thread caused (a timeout is not one). */
    static boolean byInterrupt(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof ClosedByInterruptException
                    || (c instanceof InterruptedIOException && !(c instanceof SocketTimeoutException))) {
                return true;
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return false;
    }

    /**
     * Puts the old mode back; returns the text to append to the report. Always through setMode,
     * also when {@code mode()} still says the old one: a refused switch may have stopped new
     * dirty data all the same (the contract's first step), and only setMode undoes that.
     */
    static String restore(CacheTarget t, CacheMode old) {
        try {
            t.setMode(old);
            return Render.restoredSuffix(old);
        } catch (IOException | RuntimeException e) {
            return "; could not restore mode " + old.label() + ": " + e.getMessage();
        }
    }

    /**
     * The error to report, with what was put back: an {@link InvalidArgumentException} (a user
     * mistake, one line) is thrown as such, anything else is returned as an IOException to throw.
     */
    static IOException failure(String device, Exception e, String suffix) {
        String m = e.getMessage() == null ? e.toString() : e.getMessage();
        String prefix = m.startsWith(device + ":") ? "" : device + ": ";
        if (e instanceof InvalidArgumentException) {
            throw new InvalidArgumentException(prefix + m + suffix);
        }
        return new IOException(prefix + m + suffix, e);
    }

    static Cancelled cancelled(PrintStream out, String device, String what, String report) {
        out.println(report);
        out.flush();
        return new Cancelled(device, what);
    }

    ProgressLine progress(String device, CacheTarget t, PrintStream out) {
        return new ProgressLine(out, device, t.cacheBlockSize(), t.dirtyBlocks(), nanoTime, terminal);
    }

    /**
     * Runs {@code call} with the device's cache target held. An interrupt that arrives before the
     * call began (no target touched) is one line too.
     */
    <R> R call(String device, DeviceManager.TargetCall<CacheTarget, R> call) throws IOException, Cancelled {
        try {
            return manager.withTarget(device, CacheTarget.class, call);
        } catch (Cancelled e) {
            throw e;
        } catch (InterruptedException e) {
            throw new Cancelled(device, "command"); // before the call began: nothing changed
        }
    }
}
