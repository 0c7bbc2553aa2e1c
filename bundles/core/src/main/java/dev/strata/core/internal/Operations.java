package dev.strata.core.internal;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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

    MappedDevice create(String name, String type, Map<String, String> arguments) throws IOException {
        DeviceDefinition def = new DeviceDefinition(DeviceDefinition.checkName(name), type,
                Objects.requireNonNull(arguments, "arguments"));
        FactoryEntry entry = core.factories.require(type);
        List<String> lowers = FactoryRegistry.lowerDevices(entry, def.arguments());
        MappedDevice d = new MappedDevice(core::gateTimeoutNanos, def);
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
                d.creating = true;
                d.lowers = lowers;
                core.graph.putLocked(d);
            }
            boolean ok = false;
            try {
                Target t = core.lifecycle.build(d, entry, def.arguments(), lowers);
                try {
                    core.store.save(d, def);
                } catch (IOException e) {
                    core.lifecycle.closeQuietly(d, t);
                    throw e;
                }
                core.lifecycle.attach(d, entry, t);
                d.creating = false;
                ok = true;
            } finally {
                if (!ok) {
                    core.graph.remove(d);
                    d.gate.shut("device '" + name + "' was not created");
                }
            }
        } finally {
            d.op.unlock();
        }
        LOG.info("created {}", def.tableLine());
        core.reconciler.scheduleWaiting();
        return d;
    }

    void remove(String name) throws IOException {
        MappedDevice d = core.graph.require(name);
        lockOp(d);
        try {
            if (d.removed) {
                throw DeviceGraph.unknownDevice(name);
            }
            removeLocked(d, true);
        } finally {
            d.op.unlock();
        }
    }

    /** Removes {@code d} (its {@code op} lock held); {@code deleteDefinition}: from the store too. */
    void removeLocked(MappedDevice d, boolean deleteDefinition) throws IOException {
        synchronized (core.graph.lock) {
            List<String> holders = core.graph.holdersLocked(d);
            if (!holders.isEmpty()) {
                throw new InvalidArgumentException("device '" + d.name + "' is in use by " + String.join(", ", holders)
                        + "; remove or close those first");
            }
            d.removed = true;
        }
        if (deleteDefinition) {
            try {
                core.store.delete(d);
            } catch (IOException e) {
                synchronized (core.graph.lock) {
                    d.removed = false;
                }
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
        if (t != null) {
            try {
                t.close();
            } catch (IOException | RuntimeException e) {
                throw new IOException("device '" + d.name + "' was removed but its target did not close cleanly: "
                        + e.getMessage(), e);
            }
        }
    }

    void message(String name, String key, String value) throws IOException {
        MappedDevice d = core.graph.require(name);
        lockOp(d);
        try {
            requireTarget(d).message(key, value);
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
            try {
                t.suspend();
            } catch (IOException | RuntimeException e) {
                d.gate.open();
                throw new IOException("device '" + name + "': the target could not suspend (" + e.getMessage()
                        + "); the device keeps running", e);
            }
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
        } finally {
            d.op.unlock();
        }
        LOG.info("resumed device {}", name);
    }

    MappedDevice reload(String name, String type, Map<String, String> arguments) throws IOException {
        MappedDevice d = core.graph.require(name);
        DeviceDefinition def = new DeviceDefinition(name, type, Objects.requireNonNull(arguments, "arguments"));
        core.factories.require(type);
        lockOp(d);
        try {
            if (d.removed) {
                throw DeviceGraph.unknownDevice(name);
            }
            core.reloader.reloadLocked(d, def, true);
        } finally {
            d.op.unlock();
        }
        return d;
    }

    <T, R> R withTarget(String name, Class<T> type, dev.strata.api.DeviceManager.TargetCall<? super T, R> call)
            throws IOException, InterruptedException {
        // Interim: the target is read once; holding it against close comes next.
        MappedDevice d = core.graph.require(name);
        Target t = requireTarget(d);
        if (!type.isInstance(t)) {
            throw new InvalidArgumentException("device '" + name + "' is a " + d.definition.type()
                    + " device, not a " + (type == dev.strata.api.CacheTarget.class ? "cache" : type.getSimpleName()));
        }
        return call.call(type.cast(t));
    }

    DeviceHandle open(String name, String holder) {
        Objects.requireNonNull(holder, "holder");
        synchronized (core.graph.lock) {
            MappedDevice d = core.graph.getLocked(name);
            if (d == null || d.removed || d.creating) {
                throw DeviceGraph.unknownDevice(name);
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

    private void lockOp(MappedDevice d) throws IOException {
        try {
            if (!d.op.tryLock(core.gateTimeoutNanos(), TimeUnit.NANOSECONDS)) {
                throw new DeviceTimeoutException(d.name, -1, "another operation on the device is still running; try again");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted");
        }
    }

    private void checkRunning() {
        if (core.stopped) {
            throw new InvalidArgumentException("the device manager is stopping");
        }
    }
}
