package dev.strata.core.internal;

import java.io.IOException;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

import dev.strata.api.Claim;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;
import dev.strata.core.internal.ReloadOrder.Strategy;
import dev.strata.core.internal.ReloadOrder.Swap;

/**
 * Replaces a device's target: validates the new table (nothing paused for a mistake), then swaps
 * with the strategy its {@link ReloadOrder} selects. Runs under the device's {@code op} lock.
 */
final class Reloader {
    private static final Logger LOG = LoggerFactory.getLogger(Reloader.class);
    private final Core core;
    private final Map<ReloadOrder, Strategy> strategies = new EnumMap<>(ReloadOrder.class);

    Reloader(Core core) {
        this.core = core;
        strategies.put(ReloadOrder.FIRST_BUILD, this::firstBuild);
        strategies.put(ReloadOrder.DISJOINT, this::disjoint);
        strategies.put(ReloadOrder.SHARED, this::shared);
    }

    /**
     * Swaps in a target built from {@code table} (its name, type and arguments; the device keeps
     * its identity, and its persisted tunables when the type stays the same, except those the new
     * arguments set). {@code persist}: also store the definition. A target holding dirty data
     * that the new one does not {@link dev.strata.api.TargetFactory#adopts adopt} is refused
     * unless {@code force}.
     *
     * @return what a forced reload stranded, or null
     */
    String reloadLocked(MappedDevice d, DeviceDefinition table, boolean persist, boolean force) throws IOException {
        String errorBefore = d.lastError;
        DeviceDefinition oldDef = d.definition;
        DeviceDefinition def = carryOver(oldDef, table);
        FactoryEntry entry = core.factories.require(def.type());
        List<String> newLowers = FactoryRegistry.lowerDevices(entry, def.arguments());
        Map<String, Claim> newClaims = FactoryRegistry.claims(entry, def.arguments(), newLowers);
        // what the build would refuse for the arguments alone, refused before anything is paused: the
        // shared order closes the old target (and drops a cache's copies) before it builds the new one
        core.lifecycle.check(entry, def);
        List<String> oldLowers = d.lowers;
        Map<String, Claim> oldClaims = d.claims;
        synchronized (core.graph.lock) {
            for (String lower : newLowers) {
                core.graph.requireReadyLowerLocked(lower, d.name);
                if (lower.equals(d.name) || core.graph.dependsOnLocked(lower, d.name)) {
                    throw new InvalidArgumentException("device '" + lower + "' is stacked on '" + d.name
                            + "'; a device cannot be stacked on itself");
                }
            }
            core.graph.checkClaimsLocked(d.name, newClaims);
        }
        String stranded = null;
        boolean dropOldCopies = false;
        if (d.target != null && !adopts(entry, oldDef, def)) {
            stranded = DirtyGuard.check(d, force, "reloading");
            dropOldCopies = stranded == null && !reopensSameCache(d.target, oldDef, def);
        }
        if (d.target == null && !adopts(entry, oldDef, def)) {
            stranded = DirtyGuard.checkWaiting(core, d, force, "reloading"); // no target to count its dirty blocks
        }
        UnderCaches above = UnderCaches.of(core, d, entry, oldDef, def, force); // refuses before anything is paused
        if (d.target != null) {
            core.lifecycle.releaseHolds(d, force);
        }
        synchronized (core.graph.lock) {
            d.lowers = DeviceGraph.union(oldLowers, newLowers); // neither set can be removed meanwhile
            d.claims = DeviceGraph.strongest(oldClaims, newClaims);
        }
        boolean done = false;
        try {
            above.pause();
            Target old = d.target;
            ReloadOrder order = ReloadOrder.of(old, oldLowers, newLowers);
            strategies.get(order).swap(new Swap(d, old, oldDef, oldLowers, entry, def, newLowers, persist, dropOldCopies,
                    above));
            done = true;
            d.clearErrorNotedBefore(errorBefore);
            core.graph.setClaims(d, newClaims);
            if (order != ReloadOrder.FIRST_BUILD) {
                LOG.info("reloaded {} ({} order)", def.tableLine(), order.name().toLowerCase(java.util.Locale.ROOT));
            }
        } finally {
            above.resume();
            if (!done) {
                core.graph.setLowers(d, oldLowers);
                core.graph.setClaims(d, oldClaims);
                if (d.target != null) {
                    d.holds.open();
                }
            }
        }
        core.reconciler.scheduleWaiting();
        String left = above.notes();
        return stranded == null ? left : left == null ? stranded : stranded + "; " + left;
    }

    /** The new definition: the table given, the device's identity, the tunables that still apply. */
    private static DeviceDefinition carryOver(DeviceDefinition old, DeviceDefinition table) {
        Map<String, String> tunables = new java.util.LinkedHashMap<>();
        if (old.type().equals(table.type())) {
            tunables.putAll(old.tunables());
            tunables.keySet().removeAll(table.arguments().keySet()); // an explicit new value wins
        }
        tunables.putAll(table.tunables());
        return new DeviceDefinition(table.name(), table.type(), table.arguments(),
                table.id() != null ? table.id() : old.id(), tunables);
    }

