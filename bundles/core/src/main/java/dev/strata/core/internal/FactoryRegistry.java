package dev.strata.core.internal;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import dev.strata.api.DeviceManager.TargetType;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.TargetFactory;

/**
 * The registered {@link TargetFactory} services by type. Several factories of one type may be
 * registered (a bundle update registers the new one before the old one goes); the best one
 * (highest ranking, then lowest service id) builds new targets. Guarded by its own monitor,
 * which is never held while anything else is locked or called.
 */
final class FactoryRegistry {
    private final Map<String, List<FactoryEntry>> byType = new HashMap<>();

    synchronized void add(FactoryEntry entry) {
        byType.computeIfAbsent(entry.type(), t -> new ArrayList<>()).add(entry);
    }

    /** Removes {@code entry}; false if it was not registered. */
    synchronized boolean remove(FactoryEntry entry) {
        List<FactoryEntry> list = byType.get(entry.type());
        if (list == null || !list.remove(entry)) {
            return false;
        }
        if (list.isEmpty()) {
            byType.remove(entry.type());
        }
        return true;
    }

    /** The entry of a registered factory service object, or null. */
    synchronized FactoryEntry find(TargetFactory factory) {
        for (List<FactoryEntry> list : byType.values()) {
            for (FactoryEntry e : list) {
                if (e.factory() == factory) {
                    return e;
                }
            }
        }
        return null;
    }

    synchronized FactoryEntry best(String type) {
        FactoryEntry best = null;
        for (FactoryEntry e : byType.getOrDefault(type, List.of())) {
            if (e.betterThan(best)) {
                best = e;
            }
        }
        return best;
    }

    /** The best factory of {@code type}, or a one-line refusal naming the available types. */
    FactoryEntry require(String type) {
        DeviceDefinition.checkType(type);
        FactoryEntry e = best(type);
        if (e == null) {
            List<String> types = types();
            throw new InvalidArgumentException("unknown target type '" + type + "'; available: "
                    + (types.isEmpty() ? "none (no target bundle is started)" : String.join(", ", types)));
        }
        return e;
    }

    synchronized boolean registered(FactoryEntry e) {
        return byType.getOrDefault(e.type(), List.of()).contains(e);
    }

    synchronized List<String> types() {
        return new ArrayList<>(new TreeSet<>(byType.keySet()));
    }

    /** What {@code dev:targets} lists: the best factory of every type. */
    List<TargetType> targetTypes() {
        List<TargetType> out = new ArrayList<>();
        for (String type : types()) {
            FactoryEntry e = best(type);
            if (e == null) {
                continue;
            }
            String usage;
            try {
                usage = e.factory().usage();
            } catch (RuntimeException ex) {
                usage = "?";
            }
            out.add(new TargetType(e.type(), usage, e.bundle(), e.version()));
        }
        return out;
    }

    /** How the target holds each of {@code lowers}: the factory's claims, shared where it names none. */
    static Map<String, dev.strata.api.Claim> claims(FactoryEntry e, Map<String, String> args, List<String> lowers) {
        Map<String, dev.strata.api.Claim> said;
        try {
            said = e.factory().claims(args);
        } catch (InvalidArgumentException ex) {
            throw ex;
        } catch (RuntimeException ex) {
            throw new InvalidArgumentException(e.type() + ": arguments rejected: " + ex.getMessage());
        }
        Map<String, dev.strata.api.Claim> m = new java.util.LinkedHashMap<>();
        for (String l : lowers) {
            dev.strata.api.Claim c = said == null ? null : said.get(l);
            m.put(l, c == null ? dev.strata.api.Claim.SHARED : c);
        }
        return m;
    }

    /**
     * The factory's {@link TargetFactory#check} of {@code args} (what its create would refuse for the
     * arguments alone, no device touched); a factory's failure as one line.
     */
    static void check(FactoryEntry e, Map<String, String> args) {
        try {
            e.factory().check(java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(args)));
        } catch (InvalidArgumentException ex) {
            throw ex;
        } catch (RuntimeException ex) {
            throw new InvalidArgumentException(e.type() + ": arguments rejected: " + ex.getMessage());
        }
    }

    /** The lower devices the arguments name, without duplicates; a factory's failure as one line. */
    static List<String> lowerDevices(FactoryEntry e, Map<String, String> args) {
        List<String> lowers;
        try {
            lowers = e.factory().lowerDevices(args);
        } catch (InvalidArgumentException ex) {
            throw ex;
        } catch (RuntimeException ex) {
            throw new InvalidArgumentException(e.type() + ": arguments rejected: " + ex.getMessage());
        }
        return lowers == null ? List.of() : List.copyOf(new LinkedHashSet<>(lowers));
    }
}
