package dev.strata.cache.commands.internal;

import java.io.IOException;
import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Map;

import dev.strata.api.CacheMode;
import dev.strata.api.CacheTarget;
import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager;
import dev.strata.api.InvalidArgumentException;
import dev.strata.cache.commands.internal.CacheOps.Cancelled;

/**
 * {@code cache:switch DEV TYPE [cache=CDEV] [key=value…]}: another cache policy (or the same one
 * on another cache device, or with other arguments) over the same backing device, live.
 *
 * <h2>Order</h2>
 * <ol>
 * <li>Everything is checked first ({@link DeviceManager#checkSwitch}): a mistake is one line and
 * nothing is drained, paused or stored. The manager also says whether the new target adopts the
 * old one's state (a readcache over the same devices with another policy; the same policy over the
 * same devices): then there is no drain and the cached data is kept.</li>
 * <li>Otherwise the drain, as in {@code cache:detach}: a mode that keeps new writes out of the cache,
 * every dirty block written back while I/O continues (progress line, ETA), then the old cache's
 * copies invalidated (so that no later cache over the old cache device can serve a copy older than
 * the backing device). The gate is never closed for this.</li>
 * <li>The swap ({@link DeviceManager#switchTarget}): one short pause. A new cache device is
 * formatted before the pause while the old cache serves I/O; the old cache device reused is
 * released by the old target inside the pause and then formatted ({@code format=true} for that
 * first build only: the old target left it clean and invalidated) while the backing device serves
 * I/O, and a second short pause installs the new cache. For such an in-place switch the drain
 * uses {@code passthrough} where the old cache has it, so no copy re-enters the device.</li>
 * </ol>
 * Cancelled (Ctrl-C, {@code cache:switch --cancel DEV}) or failed before the swap: the old mode
 * comes back and the device stays as it was (blocks written back stay so).
 */
final class SwitchOp {
    /** The argument key naming a cache device, the same for every policy's factory. */
    static final String CACHE = "cache";
    /** What a factory takes to format its cache device (the first build over a released one). */
    static final String FORMAT_KEY = "format";
    static final Map<String, String> FORMAT = Map.of(FORMAT_KEY, "true");

    private final DeviceManager manager;
    private final CacheOps ops;
    /** The command this runs for ({@code switch}, {@code resize}), for its cancel lines. */
    private final String verb;

    SwitchOp(DeviceManager manager, CacheOps ops) {
        this(manager, ops, "switch");
    }

    SwitchOp(DeviceManager manager, CacheOps ops, String verb) {
        this.manager = manager;
        this.ops = ops;
        this.verb = verb;
    }

    /** The old target as the switch found it. */
    record Old(String type, String backing, String cache) {
    }

    /** What a switch did: blocks written back first, whether the state was adopted, the pause in µs. */
    record Result(Old old, Map<String, String> args, long writtenBack, boolean adopted, String pauseMicros) {
    }

    /** The outcome of the drain. */
    private record Drained(CacheMode mode, long writtenBack) {
    }

    String run(String device, String type, Map<String, String> given, PrintStream out, Detaches.Run run)
            throws IOException, Cancelled {
        Result r = swap(device, type, given, out, run);
        return Render.switched(device, type, r.args().get(CACHE), r.old().type(), r.old().cache(), r.adopted(),
                r.writtenBack(), r.pauseMicros());
    }

    /** The old target of {@code device}: its type, backing and cache device (a mistake is one line). */
    Old old(String device) throws IOException, Cancelled {
        return ops.call(device, t -> old(device, t));
    }

    /** The switch itself (see the class comment); {@link #run} renders it. */
    Result swap(String device, String type, Map<String, String> given, PrintStream out, Detaches.Run run)
            throws IOException, Cancelled {
        Old old = old(device);
        Map<String, String> args = new LinkedHashMap<>(given);
        args.putIfAbsent(CACHE, old.cache());
        boolean reusesCache = args.get(CACHE).equals(old.cache());
        // format=true is for the first build only: the stored definition must recover the new cache
        // at the next start, not format it again
        String format = args.remove(FORMAT_KEY);
        Map<String, String> first = format == null ? Map.of() : Map.of(FORMAT_KEY, format);
        boolean adopted = manager.checkSwitch(device, type, args, old.backing(), first);
        if (!adopted && reusesCache && format == null) {
            // the old target leaves its device clean and invalidated before the new one formats it
            first = FORMAT;
            manager.checkSwitch(device, type, args, old.backing(), first);
        }
        boolean inPlace = reusesCache && !adopted;
        Drained drained = adopted ? new Drained(null, 0) : ops.call(device, t -> drain(device, t, out, run, inPlace));
        run.reached("drained");
        if (!run.beginSwap()) {
            Thread.interrupted(); // the cancel's interrupt is handled here; the restore must run
            throw CacheOps.cancelled(out, device, verb, Render.cancelled(device, verb, drained.writtenBack(), 0)
                    + restore(device, drained));
        }
        long writtenBack = drained.writtenBack();
        for (int attempt = 1;; attempt++) {
            try {
                manager.switchTarget(device, type, args, old.backing(), first);
                break;
            } catch (InvalidArgumentException e) {
                // the pause found blocks dirty again (a write that read the cache's mode before the
                // drain set the clean one lands after it): nothing changed; drain once more and retry.
                // None dirty by now is no other reason: a client's next write of such a block went
                // around and dropped the copy since (ResizeCommandTest[12] failed so under load); a
                // refusal of another kind comes back the same on every try and ends with the last
                if (adopted || attempt >= CacheOps.DRAIN_ATTEMPTS || !stillOld(device)) {
                    throw CacheOps.failure(device, e, stillOld(device) ? unlessSaid(e, restore(device, drained)) : "");
                }
                if (dirty(device) != 0) {
                    writtenBack += ops.call(device, t -> redrain(device, t, out));
                }
            } catch (IOException | RuntimeException e) {
                // Ctrl-C reaches the thread in the swap too (only --cancel is refused there): while
                // the new target was built, e.g. formatting its cache device. The interrupt must be
                // cleared first, or the restore's own call would be refused and the old target left
                // in its clean mode; and the line must be printed, as Gogo drops an interrupted result
                boolean interrupted = Thread.interrupted() | CacheOps.byInterrupt(e);
                boolean before = stillOld(device);
                String restored = before ? restore(device, drained) : "";
                if (interrupted && before) {
                    throw CacheOps.cancelled(out, device, verb, Render.cancelled(device, verb, writtenBack, 0) + restored);
                }
                throw CacheOps.failure(device, e, unlessSaid(e, restored));
            }
        }
        return new Result(old, args, writtenBack, adopted, manager.status(device).get("last_swap_pause_us"));
    }

