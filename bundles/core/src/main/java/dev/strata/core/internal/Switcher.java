package dev.strata.core.internal;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.strata.api.BlockDevice;
import dev.strata.api.CacheTarget;
import dev.strata.api.Claim;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;

/**
 * Replaces a device's cache target by another over the same backing device
 * ({@link dev.strata.api.DeviceManager#switchTarget}, the last step of {@code cache:switch}).
 *
 * <h2>Two orders</h2>
 * <ul>
 * <li><b>Alongside</b> — the new target's lower devices other than the backing one are not the
 * old target's (another cache device): the new target is built while the old one serves I/O (it
 * holds nothing dirty, so it writes nothing to the shared backing device); then the pause: gate
 * closed and drained, old target suspended, checked clean (unless adopted) and flushed, the new
 * definition stored (the <b>commit</b>), the new target installed, gate open; then the old target is
 * closed. A failure before the commit resumes the old target and closes the new one.</li>
 * <li><b>In place</b> — the new target reuses a lower device of the old (the same cache device):
 * the two cannot run at once, so inside the pause the old target is suspended, checked, flushed and
 * <em>closed</em> (its cache device released, everything durable), then two orders again:
 * <ul>
 * <li><em>without a format</em> (the old state adopted, or no {@code format=true}): the new target
 * built over the released devices, then its definition stored (the commit), then installed. A build
 * that fails on what it finds there (a readcache formatted with another {@code block_size}) is
 * undone: the old target reopened from the stored definition — still the old one — over its devices,
 * which the failed build did not write (see {@link #buildThenCommit}), and the switch refused in one
 * line. Only if the old target cannot be reopened either is the new definition stored after all and
 * the device left waiting for it.</li>
 * <li><em>with a format</em>: the new definition stored (the commit), and only then the new target
 * built (formatting the released device) and installed; a build that fails now leaves the device
 * waiting for it (the old cache's contents are what the format drops).</li>
 * </ul>
 * A failure before the commit reopens the old target from its definition. When the new
 * target formats ({@code format=true} among the first-build arguments, not adopted), the gate does
 * not stay closed for its build: after the commit a {@link Bridge} serves every request from the
 * backing device (the old cache was clean and is closed, and what the new one finds on the device
 * cannot go stale: another policy's format, which it can only format, or the old cache held no
 * copy), and a second short pause — requests drained, backing device flushed — installs the new
 * target. The pause reported is the longer of the two.</li>
 * </ul>
 *
 * <h2>Crash at any point</h2>
 * The stored definition is the old one until the commit and the new one after it. Before the
 * commit a restart reopens the old target over its intact devices (in place: nothing was formatted
 * yet; without a format, also after the new target's build and before its store: that build wrote
 * nothing the old target's open would not read as after a restart, and no request reached it —
 * see {@link #buildThenCommit}). After it the new target is built at start — with the first-build arguments (a format of the
 * released cache device), which are stored with the commit and dropped by a second store once the
 * first build succeeded. Because the old target was clean at the commit (or its state adopted),
 * the backing device (or the adopting target) holds every block either way.
 * <p>
 * Runs under the device's {@code op} lock.
 */
final class Switcher {
    private static final Logger LOG = LoggerFactory.getLogger(Switcher.class);
    private final Core core;
    /**
     * A hook for tests, called with the phase reached: {@code built} (alongside, before the pause: a
     * throw takes the rollback path), {@code closed} (in place, the old target closed, before the
     * commit and, without a format, before the new target's build: a throw reopens the old one),
     * {@code committed} (after the commit: must not throw).
     */
    volatile Attacher.PhaseHook hook = phase -> { };

    Switcher(Core core) {
        this.core = core;
    }

    /** What a switch will do, validated. */
    private record Plan(DeviceDefinition oldDef, DeviceDefinition def, DeviceDefinition firstDef, FactoryEntry entry,
            List<String> newLowers, Map<String, Claim> newClaims, List<String> reused, boolean adopted) {
    }

    /** {@link dev.strata.api.DeviceManager#checkSwitch}: validates; whether the new target adopts the old's state. */
    boolean check(String name, String type, Map<String, String> arguments, String backing,
            Map<String, String> firstBuild) throws IOException {
        MappedDevice d = core.graph.require(name);
        core.operations.lockOp(d);
        try {
            return plan(d, type, arguments, backing, firstBuild).adopted();
        } finally {
            d.op.unlock();
        }
    }

