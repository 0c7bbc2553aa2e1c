package dev.strata.core.internal;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.strata.api.CacheTarget;
import dev.strata.api.DeviceTimeoutException;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;
import dev.strata.api.TargetArguments;
import dev.strata.core.internal.text.Text;

/**
 * A reload of a device that lies under a cache (directly or through other devices: the cache's
 * backing device is the device or stacked on it). The cache holds state about the device's blocks
 * — dirty blocks that belong at them, clean copies of them — and a reload that puts other blocks
 * there (another file, another offset) would misplace the dirty blocks at the next writeback and
 * serve the old copies, with nothing to tell. So, as dm expects the table under a cache to stay
 * put while it holds data:
 * <ul>
 * <li>a cache above with dirty blocks refuses the reload (one line: write it back or detach it
 * first), unless forced; so does a cache above that waits for its target (it may hold some);</li>
 * <li>a clean cache above is paused (its gate closed and drained) for the whole reload, and drops
 * its copies ({@code invalidate=all}) once the new target is built, before any gate opens again,
 * so no read returns an old copy; a cache that cannot drop them refuses the reload.</li>
 * </ul>
 * A reload that keeps every block where it is (a {@code linear} window over the same device at
 * the same offset, grown or shrunk; a target the new one adopts; a clean cache reloaded into
 * {@code linear} over its own backing device, as {@code cache:detach} does) concerns no cache.
 * <p>
 * Locking: the caller holds the reloaded device's {@code op} lock; a cache's {@code op} lock (an
 * upper device's, against the usual upper-then-lower order) is only tried, with a bounded wait, and
 * the reload is refused as busy when it cannot be had.
 */
final class UnderCaches {
    private static final Logger LOG = LoggerFactory.getLogger(UnderCaches.class);
    private static final long LOCK_WAIT_SECONDS = 5;
    static final UnderCaches NONE = new UnderCaches(null, null, List.of(), false);

    private final Core core;
    private final MappedDevice x;
    /** The caches above {@code x}, a cache above before the ones below it. */
    private final List<MappedDevice> caches;
    private final boolean force;
    private final List<MappedDevice> locked = new ArrayList<>();
    private final List<MappedDevice> closedGates = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();
    /** The caches whose dirty blocks a forced reload leaves in place (noted once). */
    private final java.util.Set<String> forcedDirty = new java.util.HashSet<>();

    private UnderCaches(Core core, MappedDevice x, List<MappedDevice> caches, boolean force) {
        this.core = core;
        this.x = x;
        this.caches = caches;
        this.force = force;
    }

    /**
     * The caches above {@code x} that a reload from {@code oldDef} to {@code def} concerns, checked
     * (nothing paused yet).
     *
     * @throws InvalidArgumentException a cache above holds dirty blocks or waits for its target, not {@code force}
     */
    static UnderCaches of(Core core, MappedDevice x, FactoryEntry entry, DeviceDefinition oldDef,
            DeviceDefinition def, boolean force) {
        Target old = x.target;
        if (old == null || keepsBlocks(old, entry, oldDef, def)) {
            return NONE; // a waiting device served nothing a cache above could hold
        }
        List<MappedDevice> found = new ArrayList<>();
        List<MappedDevice> waiting = new ArrayList<>();
        synchronized (core.graph.lock) {
            for (MappedDevice u : core.graph.all()) {
                if (u == x || u.removed || !core.graph.dependsOnLocked(u.name, x.name)) {
                    continue;
                }
                Target t = u.target;
                if (t == null) {
                    waiting.add(u);
                } else if (t instanceof CacheTarget c && holdsBlocksOf(core, u, c, x)) {
                    found.add(u);
                }
            }
            core.graph.topDownLocked(found);
        }
        UnderCaches uc = new UnderCaches(core, x, List.copyOf(found), force);
        for (MappedDevice u : waiting) {
            if (!force) {
                throw new InvalidArgumentException(x.name + " is under " + u.name + ", which is waiting for "
                        + (u.waitingFor != null ? u.waitingFor : "its target") + " (its cache, if it is one, may hold dirty "
                        + "blocks that belong at " + x.name + "'s current blocks); reload " + x.name + " once " + u.name
                        + " is active, or add --force");
            }
            uc.note("reloading " + x.name + " under " + u.name + ", which was waiting for its target: whatever it"
                    + " holds of " + x.name + "'s blocks was not checked");
        }
        for (MappedDevice u : found) {
            uc.checkClean(u);
        }
        return uc;
    }

    /** Whether {@code c}'s backing (authoritative) device is {@code x} or stacked on it. */
    private static boolean holdsBlocksOf(Core core, MappedDevice u, CacheTarget c, MappedDevice x) {
        String a;
        try {
            a = u.definition.arguments().get(c.authoritativeDeviceArgument());
        } catch (RuntimeException e) {
            return true; // cannot say: assume it does
        }
        return a == null || a.equals(x.name) || core.graph.dependsOnLocked(a, x.name);
    }