    private Old old(String device, CacheTarget t) {
        DeviceInfo info = manager.info(device)
                .orElseThrow(() -> new InvalidArgumentException("no device named '" + device + "'; see dev:list"));
        String backing = info.arguments().get(t.authoritativeDeviceArgument());
        String cache = info.arguments().get(t.cacheDeviceArgument());
        if (backing == null || backing.isBlank() || cache == null || cache.isBlank()) {
            throw new InvalidArgumentException(device + ": its definition names no " + t.authoritativeDeviceArgument()
                    + " or " + t.cacheDeviceArgument() + " device; cannot switch");
        }
        return new Old(info.type(), backing, cache);
    }

    /** Clean mode, every dirty block written back, the old copies invalidated; cancellable throughout. */
    private Drained drain(String device, CacheTarget t, PrintStream out, Detaches.Run run, boolean inPlace)
            throws IOException, Cancelled {
        CacheMode old = t.mode();
        CacheMode clean = old.holdsDirtyData() ? CacheOps.cleanMode(device, t) : old;
        if (inPlace && t.supportedModes().contains(CacheMode.PASSTHROUGH)) {
            // the new target takes over this cache device: from the invalidation on nothing may enter
            // it again (not even a read's copy), so that the device can serve I/O meanwhile
            clean = CacheMode.PASSTHROUGH;
        }
        try {
            SuspendedBelow.refuse(manager, device, t); // the drain and the invalidation would wait at its gate
        } catch (InterruptedException e) {
            throw new Cancelled(device, verb); // nothing changed yet
        }
        ProgressLine p = ops.progress(device, t, out);
        try {
            if (run.cancelled()) {
                Thread.interrupted();
                throw new InterruptedException("cancelled before the drain");
            }
            CacheOps.switchTo(t, clean, p);
            CacheOps.invalidate(t, p);
            if (run.cancelled()) {
                Thread.interrupted();
                throw new InterruptedException("cancelled after the drain");
            }
        } catch (InterruptedException e) {
            throw cancelled(device, t, out, p, old);
        } catch (IOException | RuntimeException e) {
            if (run.cancelled()) {
                // a policy may report the interrupt of its writeback as an I/O error: still a cancel
                throw cancelled(device, t, out, p, old);
            }
            p.end();
            throw CacheOps.failure(device, e, CacheOps.restore(t, old));
        }
        p.end();
        return new Drained(old, p.writtenBack());
    }

    private Cancelled cancelled(String device, CacheTarget t, PrintStream out, ProgressLine p, CacheMode old) {
        Thread.interrupted(); // a --cancel may interrupt again after the call that threw; the restore must run
        p.end();
        p.settle(t.dirtyBlocks());
        String restored = CacheOps.restore(t, old);
        return CacheOps.cancelled(out, device, verb, Render.cancelled(device, verb, p.writtenBack(), p.dirty()) + restored);
    }

    private long dirty(String device) throws IOException, Cancelled {
        return ops.call(device, CacheTarget::dirtyBlocks);
    }

    /** A second drain (the clean mode is still set), with its own progress line; blocks written back. */
    private long redrain(String device, CacheTarget t, PrintStream out) throws IOException {
        ProgressLine p = ops.progress(device, t, out);
        try {
            CacheOps.invalidate(t, p);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException(device + ": interrupted while writing back again before the swap");
        } finally {
            p.end();
        }
        return p.writtenBack();
    }

    /** Whether the device still has the old target (a failure before the switch's commit). */
    private boolean stillOld(String device) {
        return manager.info(device).map(i -> i.state() == dev.strata.api.DeviceState.ACTIVE).orElse(false);
    }

    /**
     * The restore's words, but not a "nothing changed" after the manager's own "stays TYPE as it was"
     * (an in-place build that failed and was undone).
     */
    private static String unlessSaid(Exception e, String restored) {
        String m = e.getMessage();
        return restored.equals(NOTHING_CHANGED) && m != null && m.endsWith(" as it was") ? "" : restored;
    }

    private static final String NOTHING_CHANGED = "; nothing changed";

    private String restore(String device, Drained d) {
        return d.mode() == null ? NOTHING_CHANGED : ops.restoreAfter(device, d.mode());
    }
}
