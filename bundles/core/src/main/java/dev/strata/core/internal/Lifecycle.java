package dev.strata.core.internal;

import java.io.IOException;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceTimeoutException;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;
import dev.strata.api.TargetContext;

/**
 * Building, attaching, quiescing and closing one device's target. Every method expects the
 * caller to hold the device's {@code op} lock (see the locking rules in {@link DeviceManagerImpl}).
 */
final class Lifecycle {
    private static final Logger LOG = LoggerFactory.getLogger(Lifecycle.class);
    private final Core core;

    Lifecycle(Core core) {
        this.core = core;
    }

    /**
     * Builds a target of {@code entry} for {@code d} from {@code def}'s arguments over the gated
     * views of {@code lowers}. The persisted tunables the factory takes as arguments
     * ({@link dev.strata.api.TargetFactory#buildsWithTunable}) are passed among them: applied by a
     * message after the build, they would come too late, since the target's daemons start inside
     * {@code create} (a writeboost cache reopened with {@code writeback_threshold 0} persisted
     * wrote back one batch at the default threshold before the message). The other tunables are
     * re-applied right after the build (one the target no longer takes is logged and noted in
     * {@code last_error}; the build stands).
     */
    Target build(MappedDevice d, FactoryEntry entry, DeviceDefinition def, List<String> lowers) throws IOException {
        Map<String, String> later = new LinkedHashMap<>();
        Target t = create(d, entry, buildArguments(entry, def, later), lowers);
        for (Map.Entry<String, String> tunable : later.entrySet()) {
            try {
                t.message(tunable.getKey(), tunable.getValue());
            } catch (IOException | RuntimeException e) {
                d.lastError = "persisted tunable " + tunable.getKey() + "=" + tunable.getValue() + " not re-applied: "
                        + e.getMessage();
                LOG.warn("device {}: {}", d.name, d.lastError);
            }
        }
        return t;
    }

    /**
     * Refuses (one line) what {@link #build} of {@code def} would refuse for its arguments alone —
     * the factory's {@link dev.strata.api.TargetFactory#check} of the arguments its create would get
     * — without touching a device: for an operation that would otherwise find out only after it
     * closed the old target or stored the new definition.
     */
    void check(FactoryEntry entry, DeviceDefinition def) {
        FactoryRegistry.check(entry, buildArguments(entry, def, new LinkedHashMap<>()));
    }

    /**
     * What {@code create} gets for {@code def}: its arguments and the persisted tunables the factory
     * builds with; the other tunables go to {@code later} (re-applied by message after the build).
     */
    private static Map<String, String> buildArguments(FactoryEntry entry, DeviceDefinition def,
            Map<String, String> later) {
        Map<String, String> args = new LinkedHashMap<>(def.arguments());
        for (Map.Entry<String, String> tunable : def.tunables().entrySet()) {
            if (takesAtBuild(entry, tunable.getKey())) {
                args.put(tunable.getKey(), tunable.getValue());
            } else {
                later.put(tunable.getKey(), tunable.getValue());
            }
        }
        return args;
    }

    private static boolean takesAtBuild(FactoryEntry entry, String key) {
        try {
            return entry.factory().buildsWithTunable(key);
        } catch (RuntimeException e) {
            return false; // a factory that cannot say gets the tunable by message, as before
        }
    }

