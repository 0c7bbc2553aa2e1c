package dev.strata.core.internal;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.strata.api.CacheTarget;
import dev.strata.api.Claim;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;

/**
 * The reverse of {@link Attacher} ({@link dev.strata.api.DeviceManager#collapse}, the last step of
 * {@code cache:detach}): a device whose target sits over a lower device {@code L} that nothing
 * else uses takes over {@code L}'s target and definition, under its own name and identity, and
 * {@code L} disappears.
 *
 * <h2>Order</h2>
 * <ol>
 * <li>Validate (nothing paused, nothing stored for a mistake): {@code L} is one of the device's
 * lower devices, made for it by an attach ({@code lower.of=DEV}), held by nothing else (no other device, no handle); the device's target holds no
 * dirty data (the caller drained it).</li>
 * <li>{@code L}'s definition is stored <em>staged</em> for the device ({@code staged.for=DEV}).</li>
 * <li>Pause: the gate closes and drains; the old target is suspended (its background work stops)
 * and checked clean again, then flushed, and {@code L}'s target flushed; the device's new
 * definition — {@code L}'s type, arguments and tunables under the device's identity — is stored
 * (the <b>commit</b>); {@code L}'s target becomes the device's (the same object: nothing
 * reopened); the gate opens.</li>
 * <li>The old target is closed, {@code L} leaves the graph, its definition is deleted.</li>
 * </ol>
 *
 * <h2>Crash at any point</h2>
 * {@link Attacher#recover} needs nothing new: before the commit the device's stored definition
 * still names {@code L} and differs from it, so the staged mark is dropped and the old stack comes
 * back; after it the device's stored definition <em>is</em> {@code L}'s table, so {@code L}'s
 * definition is deleted and the device comes back collapsed. Never both on the same storage.
 * <p>
 * Runs under the device's {@code op} lock, then {@code L}'s (upper before lower, as a reload
 * that reaches a lower device never locks it; bounded, refused when {@code L} is busy).
 */
final class Collapser {
    private static final Logger LOG = LoggerFactory.getLogger(Collapser.class);
    private final Core core;
    /**
     * A hook for tests, called with the phase reached: {@code staged} (before the pause: a throw
     * takes the rollback path), {@code committed} (after the commit: must not throw).
     */
    volatile Attacher.PhaseHook hook = phase -> { };

    Collapser(Core core) {
        this.core = core;
    }

