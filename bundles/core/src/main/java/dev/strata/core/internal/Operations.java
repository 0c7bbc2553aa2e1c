package dev.strata.core.internal;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.channels.ClosedByInterruptException;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.strata.api.Claim;
import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceTimeoutException;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;

/**
 * The user's operations on devices (create, remove, message, suspend, resume, reload, open), on
 * the caller's thread, each under the device's {@code op} lock. A mistake is refused with one
 * line before anything changes.
 */
final class Operations {
    private static final Logger LOG = LoggerFactory.getLogger(Operations.class);
    private final Core core;

    Operations(Core core) {
        this.core = core;
    }

    /**
     * Creates a device with a new identity; {@code persistent}: its definition is stored once the
     * target is built, else it is a transient device, gone after a restart.
     */
    MappedDevice create(String name, String type, Map<String, String> arguments, boolean persistent)
            throws IOException {
        return create(name, type, arguments, persistent, null);
    }

    /** As above; the build reports its progress to {@code progress} (null: nowhere). */
    MappedDevice create(String name, String type, Map<String, String> arguments, boolean persistent,
            dev.strata.api.DeviceManager.BuildProgress progress) throws IOException {
        DeviceDefinition def = new DeviceDefinition(DeviceDefinition.checkName(name), type,
                Objects.requireNonNull(arguments, "arguments"), UUID.randomUUID().toString(), Map.of());
        FactoryEntry entry = core.factories.require(type);
        List<String> lowers = FactoryRegistry.lowerDevices(entry, def.arguments());
        Map<String, Claim> claims = FactoryRegistry.claims(entry, def.arguments(), lowers);
        MappedDevice d = new MappedDevice(core::gateTimeoutNanos, def);
        d.persistent = persistent;
        d.buildProgress = progress;
        d.op.lock();
        try {
            synchronized (core.graph.lock) {
                checkRunning();
                if (core.graph.containsLocked(name)) {
                    throw new InvalidArgumentException("device '" + name
                            + "' already exists; choose another name or dev:remove it first");
                }
                for (String lower : lowers) {
                    core.graph.requireReadyLowerLocked(lower, name);
                }
                core.graph.checkClaimsLocked(name, claims);
                d.creating = true;
                d.lowers = lowers;
                d.claims = Map.copyOf(claims);
                core.graph.putLocked(d);
            }
            boolean ok = false;
            try {
                Target t;
                try {
                    t = core.lifecycle.build(d, entry, def, lowers);
                } catch (InterruptedIOException | ClosedByInterruptException e) {
                    // a build that looked at the interrupt itself (a writecache format stops at
                    // the next write): the same line as below, with what the target left behind
                    Thread.currentThread().interrupt();
                    InterruptedIOException n = new InterruptedIOException("device '" + name
                            + "' was not created: interrupted" + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")"));
                    n.initCause(e);
                    throw n;
                }
                if (Thread.interrupted()) {
                    // Ctrl-C during a long build (a large cache formatting) that did not look at
                    // the interrupt: the user is told "interrupted", so nothing may exist. Closed
                    // with the interrupt cleared (a file channel would refuse the close's flush),
                    // then the interrupt is set again for the caller.
                    core.lifecycle.closeQuietly(d, t);
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("device '" + name + "' was not created: interrupted");
                }
                try {
                    if (persistent) {
                        core.store.save(d, def);
                    }
                } catch (IOException e) {
                    core.lifecycle.closeQuietly(d, t);
                    throw e;
                }
                core.lifecycle.attach(d, entry, t);
                core.lifecycle.forgetFormat(d); // format=true is for this build, not every later start
                d.creating = false;
                ok = true;
            } finally {
                if (!ok) {
                    core.graph.remove(d);
                    d.gate.shut("device '" + name + "' was not created");
                }
            }
        } finally {
            d.buildProgress = null; // later builds (a reload, a restart) report to nobody
            d.op.unlock();
        }
        LOG.info("created {}{}", def.tableLine(), persistent ? "" : " (transient)");
        core.reconciler.scheduleWaiting();
        return d;
    }

    /**
     * Removes a device; refused while something uses it, and while its target holds dirty data
     * unless {@code force} (which interrupts calls using the target, too).
     *
     * @return what a forced removal stranded, or null
     */
    String remove(String name, boolean force) throws IOException {
        MappedDevice d = core.graph.require(name);
        lockOp(d);
        try {
            if (d.removed) {
                throw DeviceGraph.unknownDevice(name);
            }
            return removeLocked(d, true, force);
        } finally {
            d.op.unlock();
        }
    }

    /** Removes {@code d} (its {@code op} lock held); {@code deleteDefinition}: from the store too. */
    String removeLocked(MappedDevice d, boolean deleteDefinition, boolean force) throws IOException {
        synchronized (core.graph.lock) {
            List<String> holders = core.graph.holdersLocked(d);
            if (!holders.isEmpty()) {
                throw new InvalidArgumentException("device '" + d.name + "' is in use by " + String.join(", ", holders)
                        + "; remove or close those first");
            }
        }
        String stranded = d.target != null ? DirtyGuard.check(d, force, "removing")
                : DirtyGuard.checkWaiting(core, d, force, "removing");
        core.lifecycle.releaseHolds(d, force);
        synchronized (core.graph.lock) {
            if (!core.graph.holdersLocked(d).isEmpty()) {
                d.holds.open();
                throw new InvalidArgumentException("device '" + d.name + "' is in use by "
                        + String.join(", ", core.graph.holdersLocked(d)) + "; remove or close those first");
            }
            d.removed = true;
        }
        if (deleteDefinition && d.persistent) {
            try {
                core.store.delete(d);
            } catch (IOException e) {
                synchronized (core.graph.lock) {
                    d.removed = false;
                }
                d.holds.open();
                throw e;
            }
        }
        d.gate.shut("device '" + d.name + "' was removed");
        core.lifecycle.awaitDrained(d);
        Target t = d.target;
        d.target = null;
        d.factory = null;
        core.graph.remove(d);
        LOG.info("removed device {}", d.name);
        core.reconciler.scheduleWaiting(); // a device waiting for a claim d held may come up now
        if (t != null) {
            if (stranded == null) {
                StaleCopies.drop(d, t, false); // before close: afterwards the copies would stay valid
            }
            try {
                t.close();
            } catch (IOException | RuntimeException e) {
                throw new IOException("device '" + d.name + "' was removed but its target did not close cleanly: "
                        + e.getMessage(), e);
            }
        }
        return stranded;
    }

    /**
     * Passes a tunable or an action to the target. Refused on a device the user suspended (its
     * target's background work is stopped; a message could restart it or wait for it). With
     * {@code persist}, a <em>setting</em> — a key the target reports in its {@code status()}
     * afterwards — is kept in the definition (stored unless the device is transient) and
     * applied at every build ({@link Lifecycle#build}); an action ({@code writeback=all}) is never kept.
     *
     * @return a note for the user: the target's ({@link Target#messageWithNote}) and whether a
     *         persisted message was not kept; or null
     */
    String message(String name, String key, String value, boolean persist) throws IOException {
        MappedDevice d = core.graph.require(name);
        lockOp(d);
        try {
            if (d.userSuspended) {
                throw new InvalidArgumentException("device '" + name + "' is suspended; dev:resume " + name
                        + " first, then send " + key + "=" + value);
            }
            Target t = requireTarget(d);
            String note = t.messageWithNote(key, value);
            if (!persist) {
                return note;
            }
            Map<String, String> status;
            try {
                status = t.status();
            } catch (RuntimeException e) {
                status = Map.of();
            }
            if (status == null || !status.containsKey(key)) {
                String action = key + " is an action, not a setting: done once, not kept";
                return note == null ? action : note + "; " + action;
            }
            DeviceDefinition def = d.definition.withTunable(key, value);
            if (d.persistent) {
                core.store.save(d, def);
            }
            d.definition = def;
            return note;
        } finally {
            d.op.unlock();
        }
    }

    void suspend(String name) throws IOException {
        MappedDevice d = core.graph.require(name);
        lockOp(d);
        try {
            if (d.userSuspended) {
                throw new InvalidArgumentException("device '" + name + "' is already suspended; dev:resume " + name);
            }
            Target t = d.target;
            if (t == null) {
                d.userSuspended = true; // the gate is closed already; it stays closed when the target returns
                return;
            }
            core.lifecycle.quiesce(d);
            core.lifecycle.suspendTarget(d, t);
            d.userSuspended = true;
        } finally {
            d.op.unlock();
        }
        LOG.info("suspended device {}", name);
    }

    void resume(String name) throws IOException {
        MappedDevice d = core.graph.require(name);
        lockOp(d);
        try {
            if (!d.userSuspended) {
                throw new InvalidArgumentException("device '" + name + "' is not suspended");
            }
            Target t = d.target;
            if (t == null) {
                d.userSuspended = false;
                core.reconciler.schedule(d);
                return;
            }
            try {
                t.resume();
            } catch (IOException | RuntimeException e) {
                throw new IOException("device '" + name + "': the target could not resume (" + e.getMessage()
                        + "); the device stays suspended", e);
            }
            d.userSuspended = false;
            d.gate.open();
            if (d.lastError != null && d.lastError.startsWith("the target could not suspend")) {
                d.lastError = null;
            }
        } finally {
            d.op.unlock();
        }
        LOG.info("resumed device {}", name);
    }

    /** @return what a forced reload stranded, or null */
    String reload(String name, String type, Map<String, String> arguments, boolean force) throws IOException {
        MappedDevice d = core.graph.require(name);
        DeviceDefinition def = new DeviceDefinition(name, type, Objects.requireNonNull(arguments, "arguments"));
        core.factories.require(type);
        lockOp(d);
        try {
            if (d.removed) {
                throw DeviceGraph.unknownDevice(name);
            }
            return core.reloader.reloadLocked(d, def, true, force);
        } finally {
            d.op.unlock();
        }
    }

    <T, R> R withTarget(String name, Class<T> type, dev.strata.api.DeviceManager.TargetCall<? super T, R> call)
            throws IOException, InterruptedException {
        MappedDevice d = core.graph.require(name);
        Target t;
        lockOp(d); // no lifecycle change while the call is registered
        try {
            t = requireTarget(d);
            if (!type.isInstance(t)) {
                throw new InvalidArgumentException("device '" + name + "' is a " + d.definition.type()
                        + " device, not a " + (type == dev.strata.api.CacheTarget.class ? "cache" : type.getSimpleName()));
            }
            if (!d.holds.enter()) {
                throw new InvalidArgumentException("device '" + name + "' is being closed; try again");
            }
        } finally {
            d.op.unlock();
        }
        try {
            return call.call(type.cast(t));
        } finally {
            d.holds.exit();
        }
    }

    DeviceHandle open(String name, String holder) {
        Objects.requireNonNull(holder, "holder");
        synchronized (core.graph.lock) {
            MappedDevice d = core.graph.getLocked(name);
            if (d == null || d.removed || d.creating) {
                throw DeviceGraph.unknownDevice(name);
            }
            String exclusive = core.graph.exclusiveHolderLocked(d);
            if (exclusive != null) {
                throw new InvalidArgumentException(name + " is held exclusively by " + exclusive + "; "
                        + holder + " cannot use it directly (use the device stacked on it)");
            }
            Handle h = new Handle(this::release, d, holder);
            d.handles.add(h);
            return h;
        }
    }

    void release(MappedDevice d, Handle h) {
        synchronized (core.graph.lock) {
            d.handles.remove(h);
        }
    }

    private static Target requireTarget(MappedDevice d) {
        Target t = d.target;
        if (t == null) {
            throw new InvalidArgumentException("device '" + d.name + "' has no target right now (waiting for "
                    + d.waitingFor + "); try again when it is active");
        }
        return t;
    }

    void lockOp(MappedDevice d) throws IOException {
        try {
            if (!d.op.tryLock(core.gateTimeoutNanos(), TimeUnit.NANOSECONDS)) {
                throw new DeviceTimeoutException(d.name, -1, "another operation on the device is still running; try again");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("device '" + d.name + "': interrupted while waiting for another operation on it; "
                    + "nothing was changed");
        }
    }

    private void checkRunning() {
        if (core.stopped) {
            throw new InvalidArgumentException("the device manager is stopping");
        }
    }
}
