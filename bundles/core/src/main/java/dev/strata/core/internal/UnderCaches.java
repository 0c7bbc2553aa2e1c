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
 * the same offset, grown or shrunk; the same file, grown; a target the new one adopts; a clean
 * cache reloaded into {@code linear} over its own backing device, as {@code cache:detach} does)
 * concerns no cache.
 * <p>
 * A reload under a cache's <em>cache device</em> (the lower that is not the authoritative one, or
 * anything below it) that does not keep every block in place is refused while the cache is
 * active, dirty or not: its index points at the old blocks (a dirty block's only copy, a clean
 * block's copy), so the cache would serve, and write back, whatever the new blocks hold. Forced,
 * the cache drops its copies and the warning says its dirty blocks are lost.
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
    /** The caches whose cache device is {@code x} or stacked on it (a forced reload: they lose their index). */
    private final java.util.Set<String> onCacheDevice = new java.util.HashSet<>();

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
        List<MappedDevice> overCache = new ArrayList<>();
        synchronized (core.graph.lock) {
            for (MappedDevice u : core.graph.all()) {
                if (u == x || u.removed || !core.graph.dependsOnLocked(u.name, x.name)) {
                    continue;
                }
                Target t = u.target;
                if (t == null) {
                    waiting.add(u);
                } else if (t instanceof CacheTarget c && cacheDeviceOf(core, u, c, x) != null) {
                    overCache.add(u);
                    found.add(u);
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
        for (MappedDevice u : overCache) {
            uc.onCacheDevice.add(u.name);
            uc.checkCacheDevice(u);
        }
        for (MappedDevice u : found) {
            if (!uc.onCacheDevice.contains(u.name)) {
                uc.checkClean(u);
            }
        }
        return uc;
    }

    /**
     * The name of {@code c}'s cache device when it is {@code x} or stacked on it (the lower that is
     * not the authoritative one), else null. Caller holds the graph lock.
     */
    private static String cacheDeviceOf(Core core, MappedDevice u, CacheTarget c, MappedDevice x) {
        String a;
        try {
            a = u.definition.arguments().get(c.cacheDeviceArgument());
        } catch (RuntimeException e) {
            return null; // cannot say: the backing device's rules apply
        }
        return a != null && (a.equals(x.name) || core.graph.dependsOnLocked(a, x.name)) ? a : null;
    }

    /**
     * A cache whose cache device is {@code x} or stacked on it: its index (dirty or not) points at
     * blocks the reload replaces, so it refuses unless forced; forced, it drops its copies and its
     * dirty blocks are lost (noted).
     */
    private void checkCacheDevice(MappedDevice u) {
        CacheTarget c = (CacheTarget) u.target;
        String cd = cacheDeviceOf(core, u, c, x);
        String where = x.name.equals(cd) ? x.name + " is " + u.name + "'s cache device"
                : x.name + " is under " + cd + ", " + u.name + "'s cache device";
        long dirty = dirty(u, c);
        String count = dirty < 0 ? "an unknown number of dirty blocks" : Text.blocks(dirty, "dirty");
        if (!force) {
            throw new InvalidArgumentException(where + ": " + u.name + "'s index (" + count + ") points at " + x.name
                    + "'s current blocks, which the reload would replace; run cache:detach " + u.name
                    + " first (or cache:replace " + u.name + " cache=DEV to move it to another device), or add --force"
                    + " (" + u.name + " then drops its copies and its dirty blocks are lost)");
        }
        if (dirty != 0) {
            forcedDirty.add(u.name);
            note("reloading " + x.name + " under " + u.name + " (its cache device) lost " + u.name + "'s " + count
                    + ": they were on " + x.name + "'s old blocks and its backing device never got them");
        }
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
            if (onCacheDevice.contains(u.name)) {
                if (!forcedDirty.contains(u.name)) {
                    checkCacheDevice(u); // again: writes may have come in before its gate closed
                }
            } else {
                checkClean(u); // again: writes may have come in before its gate closed
            }
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
            boolean lost = onCacheDevice.contains(u.name);
            if (dirty(u, c) != 0) {
                if (lost) {
                    dropLost(u, c);
                }
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
            if (lost) {
                note("reloading " + x.name + " under " + u.name + " (its cache device) dropped " + u.name
                        + "'s copies: it starts cold");
            }
        }
    }

    /** Forced under a dirty cache's cache device: its clean copies dropped as far as the policy lets. */
    private void dropLost(MappedDevice u, CacheTarget c) {
        try {
            c.message(CacheTarget.Actions.INVALIDATE, CacheTarget.Actions.ALL);
        } catch (IOException | RuntimeException e) {
            note(u.name + " could not drop its copies (" + e.getMessage() + "); its index still points at "
                    + x.name + "'s new blocks: remove it (dev:remove --force " + u.name + ") or create it again with "
                    + "format=true before reading through it");
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
            if (sameFile(oldDef, def)) {
                return true;
            }
            return entry.factory().adopts(oldDef.type(), oldDef.arguments(), def.arguments());
        } catch (RuntimeException e) {
            return false; // cannot say: the caches above are asked
        }
    }

    /** Arguments of a file-like target that change its size only, not where its blocks are. */
    private static final java.util.Set<String> SIZE_ONLY = java.util.Set.of("size", "create", "preallocate");

    /**
     * The same type over the same {@code path=} with nothing else changed but its size (and
     * whether it may create or grow the file): the same file, grown or shrunk, its blocks in place
     * (a shrink below what a device above maps is refused by {@link LowerSizes}).
     */
    private static boolean sameFile(DeviceDefinition oldDef, DeviceDefinition def) {
        String path = def.arguments().get("path");
        if (path == null || !def.type().equals(oldDef.type()) || !path.equals(oldDef.arguments().get("path"))) {
            return false;
        }
        java.util.Map<String, String> a = new java.util.HashMap<>(oldDef.arguments());
        java.util.Map<String, String> b = new java.util.HashMap<>(def.arguments());
        a.keySet().removeAll(SIZE_ONLY);
        b.keySet().removeAll(SIZE_ONLY);
        return a.equals(b);
    }

    private static long offset(DeviceDefinition def) {
        String v = def.arguments().get("offset");
        return v == null ? 0 : TargetArguments.parseSize("offset", v);
    }
}
