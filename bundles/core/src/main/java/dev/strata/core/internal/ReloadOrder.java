package dev.strata.core.internal;

import java.io.IOException;
import java.util.List;

import dev.strata.api.Target;

/**
 * The order in which a reload swaps targets, one strategy per case, chosen by
 * {@link Reloader} from a map (see the README, "Reload"):
 * <ul>
 * <li>{@link #FIRST_BUILD}: the device has no target (it waits): build, persist, attach.</li>
 * <li>{@link #DISJOINT}: both targets have lower devices and none in common: build the new
 * target while the device runs; then close the gate, drain, suspend the old, swap, open, close
 * the old. A failed build changes nothing.</li>
 * <li>{@link #SHARED}: a common lower device, or a leaf target on either side (whose files the
 * manager cannot see): close the gate, drain, <em>close</em> the old (durable, released), then
 * build the new; if that fails, the old target is reopened from its on-disk state with its own
 * arguments and the device resumes unchanged.</li>
 * </ul>
 */
enum ReloadOrder {
    FIRST_BUILD, DISJOINT, SHARED;

    static ReloadOrder of(Target old, List<String> oldLowers, List<String> newLowers) {
        if (old == null) {
            return FIRST_BUILD;
        }
        boolean shared = oldLowers.isEmpty() || newLowers.isEmpty()
                || oldLowers.stream().anyMatch(newLowers::contains);
        return shared ? SHARED : DISJOINT;
    }

    /** One way of swapping a device's target; runs under the device's {@code op} lock. */
    interface Strategy {
        void swap(Swap s) throws IOException;
    }

    /**
     * What a strategy swaps: the device, its old and new definitions, targets and lower devices;
     * {@code dropOldCopies}: the old target is a clean cache the new one does not take over ({@link StaleCopies});
     * {@code above}: the caches above the device, paused, whose copies go once the new target is built.
     */
    record Swap(MappedDevice device, Target old, DeviceDefinition oldDef, List<String> oldLowers,
            FactoryEntry entry, DeviceDefinition def, List<String> newLowers, boolean persist, boolean dropOldCopies,
            UnderCaches above) {
    }
}