    /** Switches; see the class comment. */
    void switchTarget(String name, String type, Map<String, String> arguments, String backing,
            Map<String, String> firstBuild) throws IOException {
        MappedDevice d = core.graph.require(name);
        core.operations.lockOp(d);
        try {
            String before = d.lastError;
            switchLocked(d, plan(d, type, arguments, backing, firstBuild), firstBuild == null ? Map.of() : firstBuild);
            d.clearErrorNotedBefore(before);
        } finally {
            d.op.unlock();
        }
        core.reconciler.scheduleWaiting(); // what the old target claimed (a cache device) may be free now
    }

    private Plan plan(MappedDevice d, String type, Map<String, String> arguments, String backing,
            Map<String, String> firstBuild) {
        Objects.requireNonNull(arguments, "arguments");
        if (d.removed) {
            throw DeviceGraph.unknownDevice(d.name);
        }
        FactoryEntry entry = core.factories.require(type);
        String key = backingArgument(entry);
        if (key == null) {
            throw new InvalidArgumentException("a '" + type + "' target names no backing device; a cache cannot be "
                    + "switched to it");
        }
        if (arguments.containsKey(key)) {
            throw new InvalidArgumentException("leave out " + key + "=: the switch keeps " + d.name
                    + "'s backing device");
        }
        if (d.userSuspended) {
            throw new InvalidArgumentException("device '" + d.name + "' is suspended; dev:resume " + d.name
                    + " first, then switch");
        }
        if (d.target == null) {
            throw new InvalidArgumentException("device '" + d.name + "' has no target right now (waiting for "
                    + d.waitingFor + "); switch when it is active");
        }
        if (backing == null || !d.lowers.contains(backing)) {
            throw new InvalidArgumentException("device '" + backing + "' is not under " + d.name
                    + "; a switch keeps the backing device");
        }
        DeviceDefinition oldDef = d.definition;
        Map<String, String> args = new LinkedHashMap<>(arguments);
        args.put(key, backing);
        Map<String, String> tunables = new LinkedHashMap<>();
        if (oldDef.type().equals(entry.type())) {
            tunables.putAll(oldDef.tunables()); // the same policy: its settings still apply
            tunables.keySet().removeAll(args.keySet());
        }
        DeviceDefinition def = new DeviceDefinition(d.name, entry.type(), args, oldDef.id(), tunables, null,
                oldDef.lowerOf());
        Map<String, String> firstArgs = new LinkedHashMap<>(args);
        if (firstBuild != null) {
            firstArgs.putAll(firstBuild);
        }
        DeviceDefinition firstDef = new DeviceDefinition(d.name, entry.type(), firstArgs, oldDef.id(), tunables,
                null, oldDef.lowerOf());
        if (firstDef.type().equals(oldDef.type()) && firstDef.arguments().equals(oldDef.arguments())) {
            throw new InvalidArgumentException(d.name + ": already " + oldDef.type() + " with these arguments; "
                    + "nothing to switch");
        }
        List<String> newLowers = FactoryRegistry.lowerDevices(entry, firstArgs);
        Map<String, Claim> newClaims = FactoryRegistry.claims(entry, firstArgs, newLowers);
        if (!newLowers.contains(backing)) {
            throw new InvalidArgumentException(entry.type() + ": its " + key + "= argument names no lower device");
        }
        // what the build would refuse for the arguments alone, refused now: in place the build comes
        // after the old target is closed and the new definition stored (the drain before that, too)
        core.lifecycle.check(entry, firstDef);
        List<String> reused = new ArrayList<>();
        synchronized (core.graph.lock) {
            for (String lower : newLowers) {
                core.graph.requireReadyLowerLocked(lower, d.name);
                if (lower.equals(d.name) || core.graph.dependsOnLocked(lower, d.name)) {
                    throw new InvalidArgumentException("device '" + lower + "' is stacked on '" + d.name
                            + "'; a device cannot be stacked on itself");
                }
                if (!lower.equals(backing) && d.lowers.contains(lower)) {
                    reused.add(lower);
                }
            }
            core.graph.checkClaimsLocked(d.name, newClaims);
        }
        return new Plan(oldDef, def, firstDef, entry, newLowers, newClaims, List.copyOf(reused),
                adopts(entry, oldDef, firstArgs));
    }

