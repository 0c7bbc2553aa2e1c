package dev.strata.core.internal;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.strata.api.Claim;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;

/**
 * Puts a target in front of a live device under the device's own name
 * ({@link dev.strata.api.DeviceManager#attach}, {@code cache:attach}).
 *
 * <h2>Order</h2>
 * <ol>
 * <li>Validate everything (nothing paused, nothing stored for a mistake).</li>
 * <li>The device's current target <em>moves</em> to a new device {@code L}: the same object, so
 * nothing is closed, reopened or paused, and every acknowledged write stays where it is. While the
 * attach runs, both the device and {@code L} reach that target, each through its own gate.</li>
 * <li>{@code L}'s definition (the device's old type, arguments and tunables, a new identity) is
 * stored <em>staged</em> ({@code staged.for=DEV}).</li>
 * <li>The new target is built over {@code L} while the device keeps serving I/O.</li>
 * <li>Pause: the device's gate closes and drains; the old target is flushed (a client's flush
 * after the swap reaches only the new target, so writes acknowledged before it must be durable
 * already); the device's new definition is stored (the <b>commit</b>); the new target is installed; the gate opens. The commit is inside the pause so
 * that no write reaches the new target (a write cache would hold it dirty) before a restart
 * would rebuild that target.</li>
 * <li>{@code L}'s definition is stored again without the mark.</li>
 * </ol>
 *
 * <h2>Crash at any point</h2>
 * At start ({@link #recover}), before anything is built: a staged definition whose upper
 * device's stored definition still has the staged one's type and arguments (the attach did not
 * commit) is deleted — the device comes back as it was; otherwise (committed) the mark is
 * dropped — the new stack comes back. Both halves never run at once on the same storage.
 * <p>
 * Runs under the device's {@code op} lock. The new device {@code L} is invisible (creating) until
 * the end, so nothing else can reach it; its {@code op} lock is held too, which cannot deadlock
 * because no other thread can find {@code L} before it is released.
 */
final class Attacher {
    private static final Logger LOG = LoggerFactory.getLogger(Attacher.class);
    private final Core core;
    /**
     * A hook for tests, called with the phase reached: {@code staged}, {@code built} (both before the
     * commit: a throw there takes the rollback path), {@code committed} (after it: must not throw).
     */
    volatile PhaseHook hook = phase -> { };

    /** See {@link #hook}. */
    interface PhaseHook {
        void reached(String phase) throws IOException;
    }

    Attacher(Core core) {
        this.core = core;
    }

    /** Attaches; returns the name of the new lower device. */
    String attach(String name, String type, Map<String, String> arguments, String lowerName) throws IOException {
        Objects.requireNonNull(arguments, "arguments");
        MappedDevice d = core.graph.require(name);
        FactoryEntry entry = core.factories.require(type);
        String key = backingArgument(entry);
        if (key == null) {
            throw new InvalidArgumentException("a '" + type + "' target cannot be attached in front of a device "
                    + "(it names no backing device); use dev:create or dev:reload");
        }
        if (arguments.containsKey(key)) {
            throw new InvalidArgumentException("leave out " + key + "=: attach sets it to the device that takes over "
                    + name + "'s current target");
        }
        core.operations.lockOp(d);
        try {
            String before = d.lastError;
            String report;
            try {
                report = attachLocked(d, entry, key, arguments, lowerName);
            } catch (InvalidArgumentException e) {
                throw withoutAllowed(e, key);
            }
            d.clearErrorNotedBefore(before);
            return report;
        } finally {
            d.op.unlock();
        }
    }