    private Target create(MappedDevice d, FactoryEntry entry, Map<String, String> args, List<String> lowers)
            throws IOException {
        Map<String, MappedDevice> below = new HashMap<>();
        synchronized (core.graph.lock) {
            for (String lower : lowers) {
                MappedDevice l = core.graph.getLocked(lower);
                if (l == null) {
                    throw DeviceGraph.unknownDevice(lower);
                }
                below.put(lower, l);
            }
        }
        Map<String, String> frozen = Collections.unmodifiableMap(new LinkedHashMap<>(args));
        Map<String, Long> sizesSeen = new java.util.concurrent.ConcurrentHashMap<>();
        TargetContext ctx = new TargetContext() {
            @Override
            public String deviceName() {
                return d.name;
            }

            @Override
            public Map<String, String> arguments() {
                return frozen;
            }

            @Override
            public BlockDevice lowerDevice(String name) {
                MappedDevice l = lower(name);
                sizesSeen.putIfAbsent(name, l.size);
                return l.view;
            }

            @Override
            public String lowerDeviceId(String name) {
                return lower(name).definition.id();
            }

            @Override
            public void progress(String what, long done, long total) {
                dev.strata.api.DeviceManager.BuildProgress p = d.buildProgress;
                if (p != null) {
                    try {
                        p.update(what, done, total);
                    } catch (RuntimeException e) {
                        LOG.debug("device {}: a progress line failed: {}", d.name, e.toString()); // a console gone
                    }
                }
            }

            private MappedDevice lower(String name) {
                MappedDevice l = below.get(name);
                if (l == null) {
                    throw new InvalidArgumentException(entry.type() + ": '" + name
                            + "' is not among the lower devices its arguments name " + lowers);
                }
                return l;
            }
        };
        Target t;
        try {
            t = entry.factory().create(ctx);
        } catch (InvalidArgumentException | IOException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new IOException(entry.type() + ": could not build the target: " + e, e);
        }
        if (t == null) {
            throw new IOException(entry.type() + ": the factory built no target");
        }
        if (t.size() < 0 || t.size() % BlockDevice.SECTOR != 0) {
            closeQuietly(d, t);
            throw new IOException(entry.type() + ": the target's size " + t.size() + " is not a multiple of 512");
        }
        core.lowerSizes.built(t, sizesSeen);
        return t;
    }

    /** Makes {@code t} the device's target and opens the gate, unless the user suspended the device. */
    void attach(MappedDevice d, FactoryEntry entry, Target t) throws IOException {
        d.size = t.size();
        d.blockSize = t.blockSize();
        d.target = t;
        d.factory = entry;
        d.waitingFor = null;
        d.holds.open();
        if (d.userSuspended) {
            try {
                t.suspend();
            } catch (IOException | RuntimeException e) {
                LOG.warn("device {}: suspending the new target failed: {}", d.name, e.getMessage());
            }
        } else {
            d.gate.open();
        }
        if (!core.factories.registered(entry)) {
            // the factory went away while the target was being built: the reconcile closes it again
            core.reconciler.schedule(d);
        }
    }

    /**
     * Suspends a device whose factory went away: gate closed, in-flight I/O drained (as long as
     * it takes: the target may not be closed under running requests), target closed, state
     * WAITING_FOR_TARGET. Requests keep waiting at the gate for the next factory.
     */
    void detach(MappedDevice d, FactoryEntry gone) throws InterruptedException {
        boolean locked = false;
        if (!d.op.isHeldByCurrentThread()) {
            d.op.lockInterruptibly();
            locked = true;
        }
        try {
            Target t = d.target;
            if (t == null || d.factory != gone || d.removed) {
                return;
            }
            d.gate.close();
            while (!d.gate.drain(core.gateTimeoutNanos())) {
                LOG.warn("device {}: {} request(s) still in flight; waiting before closing its '{}' target", d.name,
                        d.gate.inFlight(), gone.type());
            }
            releaseHolds(d, true);
            d.target = null;
            d.factory = null;
            d.waitingFor = "target type '" + gone.type() + "'";
            try {
                t.close();
                LOG.info("device {} suspended, its '{}' target closed; waiting for the type to return", d.name,
                        gone.type());
            } catch (IOException | RuntimeException e) {
                d.lastError = "target did not close cleanly: " + e.getMessage();
                LOG.error("device {}: {}", d.name, d.lastError, e);
            }
        } finally {
            if (locked) {
                d.op.unlock();
            }
        }
    }

    /**
     * Lets no new {@code withTarget} call in and waits for the running ones. With
     * {@code interrupt} (the manager must close the target: stop, hot update, forced remove) they
     * are interrupted and waited for at most the gate timeout, then the target is closed anyway;
     * without, they are waited for a moment and the operation is refused if they go on.
     */
    void releaseHolds(MappedDevice d, boolean interrupt) {
        long wait = interrupt ? core.gateTimeoutNanos() : Math.min(core.gateTimeoutNanos(), HOLD_WAIT_NANOS);
        if (!d.holds.close(wait, interrupt)) {
            if (interrupt) {
                LOG.warn("device {}: a call using its target did not return after an interrupt; closing it anyway",
                        d.name);
                return;
            }
            throw new InvalidArgumentException("device '" + d.name + "' is in use by a running command (e.g. "
                    + "cache:writeback); wait for it or interrupt it, or add --force");
        }
    }