    void collapse(String name, String lowerName) throws IOException {
        MappedDevice d = core.graph.require(name);
        core.operations.lockOp(d);
        try {
            if (d.removed) {
                throw DeviceGraph.unknownDevice(name);
            }
            MappedDevice l = core.graph.require(lowerName);
            if (!d.lowers.contains(lowerName)) {
                throw new InvalidArgumentException("device '" + lowerName + "' is not under " + name
                        + "; nothing to collapse onto");
            }
            boolean locked;
            try {
                locked = l.op.tryLock(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InvalidArgumentException(name + ": interrupted before anything changed");
            }
            if (!locked) {
                throw new InvalidArgumentException("device '" + lowerName + "' is busy with another operation; "
                        + "try again");
            }
            try {
                String before = d.lastError;
                collapseLocked(d, l);
                d.clearErrorNotedBefore(before);
            } finally {
                l.op.unlock();
            }
        } finally {
            d.op.unlock();
        }
        core.reconciler.scheduleWaiting(); // what the old target claimed (a cache device) is free now
    }

    private void collapseLocked(MappedDevice d, MappedDevice l) throws IOException {
        if (d.userSuspended || l.userSuspended) {
            throw new InvalidArgumentException("device '" + (d.userSuspended ? d.name : l.name)
                    + "' is suspended; dev:resume it first");
        }
        Target old = d.target;
        Target lower = l.target;
        if (old == null || lower == null || l.removed) {
            throw new InvalidArgumentException("device '" + d.name + "' or '" + l.name
                    + "' has no target right now; try again when both are active");
        }
        synchronized (core.graph.lock) {
            List<String> holders = core.graph.holdersLocked(l);
            if (!holders.equals(List.of(d.name))) {
                throw new InvalidArgumentException("device '" + l.name + "' is also used by "
                        + String.join(", ", holders.stream().filter(h -> !h.equals(d.name)).toList())
                        + "; " + d.name + " cannot take it over");
            }
        }
        if (!d.name.equals(l.definition.lowerOf())) {
            throw new InvalidArgumentException("device '" + l.name + "' was not made by cache:attach for " + d.name
                    + "; there is nothing to collapse back onto");
        }
        requireClean(d, old);
        if (d.persistent != l.persistent) {
            throw new InvalidArgumentException("device '" + l.name + "' and " + d.name
                    + " are not both persistent; collapse needs both stored or both transient");
        }
        DeviceDefinition ld = l.definition;
        // the device keeps its own identity, and its own mark if it is itself an attach's lower device
        DeviceDefinition def = new DeviceDefinition(d.name, ld.type(), ld.arguments(), d.definition.id(),
                ld.tunables(), null, d.definition.lowerOf());
        core.lifecycle.releaseHolds(d, false); // a running cache:writeback etc. must not see the swap
        boolean committed = false;
        boolean staged = false;
        try {
            if (d.persistent) {
                core.store.save(l, ld.staged(d.name));
                staged = true;
            }
            hook.reached("staged");
            // most volatile data made durable while I/O runs, so the flushes inside the pause have
            // little left (writes in writearound go straight to L: its flush is the one that costs)
            old.flush();
            lower.flush();
            long closed = System.nanoTime();
            core.lifecycle.quiesce(d);
            if (!d.userSuspended) {
                core.lifecycle.suspendTarget(d, old); // on failure it resumes the target and reopens the gate
            }
            try {
                requireClean(d, old);
                // writes completed through the old target may be volatile in it or in L; after the
                // swap a client's flush reaches only L's target
                old.flush();
                lower.flush();
                if (d.persistent) {
                    core.store.save(d, def);
                }
            } catch (IOException | RuntimeException e) {
                resume(d, old);
                throw e;
            }
            committed = true;
            d.definition = def;
            List<String> lowers = l.lowers;
            Map<String, Claim> claims = l.claims;
            synchronized (core.graph.lock) {
                l.removed = true;
                l.lowers = List.of();
                l.claims = Map.of();
                d.lowers = lowers;
                d.claims = claims;
            }
            core.lifecycle.attach(d, l.factory, lower);
            d.lastSwapPauseNanos = System.nanoTime() - closed;
            hook.reached("committed");
        } finally {
            if (!committed) {
                d.holds.open();
                if (staged) {
                    try {
                        core.store.save(l, ld);
                    } catch (IOException e) {
                        LOG.warn("device {}: could not clear the staged mark of {} ({}); the next start does",
                                d.name, l.name, e.getMessage());
                    }
                }
            }
        }
        // the old target's close may still write to L (its superblock is on its own cache device;
        // a clean cache writes nothing back), so L keeps routing to the same target until then
        core.lifecycle.closeQuietly(d, old);
        l.gate.shut("device '" + l.name + "' was collapsed into " + d.name);
        l.target = null;
        l.factory = null;
        core.graph.remove(l);
        if (l.persistent) {
            try {
                core.store.delete(l);
            } catch (IOException e) {
                // committed: the next start deletes it itself (see Attacher.recover)
                LOG.warn("device {}: could not delete the definition of {}: {}", d.name, l.name, e.getMessage());
            }
        }
        LOG.info("collapsed {} onto its lower device {} (now {}; pause {} µs)", d.name, l.name, def.tableLine(),
                d.lastSwapPauseNanos / 1000);
    }

    private static void requireClean(MappedDevice d, Target t) {
        if (t instanceof CacheTarget c && c.dirtyBlocks() != 0) {
            throw new InvalidArgumentException(d.name + " holds " + c.dirtyBlocks()
                    + " dirty blocks its lower device does not have; write them back first (cache:detach does)");
        }
    }

    private void resume(MappedDevice d, Target old) {
        if (d.userSuspended) {
            return;
        }
        try {
            old.resume();
        } catch (IOException | RuntimeException r) {
            LOG.warn("device {}: resuming the old target failed: {}", d.name, r.getMessage());
        }
        d.gate.open();
    }
}
