package dev.strata.core.internal;

import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;
import dev.strata.core.internal.text.Text;

/**
 * What each device maps of its lower devices, so that a reload cannot shrink a device under one
 * that uses more of it: every target's size is fixed when it is built (a linear window's length, a
 * cache's backing size, a cache's layout on its cache device), and a smaller device under it would
 * fail its requests at the end and keep advertising the old size. A target is taken to map each
 * lower device as large as
 * it was when the target was built, recorded here (weakly: a closed target leaves nothing behind),
 * or less where core can tell ({@link #used}).
 */
final class LowerSizes {
    private final Map<Target, Map<String, Long>> atBuild = Collections.synchronizedMap(new WeakHashMap<>());

    /** {@code t} was built seeing these sizes of its lower devices. */
    void built(Target t, Map<String, Long> sizes) {
        atBuild.put(t, Map.copyOf(sizes));
    }

    /**
     * Bytes of {@code lower} that {@code u}'s target {@code t} maps, from offset 0; -1: unknown. A
     * {@code linear} window maps up to its end (offset + length); a cache maps of its cache device
     * at most the part it was given ({@code cache_size}: the device it holds for {@code cache:check});
     * every target maps at most each lower device as large as it was when the target was built.
     */
    long used(MappedDevice u, Target t, String lower) {
        Map<String, Long> m = atBuild.get(t);
        Long seen = m == null ? null : m.get(lower);
        long used = seen == null ? -1 : seen;
        try {
            if (u.definition.type().equals(dev.strata.core.internal.linear.LinearTargetFactory.TYPE)) {
                String offset = u.definition.arguments().get("offset");
                return (offset == null ? 0 : dev.strata.api.TargetArguments.parseSize("offset", offset)) + t.size();
            }
            if (t instanceof dev.strata.api.CacheTarget c && lower.equals(u.definition.arguments().get(c.cacheDeviceArgument()))) {
                dev.strata.api.BlockDevice held = c.cacheDeviceForCheck();
                if (held != null) {
                    used = used < 0 ? held.size() : Math.min(used, held.size());
                }
            }
        } catch (RuntimeException e) {
            // the size at build stands
        }
        return used;
    }

    /**
     * Refuses a new target of {@code x} of {@code newSize} bytes when a device stacked on {@code x}
     * maps more of it.
     *
     * @throws InvalidArgumentException naming the user and both sizes
     */
    void requireFits(Core core, MappedDevice x, long newSize) {
        for (MappedDevice u : core.graph.all()) {
            Target t = u.target;
            if (u == x || u.removed || t == null || !u.lowers.contains(x.name)) {
                continue;
            }
            long used = used(u, t, x.name);
            if (used > newSize) {
                throw new InvalidArgumentException(x.name + " would be " + size(newSize) + ", smaller than the "
                        + size(used) + " that " + u.name + " (" + DeviceGraph.role(u, x.name) + ") maps of it; "
                        + u.name + "'s size was fixed when it was built: give " + x.name + " at least "
                        + String.format(java.util.Locale.ROOT, "%,d bytes", used) + ", or shrink or remove " + u.name
                        + " first");
            }
        }
    }

    /** {@code 1.0 GiB (1,073,741,824 bytes)}: the unit to read, the bytes to tell 1 GiB from 1 GiB - 8 KiB. */
    private static String size(long bytes) {
        return Text.size(bytes) + String.format(java.util.Locale.ROOT, " (%,d bytes)", bytes);
    }
}