    private void switchLocked(MappedDevice d, Plan p, Map<String, String> firstBuild) throws IOException {
        Target old = d.target;
        if (!p.adopted()) {
            requireClean(d, old);
        }
        List<String> oldLowers = d.lowers;
        Map<String, Claim> oldClaims = d.claims;
        core.lifecycle.releaseHolds(d, false); // a running cache:writeback etc. must not see the swap
        boolean done = false;
        try {
            synchronized (core.graph.lock) {
                d.lowers = DeviceGraph.union(oldLowers, p.newLowers()); // neither set can be removed meanwhile
                d.claims = DeviceGraph.strongest(oldClaims, p.newClaims());
            }
            BlockDevice backing = backingView(p);
            if (p.reused().isEmpty()) {
                alongside(d, old, backing, p.entry(), p.def(), p.firstDef(), p.newLowers(), p.adopted());
            } else {
                inPlace(d, old, backing, p.oldDef(), oldLowers, p.entry(), p.def(), p.firstDef(), p.newLowers(),
                        p.adopted(), !p.adopted() && formats(firstBuild));
            }
            done = true;
            core.graph.setLowers(d, p.newLowers());
            core.graph.setClaims(d, p.newClaims());
        } finally {
            if (!done) {
                if (d.definition == p.oldDef()) {
                    core.graph.setLowers(d, oldLowers);
                    core.graph.setClaims(d, oldClaims);
                } else {
                    core.graph.setLowers(d, p.newLowers()); // committed, waiting for its new target
                    core.graph.setClaims(d, p.newClaims());
                }
                d.holds.open();
            }
        }
        if (!firstBuild.isEmpty() && d.persistent) {
            try {
                core.store.save(d, p.def()); // built once: a restart must recover it, not format again
            } catch (IOException e) {
                LOG.warn("device {}: could not store its definition without {} ({}); the next start applies them "
                        + "again", d.name, firstBuild.keySet(), e.getMessage());
            }
        }
        LOG.info("switched {} to {} ({}; pause {} µs)", d.name, p.def().tableLine(),
                p.reused().isEmpty() ? "built alongside" : "in place on " + p.reused(), d.lastSwapPauseNanos / 1000);
    }

    private void alongside(MappedDevice d, Target old, BlockDevice backing, FactoryEntry entry, DeviceDefinition def,
            DeviceDefinition firstDef, List<String> newLowers, boolean adopted) throws IOException {
        Lifecycle life = core.lifecycle;
        Target t = life.build(d, entry, firstDef, newLowers);
        boolean committed = false;
        try {
            hook.reached("built");
            // most volatile data made durable while I/O runs, so the flushes in the pause are short
            // (writes in writearound during the drain went straight to the backing device: its
            // flush is the one that costs)
            old.flush();
            backing.flush();
            long closed = System.nanoTime();
            life.quiesce(d);
            life.suspendTarget(d, old); // on failure it resumes the old target and reopens the gate
            try {
                if (!adopted) {
                    requireClean(d, old);
                }
                // writes completed through the old target may be volatile in it; after the swap a
                // client's flush reaches only the new target
                old.flush();
                backing.flush();
                if (d.persistent) {
                    core.store.save(d, firstDef);
                }
            } catch (IOException | RuntimeException e) {
                resume(d, old);
                throw e;
            }
            committed = true;
            d.definition = def;
            life.attach(d, entry, t);
            d.lastSwapPauseNanos = System.nanoTime() - closed;
            hook.reached("committed");
        } finally {
            if (!committed) {
                life.closeQuietly(d, t);
            }
        }
        if (!adopted) {
            // reads it served after the caller's invalidation (before the pause) may have cached blocks again
            StaleCopies.drop(d, old, true);
        }
        life.closeQuietly(d, old);
    }

