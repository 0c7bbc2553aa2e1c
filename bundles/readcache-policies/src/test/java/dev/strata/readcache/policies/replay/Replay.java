package dev.strata.readcache.policies.replay;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.ReadCachePolicy;
import dev.strata.readcache.policies.internal.LruPolicy;
import dev.strata.readcache.policies.internal.NHitPolicy;
import dev.strata.readcache.policies.internal.WTinyLfuPolicy;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.IntFunction;
import java.util.function.Supplier;

/**
 * Trace replay, the way read-cache policies are compared (run by
 * {@code itests/bench/readcache/replay.sh}):
 * {@code Replay TRACE --sizes N[,N…] [--policy P[,P…]]} prints {@code POLICY SIZE HIT%} per
 * policy and size. A size is a number of keys, or {@code X%} of the trace's distinct keys. A
 * policy is a shipped one by its service name ({@code wtinylfu}, {@code nhit}, {@code lru}: the
 * bundle's own classes), optionally with tunables ({@code wtinylfu:window=0:climb=false}), or a
 * reference of this bench: {@code ref-lru} (exact LRU) or {@code arc} (ARC, FAST '03).
 */
public final class Replay {
    /** The shipped policies, by the service name their components register. */
    static final Map<String, Supplier<ReadCachePolicy>> SHIPPED = new LinkedHashMap<>();
    /** The reference policies of the bench. */
    static final Map<String, IntFunction<Simulator>> REFERENCE = new LinkedHashMap<>();

    static {
        SHIPPED.put("wtinylfu", WTinyLfuPolicy::new);
        SHIPPED.put("nhit", NHitPolicy::new);
        SHIPPED.put("lru", LruPolicy::new);
        REFERENCE.put("ref-lru", ExactLru::new);
        REFERENCE.put("arc", Arc::new);
    }

    static final String USAGE = "usage: replay.sh TRACE --sizes N[,N…] [--policy P[,P…]]  (N: keys, or X% of the"
            + " trace's distinct keys; P: " + String.join(", ", names()) + ", shipped ones with :key=value tunables)";

    private Replay() {
    }

    private static List<String> names() {
        List<String> n = new ArrayList<>(REFERENCE.keySet());
        n.addAll(SHIPPED.keySet());
        return n;
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs the replay; returns the exit status (0, or 2 after one line on {@code err}). */
    static int run(String[] args, PrintStream out, PrintStream err) {
        String trace = null;
        String sizes = null;
        String policies = String.join(",", names());
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if ((a.equals("--sizes") || a.equals("--policy")) && i + 1 < args.length) {
                if (a.equals("--sizes")) {
                    sizes = args[++i];
                } else {
                    policies = args[++i];
                }
            } else if (a.startsWith("--sizes=")) {
                sizes = a.substring(8);
            } else if (a.startsWith("--policy=")) {
                policies = a.substring(9);
            } else if (!a.startsWith("--") && trace == null) {
                trace = a;
            } else {
                err.println("replay: unexpected argument '" + a + "'; " + USAGE);
                return 2;
            }
        }
        if (trace == null || sizes == null) {
            err.println("replay: " + (trace == null ? "no trace given" : "no --sizes given") + "; " + USAGE);
            return 2;
        }
        try {
            List<Spec> specs = new ArrayList<>();
            for (String p : policies.split(",")) {
                specs.add(Spec.parse(p.trim()));
            }
            String[] sizeArgs = sizes.split(",");
            for (String s : sizeArgs) { // every size checked before the trace is read
                s = s.trim();
                if (s.endsWith("%")) {
                    percentOf(s, 1);
                } else {
                    positive(s);
                }
            }
            Trace t = Trace.read(Path.of(trace));
            int distinct = -1;
            List<Integer> ns = new ArrayList<>();
            for (String s : sizeArgs) {
                s = s.trim();
                if (s.endsWith("%")) {
                    if (distinct < 0) {
                        distinct = t.distinctKeys();
                    }
                    ns.add(percentOf(s, distinct));
                } else {
                    ns.add(positive(s));
                }
            }
            err.printf(Locale.ROOT, "replay: %s: %d requests, %d keys accessed%s%n", trace, t.requests(), t.keys(),
                    distinct < 0 ? "" : ", " + distinct + " distinct");
            for (Spec spec : specs) {
                for (int n : ns) {
                    long hits = t.replay(spec.simulator(n));
                    out.printf(Locale.ROOT, "%s %d %.2f%n", spec.text, n, 100.0 * hits / t.keys());
                    out.flush();
                }
            }
            return 0;
        } catch (Trace.BadTraceException e) {
            err.println("replay: " + e.getMessage());
        } catch (InvalidArgumentException e) {
            err.println("replay: " + e.getMessage());
        }
        return 2;
    }

    private static int positive(String s) {
        try {
            int n = Integer.parseInt(s);
            if (n >= 1) {
                return n;
            }
        } catch (NumberFormatException e) {
            // fall through to the one-line error
        }
        throw new InvalidArgumentException("size '" + s + "' is not a positive number of keys or a percentage (e.g. 1000 or 2%)");
    }

    private static int percentOf(String s, int distinct) {
        double pct;
        try {
            pct = Double.parseDouble(s.substring(0, s.length() - 1));
        } catch (NumberFormatException e) {
            pct = -1;
        }
        if (!(pct > 0 && pct <= 1000)) {
            throw new InvalidArgumentException("size '" + s + "' is not a percentage above 0 (e.g. 2%)");
        }
        return (int) Math.max(1, Math.round(distinct * pct / 100));
    }

    /** A policy named on the command line, with its tunables. */
    record Spec(String text, String name, Map<String, String> tunables) {
        static Spec parse(String text) {
            String[] parts = text.split(":");
            String name = parts[0];
            Map<String, String> tunables = new LinkedHashMap<>();
            for (int i = 1; i < parts.length; i++) {
                int eq = parts[i].indexOf('=');
                if (eq <= 0) {
                    throw new InvalidArgumentException("policy '" + text + "': '" + parts[i] + "' is not key=value");
                }
                tunables.put(parts[i].substring(0, eq), parts[i].substring(eq + 1));
            }
            if (!SHIPPED.containsKey(name) && !REFERENCE.containsKey(name)) {
                throw new InvalidArgumentException("unknown policy '" + name + "'; known: " + String.join(", ", names()));
            }
            if (REFERENCE.containsKey(name) && !tunables.isEmpty()) {
                throw new InvalidArgumentException("policy '" + name + "' has no tunables");
            }
            Spec spec = new Spec(text, name, tunables);
            spec.simulator(1); // a bad tunable fails here, before the trace is read
            return spec;
        }

        Simulator simulator(int size) {
            IntFunction<Simulator> ref = REFERENCE.get(name);
            return ref != null ? ref.apply(size) : new PolicyCache(SHIPPED.get(name).get(), size, tunables);
        }
    }
}
