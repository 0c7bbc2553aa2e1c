package dev.strata.core.internal;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;

/**
 * Brings devices in line with the factories: closes the targets of a factory that went away
 * (top-down), builds waiting devices whose factory and lower devices are there (bottom-up, by
 * construction: a device is built only when every lower device has a target), and closes
 * everything when the manager stops. Reconciles are idempotent and run on the manager's
 * background threads, so events may arrive in any order.
 */
final class Reconciler {
    private static final Logger LOG = LoggerFactory.getLogger(Reconciler.class);
    private final Core core;
    private final AtomicBoolean stopOnce = new AtomicBoolean();

    Reconciler(Core core) {
        this.core = core;
    }

    /** A factory appeared: waiting devices of its type are built (in the background). */
    void factoryAdded(FactoryEntry entry) {
        core.factories.add(entry);
        LOG.info("target type '{}' available from {} {}", entry.type(), entry.bundle(), entry.version());
        scheduleWaiting();
    }

    /**
     * A factory went away: every device whose target it built is suspended (gate closed,
     * in-flight I/O drained), its target closed and left waiting for a factory of the same type.
     * Devices are closed top-down (a device above first, so its I/O can still drain through the
     * ones below). Waits at most {@code detach_wait_seconds} for that, then lets it finish in the
     * background.
     */
    void factoryRemoved(FactoryEntry entry) {
        List<MappedDevice> affected = new ArrayList<>();
        synchronized (core.graph.lock) {
            if (!core.factories.remove(entry)) {
                return;
            }
            for (MappedDevice d : core.graph.all()) {
                if (d.factory == entry) {
                    affected.add(d);
                }
            }
            core.graph.topDownLocked(affected);
        }
        LOG.info("target type '{}' from {} {} went away; {} device(s) use it", entry.type(), entry.bundle(),
                entry.version(), affected.size());
        if (affected.isEmpty() || core.stopped) {
            return;
        }
        Future<?> done = core.tasks.submit(() -> {
            for (MappedDevice d : affected) {
                core.lifecycle.detach(d, entry);
            }
            scheduleWaiting();
        });
        try {
            done.get(core.settings().detachWaitNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            LOG.warn("devices using '{}' are still being closed; continuing in the background", entry.type());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            LOG.error("closing devices of '{}' failed", entry.type(), e.getCause());
        }
    }

    void scheduleWaiting() {
        core.graph.waiting().forEach(this::schedule);
    }

    void schedule(MappedDevice d) {
        if (!core.stopped && d.reconcilePending.compareAndSet(false, true)) {
            core.tasks.submit(() -> {
                d.reconcilePending.set(false);
                reconcile(d);
            });
        }
    }

    /** Builds {@code d} if it waits and all it needs is there; detaches it if its factory is gone. */
    void reconcile(MappedDevice d) throws InterruptedException {
        boolean attached = false;
        d.op.lockInterruptibly();
        try {
            if (d.removed || d.creating || core.stopped) {
                return;
            }
            FactoryEntry current = d.factory;
            if (d.target != null && current != null && !core.factories.registered(current)) {
                core.lifecycle.detach(d, current);
            }
            if (d.target != null) {
                return;
            }
            attached = build(d);
        } finally {
            d.op.unlock();
        }
        if (attached) {
            scheduleWaiting();
        }
    }

    private boolean build(MappedDevice d) {
        DeviceDefinition def = d.definition;
        FactoryEntry entry = core.factories.best(def.type());
        if (entry == null) {
            d.waitingFor = "target type '" + def.type() + "'";
            return false;
        }
        List<String> lowers;
        try {
            lowers = FactoryRegistry.lowerDevices(entry, def.arguments());
        } catch (InvalidArgumentException e) {
            d.lastError = e.getMessage();
            d.waitingFor = "valid arguments";
            LOG.error("device {}: {}", d.name, e.getMessage());
            return false;
        }
        java.util.Map<String, dev.strata.api.Claim> claims;
        try {
            claims = FactoryRegistry.claims(entry, def.arguments(), lowers);
        } catch (InvalidArgumentException e) {
            d.lastError = e.getMessage();
            d.waitingFor = "valid arguments";
            return false;
        }
        synchronized (core.graph.lock) {
            d.lowers = lowers; // record the graph even while waiting
            for (String lower : lowers) {
                MappedDevice l = core.graph.getLocked(lower);
                if (l == null || !l.ready() || lower.equals(d.name)) {
                    d.waitingFor = "device '" + lower + "'";
                    return false;
                }
            }
            try {
                core.graph.checkClaimsLocked(d.name, claims);
            } catch (InvalidArgumentException e) {
                if (!e.getMessage().equals(d.lastError)) {
                    LOG.error("device {} cannot be built: {}", d.name, e.getMessage());
                }
                d.lastError = e.getMessage();
                d.waitingFor = "its lower devices (see last_error)";
                return false;
            }
            d.claims = java.util.Map.copyOf(claims);
        }
        String previousError = d.lastError;
        try {
            d.lastError = null;
            Target t = core.lifecycle.build(d, entry, def, lowers);
            core.lifecycle.attach(d, entry, t);
            // a deployed .cfg's arg.format=true formats once: its first build, not every later
            // start whose superblock fails to check out (strata-tool repair keeps dirty blocks)
            core.lifecycle.forgetFormat(d);
            core.replacer.built(d); // an interrupted cache:replace may have left a copy to blank on it
            d.buildRetry.clear();
            LOG.info("device {} is up: {}", d.name, def.tableLine());
            return true;
        } catch (IOException e) {
            d.lastError = e.getMessage();
            d.waitingFor = "a successful build (see last_error)";
            d.buildRetry.failed(System.nanoTime());
            // tried again by itself (BuildRetry): the same failure again is not news
            if (java.util.Objects.equals(previousError, e.getMessage())) {
                LOG.debug("device {} could not be built again: {}", d.name, e.getMessage());
            } else {
                LOG.error("device {} could not be built (tried again by itself): {}", d.name, e.getMessage());
            }
        } catch (RuntimeException e) {
            d.lastError = e.getMessage();
            d.waitingFor = "a successful build (see last_error)";
            d.buildRetry.clear();
            LOG.error("device {} could not be built: {}", d.name, e.getMessage());
        } catch (LinkageError e) {
            // Bundle.update() registers the new revision's factory, and the refresh that
            // follows disposes of its class loader while a build may be loading classes
            // lazily. The refreshed factory registers again and the device is rebuilt then.
            // not an error the user must act on, and no class name in dev:list: WHY says it all;
            // the log keeps the linkage error
            d.lastError = null;
            d.waitingFor = "target type '" + def.type() + "' (its bundle is being refreshed)";
            LOG.warn("device {}: the '{}' bundle was refreshed during the build ({}); waiting for the refreshed factory",
                    d.name, def.type(), e.toString());
        }
        return false;
    }

    /** Whether {@link #stop} ran (or runs). */
    boolean stopping() {
        return stopOnce.get();
    }

    /**
     * Stops the manager: background tasks end, then every device is closed top-down (gate shut,
     * in-flight I/O drained, target closed). Definitions stay stored.
     */
    void stop() {
        if (!stopOnce.compareAndSet(false, true)) {
            return;
        }
        core.stopped = true;
        core.tasks.shutdown(core.gateTimeoutNanos());
        List<MappedDevice> all = core.graph.topDown();
        // a device without a target will not get one any more: requests waiting at its gate
        // (also those of the devices above, closing now) fail at once instead of at the deadline
        for (MappedDevice d : all) {
            if (d.target == null) {
                d.gate.shut("the device manager stopped");
            }
        }
        for (MappedDevice d : all) {
            boolean locked = false;
            try {
                locked = d.op.tryLock(core.gateTimeoutNanos(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            try {
                // close the gate and drain first, so devices above could finish through it
                d.gate.close();
                core.lifecycle.awaitDrained(d);
                d.gate.shut("the device manager stopped");
                core.lifecycle.releaseHolds(d, true);
                Target t = d.target;
                d.target = null;
                if (t != null) {
                    core.lifecycle.closeQuietly(d, t);
                }
            } finally {
                if (locked) {
                    d.op.unlock();
                }
            }
        }
        core.graph.clear();
        LOG.info("device manager stopped");
    }
}