    private String attachLocked(MappedDevice d, FactoryEntry entry, String key, Map<String, String> arguments,
            String lowerName) throws IOException {
        if (d.removed) {
            throw DeviceGraph.unknownDevice(d.name);
        }
        if (d.userSuspended) {
            throw new InvalidArgumentException("device '" + d.name + "' is suspended; dev:resume " + d.name
                    + " first, then attach");
        }
        Target old = d.target;
        if (old == null) {
            throw new InvalidArgumentException("device '" + d.name + "' has no target right now (waiting for "
                    + d.waitingFor + "); attach when it is active");
        }
        DeviceDefinition oldDef = d.definition;
        String lower = lowerName != null ? DeviceDefinition.checkName(lowerName) : defaultLowerName(d);
        Map<String, String> args = new LinkedHashMap<>(arguments);
        args.put(key, lower);
        DeviceDefinition def = new DeviceDefinition(d.name, entry.type(), args, oldDef.id(), Map.of());
        List<String> newLowers = FactoryRegistry.lowerDevices(entry, args);
        Map<String, Claim> newClaims = FactoryRegistry.claims(entry, args, newLowers);
        if (!newLowers.contains(lower)) {
            throw new InvalidArgumentException(entry.type() + ": its " + key + "= argument names no lower device; "
                    + "it cannot be attached");
        }
        core.lifecycle.check(entry, def); // before anything is staged (the build is before the commit anyway)
        DeviceDefinition lowerDef = new DeviceDefinition(lower, oldDef.type(), oldDef.arguments(),
                UUID.randomUUID().toString(), oldDef.tunables()).lowerOf(d.name);
        MappedDevice l = new MappedDevice(core::gateTimeoutNanos, lowerDef);
        l.persistent = d.persistent;
        List<String> oldLowers = d.lowers;
        Map<String, Claim> oldClaims = d.claims;
        l.op.lock();
        try {
            synchronized (core.graph.lock) {
                if (core.stopped) {
                    throw new InvalidArgumentException("the device manager is stopping");
                }
                if (core.graph.containsLocked(lower)) {
                    throw new InvalidArgumentException("device '" + lower + "' already exists; name the new lower "
                            + "device with --lower NAME");
                }
                Map<String, Claim> others = new LinkedHashMap<>(newClaims);
                others.remove(lower);
                for (String n : others.keySet()) {
                    core.graph.requireReadyLowerLocked(n, d.name);
                    if (n.equals(d.name) || core.graph.dependsOnLocked(n, d.name)) {
                        throw new InvalidArgumentException("device '" + n + "' is stacked on '" + d.name
                                + "'; a device cannot be stacked on itself");
                    }
                    if (oldLowers.contains(n)) {
                        throw new InvalidArgumentException("device '" + n + "' is already under " + d.name + " ("
                                + DeviceGraph.role(d, n) + "); choose another device");
                    }
                }
                core.graph.checkClaimsLocked(d.name, others);
                // the move: L takes the target, its lower devices and claims; the device holds both
                // sets until the swap (neither can be removed meanwhile)
                l.creating = true;
                l.target = old;
                l.factory = d.factory;
                l.size = d.size;
                l.blockSize = d.blockSize;
                l.lowers = oldLowers;
                l.claims = oldClaims;
                core.graph.putLocked(l);
                d.lowers = DeviceGraph.union(oldLowers, newLowers);
                d.claims = DeviceGraph.strongest(oldClaims, newClaims);
            }
            l.gate.open();
            l.holds.open();
            swap(d, l, entry, def, newLowers, newClaims, oldLowers, oldClaims, lowerDef);
            l.creating = false;
        } finally {
            l.op.unlock();
        }
        if (l.persistent) {
            try {
                core.store.save(l, lowerDef);
            } catch (IOException e) {
                // committed already: the next start drops the mark itself (see recover)
                LOG.warn("device {}: could not clear the staged mark of {}: {}", d.name, lower, e.getMessage());
            }
        }
        remark(d.name, lower, oldLowers);
        core.lifecycle.forgetFormat(d);
        LOG.info("attached {} in front of {} (now {}; pause {} µs)", entry.type(), d.name, lowerDef.tableLine(),
                d.lastSwapPauseNanos / 1000);
        core.reconciler.scheduleWaiting();
        return lower;
    }

    private void swap(MappedDevice d, MappedDevice l, FactoryEntry entry, DeviceDefinition def,
            List<String> newLowers, Map<String, Claim> newClaims, List<String> oldLowers,
            Map<String, Claim> oldClaims, DeviceDefinition lowerDef) throws IOException {
        Lifecycle life = core.lifecycle;
        boolean committed = false;
        boolean stored = false;
        Target t = null;
        try {
            if (l.persistent) {
                core.store.save(l, lowerDef.staged(d.name));
                stored = true;
            }
            hook.reached("staged");
            t = life.build(d, entry, def, newLowers);
            hook.reached("built");
            // most of the old target's volatile data is made durable while I/O still runs, so the
            // flush inside the pause (below) has little left to do
            d.target.flush();
            long closed = System.nanoTime();
            life.quiesce(d);
            try {
                // writes that completed through the old target may still be volatile in it; a flush
                // after the swap goes to the new target, which knows nothing of them — so they are
                // made durable now, while nothing can complete a new one
                d.target.flush();
                if (d.persistent) {
                    core.store.save(d, def);
                }
            } catch (IOException | RuntimeException e) {
                d.gate.open();
                throw e;
            }
            committed = true;
            d.definition = def;
            synchronized (core.graph.lock) {
                d.lowers = newLowers;
                d.claims = Map.copyOf(newClaims);
            }
            life.attach(d, entry, t);
            d.lastSwapPauseNanos = System.nanoTime() - closed;
            hook.reached("committed");
        } finally {
            if (!committed) {
                rollback(d, l, t, stored, oldLowers, oldClaims);
            }
        }
    }