    private static final long HOLD_WAIT_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(5);

    /**
     * Suspends the target with the gate closed and drained. A target whose {@code suspend()}
     * fails may have stopped part of its background work (its daemons): it is resumed, so that
     * its state matches the open gate, and the device keeps running; if resuming fails too, the
     * gate stays closed and the device is left suspended (as the user's), with {@code last_error}
     * saying so, so that nothing runs against a half-stopped target.
     *
     * @throws IOException the suspend failed (saying which of the two ends it came to)
     */
    void suspendTarget(MappedDevice d, Target t) throws IOException {
        try {
            t.suspend();
        } catch (IOException | RuntimeException e) {
            try {
                t.resume();
            } catch (IOException | RuntimeException r) {
                d.userSuspended = true;
                d.lastError = "the target could not suspend (" + e.getMessage() + ") nor resume (" + r.getMessage()
                        + ")";
                throw new IOException("device '" + d.name + "': " + d.lastError + "; the device stays suspended: "
                        + "dev:resume " + d.name + " to retry", e);
            }
            d.gate.open();
            throw new IOException("device '" + d.name + "': the target could not suspend (" + e.getMessage()
                    + "); it was resumed and the device keeps running", e);
        }
    }

    /** Closes the gate and waits (bounded) for in-flight I/O; reopens and fails on timeout. */
    void quiesce(MappedDevice d) throws IOException {
        boolean wasOpen = d.gate.isOpen();
        d.gate.close();
        boolean drained;
        try {
            drained = d.gate.drain(core.gateTimeoutNanos());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            drained = false;
        }
        if (!drained) {
            if (wasOpen) {
                d.gate.open();
            }
            throw new DeviceTimeoutException(d.name, -1, d.gate.inFlight()
                    + " request(s) did not finish in time; nothing was changed");
        }
    }

    /**
     * Waits until no request is in flight. Not interruptible: its callers close the target next,
     * and closing it under running requests would fail or corrupt them (an interrupted
     * {@code dev:remove} must not do that). Requests end by themselves: every lower call has a
     * deadline. The interrupt is kept for the caller.
     */
    void awaitDrained(MappedDevice d) {
        boolean interrupted = false;
        try {
            for (;;) {
                try {
                    if (d.gate.drain(core.gateTimeoutNanos())) {
                        return;
                    }
                    LOG.warn("device {}: waiting for {} request(s) in flight", d.name, d.gate.inFlight());
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    void closeQuietly(MappedDevice d, Target t) {
        try {
            t.close();
        } catch (IOException | RuntimeException e) {
            LOG.warn("device {}: closing a '{}' target failed: {}", d.name, t.type(), e.getMessage());
        }
    }

    /**
     * {@code format=true} is for the build that asked for it only (an attach, a {@code dev:create},
     * the first start of a deployed {@code .cfg}; as {@link Switcher}'s first-build arguments):
     * kept in the definition, every later start would format the cache device again
     * whenever its superblock fails to check out, so a superblock damaged after the attach (which
     * {@code strata-tool repair} mends, dirty blocks and all) was silently formatted over instead,
     * losing every dirty block. Stored again without it once the cache is built; a crash before
     * that store leaves it in, which formats nothing a valid cache of this backing device holds.
     */
    void forgetFormat(MappedDevice d) {
        DeviceDefinition def = d.definition; // with any tunable set since the commit
        if (!def.arguments().containsKey(FORMAT)) {
            return;
        }
        Map<String, String> args = new LinkedHashMap<>(def.arguments());
        args.remove(FORMAT);
        DeviceDefinition built = new DeviceDefinition(def.name(), def.type(), args, def.id(), def.tunables(),
                def.stagedFor(), def.lowerOf());
        if (d.persistent) {
            try {
                core.store.save(d, built);
            } catch (IOException e) {
                LOG.warn("device {}: could not store its definition without format=true ({}); the next start "
                        + "formats its cache device only if that holds no valid cache of it", d.name, e.getMessage());
                return;
            }
        }
        d.definition = built;
    }

    private static final String FORMAT = "format";
}