    private void inPlace(MappedDevice d, Target old, BlockDevice backing, DeviceDefinition oldDef, List<String> oldLowers,
            FactoryEntry entry, DeviceDefinition def, DeviceDefinition firstDef, List<String> newLowers,
            boolean adopted, boolean formats) throws IOException {
        Lifecycle life = core.lifecycle;
        old.flush();
        backing.flush(); // as alongside: the costly flush done while I/O still runs
        long closed = System.nanoTime();
        life.quiesce(d);
        life.suspendTarget(d, old);
        FactoryEntry oldEntry = d.factory;
        try {
            if (!adopted) {
                requireClean(d, old);
            }
            // writes completed through the old target may be volatile in it or in the backing
            // device (writearound); a client's flush after the swap reaches only the new target
            old.flush();
            backing.flush();
        } catch (IOException | RuntimeException e) {
            resume(d, old);
            throw e;
        }
        // decided with the old target suspended: nothing can enter it any more
        boolean bridge = formats && holdsNothing(old, oldDef, def);
        // the old target releases the device the new one reuses, everything durable on it
        d.target = null;
        d.factory = null;
        life.closeQuietly(d, old);
        if (!formats) {
            buildThenCommit(d, oldEntry, oldDef, oldLowers, entry, def, firstDef, newLowers, adopted, closed);
            return;
        }
        try {
            hook.reached("closed");
            if (d.persistent) {
                core.store.save(d, firstDef);
            }
        } catch (IOException | RuntimeException e) {
            reopen(d, oldEntry, oldDef, oldLowers);
            throw e;
        }
        d.definition = def;
        hook.reached("committed");
        long firstPause = System.nanoTime() - closed;
        Bridge b = bridge && backing.size() == d.size ? new Bridge(backingName(entry, def), backing) : null;
        if (b != null) {
            // the new target formats (starts empty) and the old one left the backing device complete:
            // clients are served by the backing device while the format runs, instead of at the gate.
            // The factory stays null (a policy's hot update does not touch the bridge) and the holds
            // stay closed (cache commands wait for the real target).
            d.target = b;
            d.gate.open();
            hook.reached("bridged");
        }
        Target t;
        try {
            t = life.build(d, entry, firstDef, newLowers);
        } catch (IOException | RuntimeException e) {
            if (b != null) {
                try {
                    unbridge(d, backing);
                } catch (IOException | RuntimeException f) {
                    e.addSuppressed(f);
                }
            }
            // committed, and the new target formats: the old one's contents are what it was told to
            // drop, and its format may have begun. The old target was clean: the backing device has every block.
            throw waiting(d, entry, e.getMessage(), false, e);
        }
        if (b == null) {
            life.attach(d, entry, t);
            d.lastSwapPauseNanos = System.nanoTime() - closed;
            return;
        }
        long second;
        try {
            // what clients wrote through the bridge, made durable while the gate is open; then the
            // second pause: after it a client's flush reaches only the new target, which need not
            // flush the backing device, so the bridge's writes must be durable before it
            backing.flush();
            second = System.nanoTime();
            unbridge(d, backing);
        } catch (IOException | RuntimeException e) {
            life.closeQuietly(d, t);
            d.lastError = "switch to " + entry.type() + " committed, but the backing device failed to flush: "
                    + e.getMessage();
            d.waitingFor = BUILD_FAILED;
            throw new IOException(d.name + ": " + d.lastError + "; the device waits; fix the cause and dev:reload it", e);
        }
        life.attach(d, entry, t);
        d.lastSwapPauseNanos = Math.max(firstPause, System.nanoTime() - second);
        LOG.info("device {}: served by its backing device while {} was built ({} ms)", d.name, entry.type(),
                (second - closed - firstPause) / 1_000_000);
    }

