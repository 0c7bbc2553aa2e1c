package dev.strata.cache.commands.internal;

import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import dev.strata.api.CacheTarget;
import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager;
import dev.strata.api.DeviceState;
import dev.strata.api.InvalidArgumentException;

/**
 * The refusal of a drain while a device under the cache is suspended ({@code dev:suspend}): its
 * gate holds every write back (and the cache device's reads) until {@code dev:resume} or the gate
 * timeout, so a writeback would print nothing for minutes and then fail. Asked of the manager's
 * {@link DeviceInfo} only: the device's {@link DeviceInfo#state() state} and its
 * {@link DeviceInfo#lower() lower devices}, followed all the way down.
 *
 * <p>{@link DeviceState#SUSPENDED} is also the state of a device in the short pause of a reload
 * or swap; such a pause ends within milliseconds, so a device still suspended after
 * {@link #SETTLE_MILLIS} is taken as suspended by the user.
 */
final class SuspendedBelow {
    /** How long a device found suspended is watched before the refusal (a reload's pause ends sooner). */
    static final long SETTLE_MILLIS = 1000;
    private static final long POLL_MILLIS = 50;

    private SuspendedBelow() {
    }

    /**
     * Throws the one-line refusal when {@code device} or a device below it is suspended, e.g.
     * {@code pdly is suspended (under pwc's backing device); dev:resume pdly first}. Changes nothing.
     */
    static void refuse(DeviceManager manager, String device, CacheTarget t) throws InterruptedException {
        String found = find(manager, device, t);
        long deadline = System.nanoTime() + SETTLE_MILLIS * 1_000_000L;
        while (found != null && System.nanoTime() - deadline < 0) {
            Thread.sleep(POLL_MILLIS);
            found = find(manager, device, t);
        }
        if (found != null) {
            throw new InvalidArgumentException(found);
        }
    }

    /** The refusal's text, or null when nothing under the cache is suspended. */
    static String find(DeviceManager manager, String device, CacheTarget t) {
        Optional<DeviceInfo> info = manager.info(device);
        if (info.isEmpty()) {
            return null; // the call that follows says so
        }
        if (info.get().state() == DeviceState.SUSPENDED) {
            return device + " is suspended; dev:resume " + device + " first";
        }
        Map<String, String> args = info.get().arguments();
        Set<String> seen = new HashSet<>();
        seen.add(device);
        for (String lower : info.get().lower()) {
            String role = role(lower, args, t);
            String hit = walk(manager, lower, device + "'s " + role, true, seen);
            if (hit != null) {
                return hit;
            }
        }
        return null;
    }

    private static String role(String lower, Map<String, String> args, CacheTarget t) {
        if (lower.equals(args.get(t.authoritativeDeviceArgument()))) {
            return "backing device";
        }
        if (lower.equals(args.get(t.cacheDeviceArgument()))) {
            return "cache device";
        }
        return "lower device";
    }

    private static String walk(DeviceManager manager, String name, String what, boolean direct, Set<String> seen) {
        if (!seen.add(name)) {
            return null;
        }
        Optional<DeviceInfo> info = manager.info(name);
        if (info.isEmpty()) {
            return null;
        }
        if (info.get().state() == DeviceState.SUSPENDED) {
            return name + " is suspended (" + (direct ? what : "under " + what) + "); dev:resume " + name + " first";
        }
        for (String lower : info.get().lower()) {
            String hit = walk(manager, lower, what, false, seen);
            if (hit != null) {
                return hit;
            }
        }
        return null;
    }
}
