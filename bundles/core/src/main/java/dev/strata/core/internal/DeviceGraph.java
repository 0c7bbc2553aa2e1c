package dev.strata.core.internal;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import dev.strata.api.Claim;
import dev.strata.api.InvalidArgumentException;

/**
 * The devices by name and the dependency graph between them: who is stacked on whom, who uses a
 * device, in which order devices are closed (top-down) and built (bottom-up).
 * <p>
 * Every method runs under {@link #lock} (the manager's {@code structure} lock, see
 * {@link DeviceManagerImpl}); methods named {@code …Locked} expect the caller to hold it already.
 * Nothing here blocks, builds, closes or does I/O.
 */
final class DeviceGraph {
    /** The {@code structure} lock. */
    final Object lock = new Object();
    private final Map<String, MappedDevice> devices = new TreeMap<>();

    MappedDevice get(String name) {
        synchronized (lock) {
            return devices.get(name);
        }
    }

    /** The device, if it exists and is neither being created nor removed. */
    MappedDevice require(String name) {
        MappedDevice d = get(name);
        if (d == null || d.creating || d.removed) {
            throw unknownDevice(name);
        }
        return d;
    }

    static InvalidArgumentException unknownDevice(String name) {
        return new InvalidArgumentException("no device named '" + name + "'; see dev:list");
    }

    boolean containsLocked(String name) {
        return devices.containsKey(name);
    }

    MappedDevice getLocked(String name) {
        return devices.get(name);
    }

    void putLocked(MappedDevice d) {
        devices.put(d.name, d);
    }

    void remove(MappedDevice d) {
        synchronized (lock) {
            devices.remove(d.name, d);
        }
    }

    void clear() {
        synchronized (lock) {
            devices.clear();
        }
    }

    List<MappedDevice> all() {
        synchronized (lock) {
            return new ArrayList<>(devices.values());
        }
    }

    /** Devices that exist (not being created or removed) and have no target. */
    List<MappedDevice> waiting() {
        List<MappedDevice> out = new ArrayList<>();
        synchronized (lock) {
            for (MappedDevice d : devices.values()) {
                if (d.target == null && !d.removed && !d.creating) {
                    out.add(d);
                }
            }
        }
        return out;
    }

    /** Every device, a device above before the ones below it. */
    List<MappedDevice> topDown() {
        synchronized (lock) {
            return topDownLocked(new ArrayList<>(devices.values()));
        }
    }

    List<MappedDevice> topDownLocked(List<MappedDevice> some) {
        Map<String, Integer> heights = heightsLocked();
        some.sort(Comparator.comparing((MappedDevice d) -> heights.getOrDefault(d.name, 0)).reversed());
        return some;
    }

    /** Every existing device, lower devices first, then by name. */
    List<MappedDevice> bottomUp() {
        synchronized (lock) {
            List<MappedDevice> all = new ArrayList<>(devices.values());
            all.removeIf(d -> d.creating || d.removed);
            Map<String, Integer> heights = heightsLocked();
            all.sort(Comparator.comparing((MappedDevice d) -> heights.getOrDefault(d.name, 0))
                    .thenComparing(d -> d.name));
            return all;
        }
    }

    void setLowers(MappedDevice d, List<String> lowers) {
        synchronized (lock) {
            d.lowers = lowers;
        }
    }

    /** Refuses a lower device that does not exist or has no target. */
    void requireReadyLowerLocked(String lower, String upper) {
        MappedDevice l = devices.get(lower);
        if (l == null || l.removed || l.creating) {
            throw new InvalidArgumentException("no device named '" + lower + "' to stack '" + upper
                    + "' on; create it first (see dev:list)");
        }
        if (l.target == null) {
            throw new InvalidArgumentException("device '" + lower + "' is waiting for " + l.waitingFor
                    + "; stack on it once it is active");
        }
    }

    /** Whether {@code upper} is stacked, directly or not, on {@code lower}. */
    boolean dependsOnLocked(String upper, String lower) {
        Set<String> seen = new HashSet<>();
        List<String> todo = new ArrayList<>(List.of(upper));
        while (!todo.isEmpty()) {
            String n = todo.remove(todo.size() - 1);
            if (!seen.add(n)) {
                continue;
            }
            MappedDevice d = devices.get(n);
            if (d != null) {
                for (String l : d.lowers) {
                    if (l.equals(lower)) {
                        return true;
                    }
                    todo.add(l);
                }
            }
        }
        return false;
    }

    /** Height of every device: 0 for a leaf, 1 + the highest lower device otherwise. */
    private Map<String, Integer> heightsLocked() {
        Map<String, Integer> h = new HashMap<>();
        for (String name : devices.keySet()) {
            height(name, h, new HashSet<>());
        }
        return h;
    }

    private int height(String name, Map<String, Integer> memo, Set<String> path) {
        Integer known = memo.get(name);
        if (known != null) {
            return known;
        }
        MappedDevice d = devices.get(name);
        if (d == null || !path.add(name)) {
            return 0;
        }
        int h = 0;
        for (String l : d.lowers) {
            h = Math.max(h, 1 + height(l, memo, path));
        }
        path.remove(name);
        memo.put(name, h);
        return h;
    }