    /**
     * Whether the new definition opens the old cache's own cache device with the same policy: it
     * then recovers the same copies, still current (the device is quiesced between the two, and
     * the backing device is written by nobody else), so they are kept rather than dropped.
     */
    private static boolean reopensSameCache(Target old, DeviceDefinition oldDef, DeviceDefinition def) {
        if (!(old instanceof dev.strata.api.CacheTarget c) || !oldDef.type().equals(def.type())) {
            return false;
        }
        String arg = c.cacheDeviceArgument();
        String cacheDevice = oldDef.arguments().get(arg);
        return cacheDevice != null && cacheDevice.equals(def.arguments().get(arg));
    }

    private static boolean adopts(FactoryEntry entry, DeviceDefinition oldDef, DeviceDefinition def) {
        try {
            return entry.factory().adopts(oldDef.type(), oldDef.arguments(), def.arguments());
        } catch (InvalidArgumentException e) {
            throw e; // the factory refuses the new arguments (one line, nothing changed yet)
        } catch (RuntimeException e) {
            return false;
        }
    }

    private void firstBuild(Swap s) throws IOException {
        MappedDevice d = s.device();
        Target t = buildFitting(s);
        try {
            persist(s);
        } catch (IOException e) {
            core.lifecycle.closeQuietly(d, t);
            throw e;
        }
        install(s, t);
    }

    private void disjoint(Swap s) throws IOException {
        MappedDevice d = s.device();
        Lifecycle life = core.lifecycle;
        Target t = buildFitting(s);
        try {
            life.quiesce(d);
        } catch (IOException e) {
            life.closeQuietly(d, t);
            throw e;
        }
        try {
            if (!d.userSuspended) {
                life.suspendTarget(d, s.old()); // on failure: resumed and reopened, or left suspended
            }
        } catch (IOException e) {
            life.closeQuietly(d, t);
            throw e;
        }
        try {
            persist(s);
        } catch (IOException | RuntimeException e) {
            life.closeQuietly(d, t);
            if (!d.userSuspended) {
                try {
                    s.old().resume();
                } catch (IOException | RuntimeException r) {
                    LOG.warn("device {}: resuming the old target failed: {}", d.name, r.getMessage());
                }
                d.gate.open();
            }
            throw e instanceof IOException ? (IOException) e : new IOException(e.getMessage(), e);
        }
        install(s, t);
        if (s.dropOldCopies()) {
            StaleCopies.drop(d, s.old(), true); // suspended above (or by the user)
        }
        life.closeQuietly(d, s.old());
    }

    private void shared(Swap s) throws IOException {
        MappedDevice d = s.device();
        Lifecycle life = core.lifecycle;
        life.quiesce(d);
        d.target = null;
        d.factory = null;
        if (s.dropOldCopies()) {
            StaleCopies.drop(d, s.old(), false); // before the close, after which its copies would stay valid
        }
        life.closeQuietly(d, s.old());
        Target t = null;
        try {
            t = buildFitting(s);
            persist(s);
        } catch (IOException | RuntimeException e) {
            if (t != null) {
                life.closeQuietly(d, t);
            }
            core.graph.setLowers(d, s.oldLowers());
            restoreOld(d, s.oldDef(), s.oldLowers());
            throw e;
        }
        install(s, t);
    }

    /**
     * Builds the new target and checks it before anything is stored or opened: no device stacked on
     * this one maps more of it than it has ({@link LowerSizes}); then the caches above, paused, drop
     * their copies of its blocks ({@link UnderCaches}). A refusal closes the new target.
     */
    private Target buildFitting(Swap s) throws IOException {
        MappedDevice d = s.device();
        Target t = core.lifecycle.build(d, s.entry(), s.def(), s.newLowers());
        try {
            core.lowerSizes.requireFits(core, d, t.size());
            s.above().dropCopies();
        } catch (RuntimeException e) {
            core.lifecycle.closeQuietly(d, t);
            throw e;
        }
        return t;
    }

    private void install(Swap s, Target t) throws IOException {
        MappedDevice d = s.device();
        d.definition = s.def();
        core.graph.setLowers(d, s.newLowers());
        core.lifecycle.attach(d, s.entry(), t);
        core.lifecycle.forgetFormat(d); // format=true is for this build only
    }

    private void persist(Swap s) throws IOException {
        if (s.persist() && s.device().persistent) {
            core.store.save(s.device(), s.def());
        }
    }

    /** After a failed shared reload: the old target reopened from its on-disk state. */
    private void restoreOld(MappedDevice d, DeviceDefinition oldDef, List<String> oldLowers) {
        FactoryEntry e = core.factories.best(oldDef.type());
        try {
            if (e == null) {
                throw new IOException("no factory for '" + oldDef.type() + "'");
            }
            core.lifecycle.attach(d, e, core.lifecycle.build(d, e, oldDef, oldLowers));
            LOG.info("reload of {} failed; the old target is back", d.name);
        } catch (IOException | RuntimeException ex) {
            d.lastError = "reload failed and the old target could not be reopened: " + ex.getMessage();
            d.waitingFor = e == null ? "target type '" + oldDef.type() + "'" : Switcher.BUILD_FAILED;
            LOG.error("device {}: {}", d.name, d.lastError);
        }
    }
}
