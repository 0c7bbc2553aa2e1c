package dev.strata.core.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.strata.api.CacheTarget;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;
import dev.strata.core.internal.text.Text;

/**
 * Refuses to remove a device, or reload it into a target that cannot adopt its state, while
 * its target holds data its lower devices do not (a cache's dirty blocks): that data would
 * silently vanish from the device. With {@code force} the operation goes ahead and the caller
 * gets a line saying what was stranded where.
 */
final class DirtyGuard {
    private static final Logger LOG = LoggerFactory.getLogger(DirtyGuard.class);

    private DirtyGuard() {
    }

    /**
     * Checks {@code d}'s target before it is dropped.
     *
     * @return null when nothing is stranded, else the line saying what was (when forced)
     * @throws InvalidArgumentException when dirty blocks would be stranded and not {@code force}
     */
    static String check(MappedDevice d, boolean force, String operation) {
        Target t = d.target;
        if (!(t instanceof CacheTarget c)) {
            return null;
        }
        long dirty;
        try {
            dirty = c.dirtyBlocks();
        } catch (RuntimeException e) {
            LOG.warn("device {}: could not read its dirty blocks: {}", d.name, e.getMessage());
            dirty = -1;
        }
        if (dirty == 0) {
            return null;
        }
        String cacheDevice = cacheDevice(d, c);
        String count = dirty < 0 ? "an unknown number of dirty blocks" : Text.blocks(dirty, "dirty");
        if (!force) {
            throw new InvalidArgumentException(d.name + " holds " + count
                    + " its backing device does not have; run cache:detach " + d.name
                    + " first, or add --force to strand them on " + cacheDevice);
        }
        String note = operation + " " + d.name + " stranded " + count + " on " + cacheDevice
                + " (its backing device does not have them)";
        LOG.warn("device {}: {}", d.name, note);
        return note;
    }

    /**
     * Checks a device that is waiting for its target (no target to count dirty blocks) before it is
     * removed, or reloaded into a target that does not adopt it: when its stored type is a cache
     * type (its definition names a cache device, or its factory has a backing argument other than
     * {@code linear}'s), its cache device may hold dirty blocks, so it is refused unless forced.
     *
     * @return null when it is no cache type, else the line saying what may be stranded (when forced)
     * @throws InvalidArgumentException it may be a cache with dirty blocks and not {@code force}
     */
    static String checkWaiting(Core core, MappedDevice d, boolean force, String operation) {
        DeviceDefinition def = d.definition;
        if (d.target != null || def == null || !isCacheType(core, def)) {
            return null;
        }
        String cacheDevice = def.arguments().getOrDefault("cache", "its cache device");
        if (!force) {
            throw new InvalidArgumentException(d.name + " is waiting for its target; its cache device may hold dirty "
                    + "blocks: dev:reload it with its cache type (e.g. fix the argument) to recover them, or add --force");
        }
        String note = operation + " " + d.name + ", which was waiting for its target, may have stranded dirty blocks on "
                + cacheDevice + " (they were not counted)";
        LOG.warn("device {}: {}", d.name, note);
        return note;
    }

    private static boolean isCacheType(Core core, DeviceDefinition def) {
        if (def.arguments().containsKey("cache")) {
            return true;
        }
        if (def.type().equals(dev.strata.core.internal.linear.LinearTargetFactory.TYPE)) {
            return false;
        }
        FactoryEntry e = core.factories.best(def.type());
        try {
            return e != null && e.factory().backingArgument() != null;
        } catch (RuntimeException ex) {
            return false;
        }
    }

    private static String cacheDevice(MappedDevice d, CacheTarget c) {
        try {
            String v = d.definition.arguments().get(c.cacheDeviceArgument());
            if (v != null) {
                return v;
            }
        } catch (RuntimeException e) {
            // fall through: name the device itself
        }
        return "its cache device";
    }
}
