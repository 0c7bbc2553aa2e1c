package dev.strata.cache.readcache.internal;

import dev.strata.api.Claim;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.ReadCachePolicy;
import dev.strata.api.Target;
import dev.strata.api.TargetArguments;
import dev.strata.api.TargetContext;
import dev.strata.api.TargetFactory;
import dev.strata.cache.readcache.internal.io.Opener;
import dev.strata.cache.support.device.CacheWindow;
import dev.strata.cache.readcache.internal.io.PolicySource;
import dev.strata.cache.readcache.internal.io.ReadCache;
import dev.strata.cache.readcache.internal.io.Tunables;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

/**
 * {@code readcache origin=DEV cache=DEV [policy=NAME] [block_size=4096] [sequential_cutoff=4M]
 * [write_promote=off] [format=true] [policy tunable=value…]}. Read-cache policies are bound dynamically by name: a
 * cache whose policy service goes away pauses promotion and binds again when one comes back.
 */
@Component(service = TargetFactory.class, property = TargetFactory.TYPE + "=readcache")
public final class ReadcacheFactory implements TargetFactory, PolicySource {
    static final Set<String> OWN = Set.of("origin", "cache", "policy", "block_size", "sequential_cutoff", "write_promote",
            "readahead", "format", CacheWindow.KEY);