    /**
     * Closes every cache's gate (top down: a cache's requests in flight may go through the one below)
     * and waits for its requests, so that none gets dirty or serves a copy until {@link #resume}.
     */
    void pause() throws IOException {
        for (MappedDevice u : caches) {
            boolean got;
            try {
                got = u.op.tryLock(LOCK_WAIT_SECONDS, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                got = false;
            }
            if (!got) {
                throw new InvalidArgumentException(x.name + " is under " + u.name + ", which is busy with another "
                        + "command; try again when it is done (the reload must drop " + u.name + "'s copies of "
                        + x.name + "'s blocks)");
            }
            locked.add(u);
            if (!(u.target instanceof CacheTarget) || u.removed) {
                throw new InvalidArgumentException(x.name + " is under " + u.name + ", which changed meanwhile; try again");
            }
            if (u.gate.isOpen()) {
                u.gate.close();
                closedGates.add(u);
                boolean drained;
                try {
                    drained = u.gate.drain(core.gateTimeoutNanos());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    drained = false;
                }
                if (!drained) {
                    throw new DeviceTimeoutException(u.name, -1, u.gate.inFlight() + " request(s) did not finish in"
                            + " time while " + x.name + " (under it) was to be reloaded; nothing was changed");
                }
            }
            checkClean(u); // again: writes may have come in before its gate closed
        }
    }

    /**
     * Drops every clean cache's copies, with its gate closed: after the new target of {@code x} is
     * built and before any gate opens. A forced reload leaves a dirty cache's blocks as they are.
     *
     * @throws InvalidArgumentException a cache could not drop its copies (the reload is refused)
     */
    void dropCopies() {
        for (MappedDevice u : caches) {
            CacheTarget c = (CacheTarget) u.target;
            if (dirty(u, c) != 0) {
                continue; // forced: its blocks stay (noted), and a cache with dirty blocks refuses invalidate=all
            }
            try {
                if (u.userSuspended) {
                    c.resume(); // a suspended cache's daemons, which write the invalidation, are stopped
                }
                try {
                    c.message(CacheTarget.Actions.INVALIDATE, CacheTarget.Actions.ALL);
                } finally {
                    if (u.userSuspended) {
                        c.suspend();
                    }
                }
            } catch (IOException | RuntimeException e) {
                throw new InvalidArgumentException(x.name + " is under " + u.name + ", whose copies of " + x.name
                        + "'s blocks could not be dropped (" + e.getMessage() + "); run cache:detach " + u.name
                        + " first, then reload " + x.name);
            }
            LOG.info("device {}: reloaded under {}: the cache's copies of its blocks were dropped", x.name, u.name);
        }
    }

    /** Opens the gates {@link #pause} closed (bottom up) and lets the caches go. */
    void resume() {
        for (int i = closedGates.size() - 1; i >= 0; i--) {
            closedGates.get(i).gate.open();
        }
        closedGates.clear();
        for (int i = locked.size() - 1; i >= 0; i--) {
            locked.get(i).op.unlock();
        }
        locked.clear();
    }

    /** What a forced reload left behind, or null. */
    String notes() {
        return notes.isEmpty() ? null : String.join("; ", notes);
    }

    private void checkClean(MappedDevice u) {
        long dirty = dirty(u, (CacheTarget) u.target);
        if (dirty == 0 || forcedDirty.contains(u.name)) {
            return;
        }
        String count = dirty < 0 ? "an unknown number of dirty blocks" : Text.blocks(dirty, "dirty");
        if (!force) {
            throw new InvalidArgumentException(x.name + " is under " + u.name + ", which holds " + count
                    + " that belong at " + x.name + "'s current blocks; run cache:writeback " + u.name + " (or cache:detach "
                    + u.name + ") first, or add --force");
        }
        forcedDirty.add(u.name);
        note("reloading " + x.name + " under " + u.name + " left its " + count + " in " + u.name
                + ": they will be written back to " + x.name + "'s new blocks");
    }

    private void note(String n) {
        LOG.warn("device {}: {}", x.name, n);
        notes.add(n);
    }

    private static long dirty(MappedDevice u, CacheTarget c) {
        try {
            return c.dirtyBlocks();
        } catch (RuntimeException e) {
            LOG.warn("device {}: could not read its dirty blocks: {}", u.name, e.getMessage());
            return -1;
        }
    }

    /**
     * Whether a reload from {@code oldDef} to {@code def} leaves every block of the device where it
     * is: a linear window moved by nothing but its length; a target the new one adopts (it takes
     * over the old one's state, e.g. a cache reloaded with another tunable); a clean cache reloaded
     * into {@code linear} over the start of its own backing device (a detach of a middle layer).
     */
    static boolean keepsBlocks(Target old, FactoryEntry entry, DeviceDefinition oldDef, DeviceDefinition def) {
        String linear = dev.strata.core.internal.linear.LinearTargetFactory.TYPE;
        try {
            if (def.type().equals(linear)) {
                String device = def.arguments().get("device");
                long offset = offset(def);
                if (oldDef.type().equals(linear)) {
                    return device != null && device.equals(oldDef.arguments().get("device")) && offset == offset(oldDef);
                }
                if (old instanceof CacheTarget c && c.dirtyBlocks() == 0 && offset == 0) {
                    return device != null && device.equals(oldDef.arguments().get(c.authoritativeDeviceArgument()));
                }
            }
            return entry.factory().adopts(oldDef.type(), oldDef.arguments(), def.arguments());
        } catch (RuntimeException e) {
            return false; // cannot say: the caches above are asked
        }
    }

    private static long offset(DeviceDefinition def) {
        String v = def.arguments().get("offset");
        return v == null ? 0 : TargetArguments.parseSize("offset", v);
    }
}