    /**
     * In place without a format (the old state adopted, or no {@code format=true}): the new target is
     * built over the released devices first, and its definition stored (the commit) only once the
     * build succeeded, so a build that fails on what it finds there (a readcache formatted with
     * another block size, a cache device holding what the new policy refuses without a format) is
     * undone: the old target reopened from the stored definition, which is still the old one.
     * <p>
     * <b>Why the failed build left the devices as the old target closed them.</b> Without a format
     * the three caches' opens refuse before their first write: readcache ({@code Opener.open}) reads
     * the superblock, checks it against the arguments and the origin, then only reads the metadata
     * ({@code Recovery.load}); writecache ({@code recovery.Recovery.open}) reads the superblock and
     * checks it, reads every metadata sector ({@code load}: a bad one is an error before anything is
     * written), and only then commits what recovery dropped — a commit of the writecache's own
     * crash-safe protocol, which any writecache open recovers as after a power cut; writeboost
     * ({@code CacheOpener.open}) checks the superblock and its records, then recovery reads headers
     * and flushes. Each formats on its own only a <em>blank</em> device (superblock all zeroes),
     * which a cache device just released by a cache target is not: all three keep their superblock
     * at offset 0.
     * <p>
     * <b>A crash between the build and the store</b> restarts with the old definition over what the
     * new target's open left: the old target was clean at the close (or its state is adopted, which
     * means the same policy over the same devices), the new one has served no request (the gate is
     * closed until after the store), and what its open may have written is its own policy's
     * recovery, which the old definition's open — the same policy, or, not adopting, a state with
     * every block on the backing device — reads as a restart would. So a crash at any point comes
     * back with a valid target: the old one until the store, the new one after it.
     */
    private void buildThenCommit(MappedDevice d, FactoryEntry oldEntry, DeviceDefinition oldDef, List<String> oldLowers,
            FactoryEntry entry, DeviceDefinition def, DeviceDefinition firstDef, List<String> newLowers,
            boolean adopted, long closed) throws IOException {
        Lifecycle life = core.lifecycle;
        try {
            hook.reached("closed");
        } catch (RuntimeException e) {
            reopen(d, oldEntry, oldDef, oldLowers);
            throw e;
        }
        Target t;
        try {
            t = life.build(d, entry, firstDef, newLowers);
        } catch (IOException | RuntimeException e) {
            throw undo(d, oldEntry, oldDef, oldLowers, entry, def, firstDef, adopted, e);
        }
        try {
            if (d.persistent) {
                core.store.save(d, firstDef);
            }
        } catch (IOException | RuntimeException e) {
            life.closeQuietly(d, t);
            reopen(d, oldEntry, oldDef, oldLowers);
            throw e;
        }
        d.definition = def;
        hook.reached("committed");
        life.attach(d, entry, t);
        d.lastSwapPauseNanos = System.nanoTime() - closed;
    }