    /** What uses {@code d}: devices stacked on it, then the holders of open handles. */
    List<String> holders(MappedDevice d) {
        synchronized (lock) {
            return holdersLocked(d);
        }
    }

    List<String> holdersLocked(MappedDevice d) {
        List<String> out = new ArrayList<>();
        for (MappedDevice u : devices.values()) {
            if (u != d && !u.removed && u.lowers.contains(d.name)) {
                out.add(u.name);
            }
        }
        for (Handle h : d.handles) {
            if (!out.contains(h.holder)) {
                out.add(h.holder);
            }
        }
        return out;
    }

    // ---- claims: who holds a device, how (see Claim)

    /**
     * Refuses a claim of {@code holder} that conflicts with one held by another device or an open
     * handle: any claim on a device held exclusively, an exclusive claim on a device someone else
     * holds. One line naming the holder and its role, e.g. {@code cache0 is held exclusively by wb0
     * (writeboost cache device)}. The holder's own claims never conflict (a reload keeps them).
     */
    void checkClaimsLocked(String holder, Map<String, Claim> wanted) {
        for (Map.Entry<String, Claim> w : wanted.entrySet()) {
            String lower = w.getKey();
            for (MappedDevice u : devices.values()) {
                if (u.name.equals(holder) || u.removed) {
                    continue;
                }
                Claim held = u.claims.get(lower);
                if (held == Claim.EXCLUSIVE) {
                    // a cache device holds the cache's own data: nothing is gained by stacking on the
                    // cache, and a second cache on it would overwrite the first one's (the fix is another device)
                    String advice = "cache".equals(argumentNaming(u, lower)) ? "use another device, or remove " + u.name
                            + " first" : "stack on " + u.name + " instead, or remove it first";
                    throw new InvalidArgumentException(lower + " is held exclusively by " + u.name + " (" + role(u, lower)
                            + "); " + advice);
                }
                if (held == Claim.SHARED && w.getValue() == Claim.EXCLUSIVE) {
                    throw new InvalidArgumentException(lower + " is in use by " + u.name + " (" + role(u, lower)
                            + ", shared); " + holder + " needs it exclusively: remove " + u.name + " first");
                }
            }
            MappedDevice l = devices.get(lower);
            if (w.getValue() == Claim.EXCLUSIVE && l != null && !l.handles.isEmpty()) {
                throw new InvalidArgumentException(lower + " is in use by " + l.handles.iterator().next().holder
                        + "; " + holder + " needs it exclusively: close that first (e.g. nbd:unexport)");
            }
        }
    }

    /** Records the claims {@code d} holds now. */
    void setClaims(MappedDevice d, Map<String, Claim> claims) {
        synchronized (lock) {
            d.claims = Map.copyOf(claims);
        }
    }

    /** The stronger of two claims sets (held while a reload is between them). */
    static Map<String, Claim> strongest(Map<String, Claim> a, Map<String, Claim> b) {
        Map<String, Claim> m = new java.util.LinkedHashMap<>(a);
        b.forEach((k, v) -> m.merge(k, v, (x, y) -> x == Claim.EXCLUSIVE || y == Claim.EXCLUSIVE ? Claim.EXCLUSIVE
                : Claim.SHARED));
        return m;
    }

    /** The device holding {@code d} exclusively, described with its role, or null. */
    String exclusiveHolderLocked(MappedDevice d) {
        for (MappedDevice u : devices.values()) {
            if (u != d && !u.removed && u.claims.get(d.name) == Claim.EXCLUSIVE) {
                return u.name + " (" + role(u, d.name) + ")";
            }
        }
        return null;
    }

    /** How every holder of {@code d} holds it: devices by their granted claim, handles shared. */
    Map<String, Claim> holderClaimsLocked(MappedDevice d) {
        Map<String, Claim> m = new java.util.LinkedHashMap<>();
        for (String h : holdersLocked(d)) {
            MappedDevice u = devices.get(h);
            if (u == null || u == d) {
                m.put(h, Claim.SHARED); // an open handle (an export, a tool)
            } else if (u.claims.get(d.name) != null) {
                m.put(h, u.claims.get(d.name));
            } // else: a device waiting to claim it (not granted yet): listed without a claim
        }
        return m;
    }

    /**
     * What {@code lower} is to {@code u}, from the argument that names it: {@code writeboost cache
     * device} for {@code cache=cache0}, {@code linear device} for {@code device=disk0}.
     */
    static String role(MappedDevice u, String lower) {
        String type = u.definition.type();
        String key = argumentNaming(u, lower);
        return key == null || key.equals("device") ? type + " device" : type + " " + key + " device";
    }

    /** The argument of {@code u}'s definition that names {@code lower} (e.g. {@code cache}), or null. */
    private static String argumentNaming(MappedDevice u, String lower) {
        for (Map.Entry<String, String> a : u.definition.arguments().entrySet()) {
            for (String v : a.getValue().split(",")) {
                if (v.trim().equals(lower)) {
                    return a.getKey();
                }
            }
        }
        return null;
    }

    static List<String> union(List<String> a, List<String> b) {
        List<String> out = new ArrayList<>(a);
        for (String s : b) {
            if (!out.contains(s)) {
                out.add(s);
            }
        }
        return List.copyOf(out);
    }
}