    private final Map<String, ReadCachePolicy> policies = new ConcurrentHashMap<>();
    private final Set<ReadCache> live = ConcurrentHashMap.newKeySet();

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC, service = ReadCachePolicy.class)
    void addPolicy(ReadCachePolicy p, Map<String, Object> props) {
        String n = name(props);
        if (n == null) {
            return;
        }
        policies.put(n, p);
        for (ReadCache c : live) {
            try {
                c.policyArrived(n, p);
            } catch (IOException | RuntimeException e) {
                // the cache stays paused; its status says so
            }
        }
    }

    void removePolicy(ReadCachePolicy p, Map<String, Object> props) {
        String n = name(props);
        if (n != null) {
            policies.remove(n, p);
        }
        for (ReadCache c : live) {
            try {
                c.policyGone(p);
            } catch (IOException | RuntimeException e) {
                // bind(null) cannot fail but by interruption; the instance is dropped regardless at close
            }
        }
    }

    private static String name(Map<String, Object> props) {
        Object n = props.get(ReadCachePolicy.NAME);
        return n == null ? null : n.toString().toLowerCase(Locale.ROOT);
    }

    @Override
    public ReadCachePolicy find(String name) {
        return name == null ? null : policies.get(name.toLowerCase(Locale.ROOT));
    }

    @Override
    public String installed() {
        return policies.isEmpty() ? "none" : String.join(", ", new TreeSet<>(policies.keySet()));
    }

    @Override
    public String usage() {
        return "readcache origin=DEV cache=DEV [policy=" + ReadCachePolicy.DEFAULT + "] [block_size=4096] "
                + "[sequential_cutoff=4M] [write_promote=off] [format=true] [cache_size=SIZE] [policy tunable=value…]";
    }

    @Override
    public List<String> lowerDevices(Map<String, String> arguments) {
        TargetArguments a = TargetArguments.of("readcache", arguments, allKeys(arguments));
        if (!a.has("origin") && a.has("backing")) {
            // writeboost's and writecache's word; "missing argument 'origin=…'" alone left the user guessing
            throw new InvalidArgumentException("readcache: its backing device is named origin=, not backing=; use origin="
                    + arguments.get("backing"));
        }
        String origin = a.string("origin");
        String cache = a.string("cache");
        if (origin.equals(cache)) {
            throw new InvalidArgumentException("readcache: origin and cache are the same device ('" + origin + "'); use two devices");
        }
        if (a.has(CacheWindow.KEY)) {
            CacheWindow.parse("readcache", a.string(CacheWindow.KEY));
        }
        return List.of(origin, cache);
    }

    /** Keys other than the readcache's own are the policy's tunables, checked against the policy at create. */
    private static Set<String> allKeys(Map<String, String> arguments) {
        return arguments.keySet();
    }

    /** A read cache owns both devices' contents: its slots and metadata, and the origin it mirrors. */
    @Override
    public Map<String, Claim> claims(Map<String, String> arguments) {
        List<String> lower = lowerDevices(arguments);
        return Map.of(lower.get(0), Claim.EXCLUSIVE, lower.get(1), Claim.EXCLUSIVE);
    }

    /**
     * A readcache reopened over the same origin and cache devices (without {@code format=true}) keeps
     * every cached block, whatever its policy: only the policy's hints are rebuilt.
     */
    @Override
    public boolean adopts(String oldType, Map<String, String> oldArguments, Map<String, String> newArguments) {
        boolean adopts = "readcache".equals(oldType) && lowerDevices(oldArguments).equals(lowerDevices(newArguments))
                && !TargetArguments.of("readcache", newArguments, newArguments.keySet()).bool("format", false);
        // A switch or reload to another policy is a user's request, as cache:set policy is: a name
        // not installed is refused as that is, not taken with promotion paused and nothing said.
        // (A restart does not come here: a stored policy whose bundle is late still binds later.)
        String wanted = policyOf(newArguments);
        if (adopts && !wanted.equals(policyOf(oldArguments)) && find(wanted) == null) {
            throw new InvalidArgumentException("readcache: no policy '" + wanted + "' is installed; installed: " + installed());
        }
        return adopts;
    }

    private static String policyOf(Map<String, String> arguments) {
        return arguments.getOrDefault("policy", ReadCachePolicy.DEFAULT).toLowerCase(Locale.ROOT);
    }

    /**
     * {@code policy}, {@code sequential_cutoff} and the policy's tunables are arguments too, so a
     * persisted one is in force before the first promotion; {@code mode} is not an argument (it is
     * re-applied by message), nor are the device and format arguments (never persisted tunables).
     */
    @Override
    public boolean buildsWithTunable(String key) {
        return !NOT_AT_BUILD.contains(key);
    }

    static final Set<String> NOT_AT_BUILD = Set.of("origin", "cache", "block_size", "format", "mode");

    /** The device cached; cache:attach names it. */
    @Override
    public String backingArgument() {
        return "origin";
    }

    /**
     * What create refuses for the arguments alone (the same parsing, and the checks the opener makes
     * before it reads a device: block_size, an installed policy's tunables); no device touched.
     */
    @Override
    public void check(Map<String, String> arguments) {
        Opener.checkArguments(options(arguments));
    }

    @Override
    public Target create(TargetContext context) throws IOException {
        Map<String, String> args = context.arguments();
        List<String> lower = lowerDevices(args);
        Opener.Options o = options(args);
        o = Opener.withOriginId(o, context.lowerDeviceId(lower.get(0)));
        o = Opener.withOnRelease(o, live::remove);
        // cache_size=: the part of the cache device a format lays the cache out in (cache:resize)
        ReadCache rc = Opener.open(context.deviceName(), context.lowerDevice(lower.get(0)),
                CacheWindow.of("readcache", args, context.lowerDevice(lower.get(1))), o);
        live.add(rc);
        // a policy that registered between the open and now
        String policy = o.policy();
        ReadCachePolicy p = find(policy);
        if (p != null) {
            rc.policyArrived(policy, p);
        }
        return rc;
    }

    /** Every argument create reads, parsed and checked, as the opener's options (no device yet). */
    private Opener.Options options(Map<String, String> args) {
        lowerDevices(args);
        TargetArguments a = TargetArguments.of("readcache", args, args.keySet());
        Map<String, String> policyTunables = new LinkedHashMap<>();
        args.forEach((k, v) -> {
            if (!OWN.contains(k)) {
                policyTunables.put(k, v);
            }
        });
        String policy = a.string("policy", ReadCachePolicy.DEFAULT).trim().toLowerCase(Locale.ROOT);
        int bs = a.has("block_size") ? (int) a.size("block_size", 4096, 1 << 20) : 0;
        long cutoff = a.has("sequential_cutoff") ? Tunables.parseCutoff(a.string("sequential_cutoff"))
                : Tunables.DEFAULTS.sequentialCutoff();
        boolean format = a.bool("format", false);
        Opener.Options o = Opener.options(this);
        o = Opener.withPolicy(o, policy);
        o = Opener.withFormat(o, format);
        o = Opener.withBlockSize(o, bs);
        o = Opener.withTunables(o, cutoff, policyTunables);
        if (a.has("write_promote")) {
            o = Opener.withWritePromote(o, Tunables.parseWritePromote(a.string("write_promote")));
        }
        if (a.has("readahead")) {
            o = Opener.withReadahead(o, a.string("readahead"));
        }
        return o;
    }
}
