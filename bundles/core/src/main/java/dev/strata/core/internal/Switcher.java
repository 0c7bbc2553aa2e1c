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
 * <em>closed</em> (its cache device released, everything durable), the new definition stored (the
 * commit), and only then the new target built (formatting the released device if asked) and
 * installed. A failure before the commit reopens the old target from its definition. When the new
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
 * yet). After it the new target is built at start — with the first-build arguments (a format of the
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
     * commit: a throw reopens the old one), {@code committed} (after the commit: must not throw).
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
            // committed: the stored definition is the new one; the device waits for it (a restart or
            // a dev:reload retries). The old target was clean, so the backing device has every block.
            d.lastError = "switch to " + entry.type() + " committed, but its build failed: " + e.getMessage();
            d.waitingFor = BUILD_FAILED; // the type is there: its build is what failed (last_error says how)
            LOG.error("device {}: {}", d.name, d.lastError);
            throw new IOException(d.name + ": " + d.lastError + "; the device waits (its data is on its backing "
                    + "device); fix the cause and dev:reload it", e);
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

    /** Before the commit of an in-place switch: the old target reopened over its intact devices. */
    private void reopen(MappedDevice d, FactoryEntry oldEntry, DeviceDefinition oldDef, List<String> oldLowers) {
        FactoryEntry e = oldEntry != null && core.factories.registered(oldEntry) ? oldEntry
                : core.factories.best(oldDef.type());
        try {
            if (e == null) {
                throw new IOException("no factory for '" + oldDef.type() + "'");
            }
            core.lifecycle.attach(d, e, core.lifecycle.build(d, e, oldDef, oldLowers));
        } catch (IOException | RuntimeException ex) {
            d.lastError = "switch failed and the old target could not be reopened: " + ex.getMessage();
            d.waitingFor = e == null ? "target type '" + oldDef.type() + "'" : BUILD_FAILED;
            LOG.error("device {}: {}", d.name, d.lastError);
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