    /** Before the commit: the device never stopped using its target; forget L and the new target. */
    private void rollback(MappedDevice d, MappedDevice l, Target t, boolean stored, List<String> oldLowers,
            Map<String, Claim> oldClaims) {
        if (t != null) {
            core.lifecycle.closeQuietly(d, t);
        }
        l.gate.shut("device '" + l.name + "' was not created");
        synchronized (core.graph.lock) {
            l.target = null;
            l.factory = null;
            d.lowers = oldLowers;
            d.claims = oldClaims;
        }
        core.graph.remove(l);
        if (stored) {
            try {
                core.store.delete(l);
            } catch (IOException e) {
                LOG.warn("device {}: could not delete the staged definition of {} ({}); the next start removes it",
                        d.name, l.name, e.getMessage());
            }
        }
    }

    /**
     * The devices an earlier attach made for the device ({@code lower.of=DEV}) now sit under the new
     * lower device, which took over the device's target: their mark follows it, so that a
     * {@code cache:detach} of that middle layer collapses onto them too. A crash before this store
     * leaves the old mark: such a detach then maps the middle layer {@code linear} over them instead.
     */
    private void remark(String device, String lower, List<String> oldLowers) {
        for (String n : oldLowers) {
            MappedDevice m = core.graph.get(n);
            if (m == null || !device.equals(m.definition.lowerOf())) {
                continue;
            }
            m.definition = m.definition.lowerOf(lower);
            if (m.persistent) {
                try {
                    core.store.save(m, m.definition);
                } catch (IOException e) {
                    LOG.warn("device {}: could not store it as the lower device of {}: {}", n, lower, e.getMessage());
                }
            }
        }
    }

    /** {@code NAME.OLDTYPE}, or with a number if that is taken. */
    private String defaultLowerName(MappedDevice d) {
        String base = d.name + "." + d.definition.type();
        String n = base;
        for (int i = 2; core.graph.get(n) != null; i++) {
            n = base + i;
        }
        if (n.length() > 64) {
            throw new InvalidArgumentException("the default lower device name '" + n + "' is too long; name it with "
                    + "--lower NAME");
        }
        return DeviceDefinition.checkName(n);
    }

    /**
     * The factory's "unknown argument …; allowed: a, b, …" refusal ({@link dev.strata.api.TargetArguments#of})
     * without {@code key} in the list: attach sets the backing argument itself and refuses it when
     * given, so offering it would send the user in a circle.
     */
    static InvalidArgumentException withoutAllowed(InvalidArgumentException e, String key) {
        String m = e.getMessage();
        int at = m == null || key == null ? -1 : m.indexOf("; allowed: ");
        if (at < 0) {
            return e;
        }
        int from = at + "; allowed: ".length();
        int end = m.indexOf(';', from);
        String list = end < 0 ? m.substring(from) : m.substring(from, end);
        java.util.List<String> keys = new java.util.ArrayList<>(java.util.Arrays.asList(list.split(", ")));
        if (!keys.remove(key)) {
            return e;
        }
        InvalidArgumentException out = new InvalidArgumentException(m.substring(0, from) + String.join(", ", keys)
                + (end < 0 ? "" : m.substring(end)));
        out.setStackTrace(e.getStackTrace());
        return out;
    }

    private static String backingArgument(FactoryEntry e) {
        try {
            return e.factory().backingArgument();
        } catch (RuntimeException ex) {
            return null;
        }
    }

    /**
     * At start, before any definition is applied: completes or rolls back every attach, and every
     * collapse ({@link Collapser}), a crash interrupted (see the class comment). Never throws; what it cannot resolve it logs, and the
     * staged definition is then ignored (never built).
     */
    static void recover(DefinitionStore store) {
        try {
            Map<String, DeviceDefinition> byName = new LinkedHashMap<>();
            List<DeviceDefinition> staged = new ArrayList<>();
            for (String k : store.keys()) {
                Optional<DeviceDefinition> def = store.load(k);
                if (def.isEmpty()) {
                    continue;
                }
                byName.put(def.get().name(), def.get());
                if (def.get().stagedFor() != null && !Replacer.JOURNAL_TYPE.equals(def.get().type())) {
                    staged.add(def.get());
                }
            }
            for (DeviceDefinition s : staged) {
                DeviceDefinition upper = byName.get(s.stagedFor());
                // committed: the upper device's stored definition is the new one — it names the
                // staged device, and it is no longer the old table the staged one copied
                boolean committed = upper != null && upper.arguments().containsValue(s.name())
                        && !(upper.type().equals(s.type()) && upper.arguments().equals(s.arguments()));
                if (committed) {
                    store.save(s.staged(null));
                    LOG.info("device {}: an interrupted attach (after its commit) or detach (before it) ends as the stack "
                            + "({} is its lower device)",
                            s.stagedFor(), s.name());
                } else {
                    store.delete(s.name());
                    LOG.info("device {}: an interrupted attach (before its commit) or detach (after it) ends without {}",
                            s.stagedFor(), s.name());
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.error("could not resolve interrupted attaches: {}", e.getMessage(), e);
        }
    }
}
