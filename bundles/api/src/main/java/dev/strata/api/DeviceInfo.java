package dev.strata.api;

import java.util.List;
import java.util.Map;

/**
 * A snapshot of a mapped device.
 *
 * @param name         the device's name
 * @param type         its target type
 * @param arguments    the target arguments (its table line)
 * @param size         size in bytes (0 while the target is not built)
 * @param blockSize    logical block size
 * @param state        the gate's state
 * @param lower        names of the devices it is stacked on
 * @param holders      names of what uses it: devices stacked on it and exports (e.g. {@code nbd:name})
 * @param holderClaims how each holder holds it (exports and other handles: {@link Claim#SHARED})
 * @param id           the device's identity (a UUID stamped at creation, kept across reload and
 *                     restart), or {@code null} where there is none
 * @param persistent   whether the definition is stored (false: a transient device, gone after a restart)
 * @param waitingFor   why the device has no target or what went wrong last (a missing target type,
 *                     a missing lower device, the last build error), or {@code null}
 */
public record DeviceInfo(String name, String type, Map<String, String> arguments, long size, int blockSize,
        DeviceState state, List<String> lower, List<String> holders, Map<String, Claim> holderClaims, String id,
        boolean persistent, String waitingFor) {

    /** A snapshot without claims, identity or reason: every holder shared, persistent. */
    public DeviceInfo(String name, String type, Map<String, String> arguments, long size, int blockSize,
            DeviceState state, List<String> lower, List<String> holders) {
        this(name, type, arguments, size, blockSize, state, lower, holders, sharedBy(holders), null, true, null);
    }

    private static Map<String, Claim> sharedBy(List<String> holders) {
        Map<String, Claim> m = new java.util.LinkedHashMap<>();
        for (String h : holders) {
            m.put(h, Claim.SHARED);
        }
        return java.util.Collections.unmodifiableMap(m);
    }
}