    /**
     * The new target's build failed, nothing stored: the old target reopened over its devices and a
     * one-line refusal returned. Only if the old one cannot be reopened either is the switch
     * committed after all and the device left waiting for the new target, as before the undo.
     *
     * @return the failure to throw (an argument refusal of the factory is thrown here, as itself)
     */
    private IOException undo(MappedDevice d, FactoryEntry oldEntry, DeviceDefinition oldDef, List<String> oldLowers,
            FactoryEntry entry, DeviceDefinition def, DeviceDefinition firstDef, boolean adopted, Exception e) {
        String why = e.getMessage() == null ? e.toString() : e.getMessage();
        // a Ctrl-C that cut the build short must not cut the reopen short too (a file channel closes
        // on an interrupt); it is set again for the caller, which reports a cancel
        boolean interrupted = Thread.interrupted();
        String notReopened;
        try {
            notReopened = reopen(d, oldEntry, oldDef, oldLowers);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        if (notReopened == null) {
            String line = d.name + ": switch to " + entry.type() + " refused: " + why + "; " + d.name + " stays "
                    + oldDef.type() + " as it was";
            // info: the caller gets the line; nothing changed (and a warning from inside a command
            // reaches Gogo's redirected stderr in the in-process tests)
            LOG.info("device {}: switch to {} refused by its build ({}); the old {} target reopened", d.name,
                    entry.type(), why, oldDef.type());
            if (e instanceof InvalidArgumentException) {
                InvalidArgumentException r = new InvalidArgumentException(line);
                r.initCause(e);
                throw r;
            }
            return new IOException(line, e);
        }
        try {
            if (d.persistent) {
                core.store.save(d, firstDef);
            }
        } catch (IOException | RuntimeException s) {
            // the old definition stays stored; the device waits for it (reopen said why)
            e.addSuppressed(s);
            return new IOException(d.name + ": switch to " + entry.type() + " failed: " + why + "; " + d.lastError
                    + "; fix the cause and dev:reload " + d.name, e);
        }
        d.definition = def;
        return waiting(d, entry, why, adopted, e);
    }

    /** A build failed after the commit: the device waits for the new target (a restart or a dev:reload retries). */
    private static IOException waiting(MappedDevice d, FactoryEntry entry, String why, boolean adopted, Exception e) {
        d.lastError = "switch to " + entry.type() + " committed, but its build failed: " + why;
        d.waitingFor = BUILD_FAILED; // the type is there: its build is what failed (last_error says how)
        LOG.error("device {}: {}", d.name, d.lastError);
        // not adopted, the old target was clean: the backing device has every block
        return new IOException(d.name + ": " + d.lastError + "; the device waits (its data is on its "
                + (adopted ? "cache and backing devices" : "backing device") + "); fix the cause and dev:reload it", e);
    }

    /**
     * Takes the bridge out: gate closed, its requests finished (not interruptible: they end by
     * themselves), the backing device flushed; the device is left with no target, gate closed.
     */
    private void unbridge(MappedDevice d, BlockDevice backing) throws IOException {
        d.gate.close();
        core.lifecycle.awaitDrained(d);
        d.target = null;
        backing.flush();
    }

    /**
     * Whether nothing the new target finds on the released cache device can be a copy that goes
     * stale while the bridge writes to the backing device: the device holds another policy's format
     * (which the new one can only format), or the old cache — suspended, clean — holds no copy.
     */
    private static boolean holdsNothing(Target old, DeviceDefinition oldDef, DeviceDefinition def) {
        return !oldDef.type().equals(def.type()) || old instanceof CacheTarget c && c.cachedBlocks() == 0;
    }

    /** {@code format=true} among the first-build arguments: every cache factory takes it as "start empty". */
    private static boolean formats(Map<String, String> firstBuild) {
        return "true".equalsIgnoreCase(firstBuild.get(FORMAT));
    }

    private static final String FORMAT = "format";

    /** What a device whose build failed waits for ({@link Inspection#reason} adds {@code last_error}). */
    static final String BUILD_FAILED = "a successful build (see last_error)";

    private static String backingName(FactoryEntry entry, DeviceDefinition def) {
        return def.arguments().get(backingArgument(entry));
    }

    /** The backing device as the targets see it (its gated view). */
    private BlockDevice backingView(Plan p) {
        String name = p.def().arguments().get(backingArgument(p.entry()));
        MappedDevice b = core.graph.get(name);
        if (b == null) {
            throw DeviceGraph.unknownDevice(name);
        }
        return b.view;
    }

    /**
     * Before the commit of an in-place switch: the old target reopened over its intact devices.
     * Returns null, or why it could not be (the device then waits for it: last_error says so).
     */
    private String reopen(MappedDevice d, FactoryEntry oldEntry, DeviceDefinition oldDef, List<String> oldLowers) {
        FactoryEntry e = oldEntry != null && core.factories.registered(oldEntry) ? oldEntry
                : core.factories.best(oldDef.type());
        try {
            if (e == null) {
                throw new IOException("no factory for '" + oldDef.type() + "'");
            }
            core.lifecycle.attach(d, e, core.lifecycle.build(d, e, oldDef, oldLowers));
            return null;
        } catch (IOException | RuntimeException ex) {
            d.lastError = "switch failed and the old target could not be reopened: " + ex.getMessage();
            d.waitingFor = e == null ? "target type '" + oldDef.type() + "'" : BUILD_FAILED;
            LOG.error("device {}: {}", d.name, d.lastError);
            return ex.getMessage() == null ? ex.toString() : ex.getMessage();
        }
    }

    private static void requireClean(MappedDevice d, Target t) {
        if (t instanceof CacheTarget c && c.dirtyBlocks() != 0) {
            throw new InvalidArgumentException(d.name + " holds " + c.dirtyBlocks() + " dirty blocks the new target "
                    + "cannot adopt; write them back first (cache:switch does)");
        }
    }

    private void resume(MappedDevice d, Target old) {
        try {
            old.resume();
        } catch (IOException | RuntimeException r) {
            LOG.warn("device {}: resuming the old target failed: {}", d.name, r.getMessage());
        }
        d.gate.open();
    }

    private static boolean adopts(FactoryEntry entry, DeviceDefinition oldDef, Map<String, String> args) {
        try {
            return entry.factory().adopts(oldDef.type(), oldDef.arguments(), args);
        } catch (InvalidArgumentException e) {
            throw e; // the factory refuses the new arguments (one line, nothing changed yet)
        } catch (RuntimeException e) {
            return false;
        }
    }

    private static String backingArgument(FactoryEntry e) {
        try {
            return e.factory().backingArgument();
        } catch (RuntimeException ex) {
            return null;
        }
    }
}
