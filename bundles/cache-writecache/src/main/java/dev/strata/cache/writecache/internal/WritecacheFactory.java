package dev.strata.cache.writecache.internal;

import dev.strata.api.BlockDevice;
import dev.strata.api.Claim;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;
import dev.strata.api.TargetArguments;
import dev.strata.api.TargetContext;
import dev.strata.api.TargetFactory;
import dev.strata.api.WritebackController;
import dev.strata.cache.support.device.CacheWindow;
import dev.strata.cache.support.writeback.ControllerRegistry;
import dev.strata.cache.writecache.internal.io.Options;
import dev.strata.cache.writecache.internal.io.Tunables;
import dev.strata.cache.writecache.internal.recovery.Recovery;
import java.io.IOException;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

/**
 * {@code writecache backing=DEV cache=DEV [block_size=4096|512] [format=true] [tunable=value…]}:
 * builds (or reopens) a block cache with a sorted index.
 */
@Component(service = TargetFactory.class, property = TargetFactory.TYPE + "=writecache")
public final class WritecacheFactory implements TargetFactory {
    static final Set<String> ALLOWED;

    static {
        Set<String> s = new HashSet<>(Tunables.KEYS);
        s.add("backing");
        s.add("cache");
        s.add("format");
        s.add("block_size");
        s.add(CacheWindow.KEY);
        ALLOWED = Set.copyOf(s);
    }

    private final Options options;
    /**
     * The registered {@link WritebackController} services by name: every cache looks its
     * {@code writeback.controller} up here at each decision (dynamic and optional, so that the
     * bundle providing controllers can come, go and be updated under load; the built-in
     * modulator paces meanwhile).
     */
    private final ControllerRegistry controllers = new ControllerRegistry();

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            service = WritebackController.class)
    void addController(WritebackController c, Map<String, Object> props) {
        controllers.add(c, props);
    }

    void removeController(WritebackController c, Map<String, Object> props) {
        controllers.remove(c, props);
    }

    public WritecacheFactory() {
        this(Options.defaults());
    }

    /** For tests: a factory whose targets run with {@code options}. */
    public WritecacheFactory(Options options) {
        this.options = options;
    }

    @Override
    public String usage() {
        return "writecache backing=DEV cache=DEV [block_size=4096|512] [format=true] [cache_size=SIZE] [high_watermark=50] "
                + "[low_watermark=45] [writeback_batch=256] [autocommit_blocks=64] [autocommit_time=1000] [max_age=0] [cleaner=false] [pause_writeback=3000] "
                + "[writeback.controller=modulator] [writeback_threshold=70]";
    }

    @Override
    public List<String> lowerDevices(Map<String, String> arguments) {
        TargetArguments a = TargetArguments.of("writecache", arguments, ALLOWED);
        String backing = a.string("backing");
        String cache = a.string("cache");
        if (backing.equals(cache)) {
            throw new InvalidArgumentException("writecache: backing and cache are the same device ('" + backing
                    + "'); use two devices");
        }
        if (a.has(CacheWindow.KEY)) {
            CacheWindow.parse("writecache", a.string(CacheWindow.KEY));
        }
        return List.of(backing, cache);
    }

    /** A writecache owns both devices' contents: slots and metadata on the cache, the data behind them on the backing. */
    @Override
    public Map<String, Claim> claims(Map<String, String> arguments) {
        List<String> lower = lowerDevices(arguments);
        Map<String, Claim> m = new LinkedHashMap<>();
        m.put(lower.get(0), Claim.EXCLUSIVE);
        m.put(lower.get(1), Claim.EXCLUSIVE);
        return m;
    }

    /**
     * A writecache over the same backing and cache devices recovers the same slots, dirty blocks
     * included — unless it is told to format: that erases them, so the old one must be drained
     * first (a reload or switch that took a formatting writecache for an adopter lost dirty data).
     */
    @Override
    public boolean adopts(String oldType, Map<String, String> oldArguments, Map<String, String> newArguments) {
        return "writecache".equals(oldType) && lowerDevices(oldArguments).equals(lowerDevices(newArguments))
                && !TargetArguments.of("writecache", newArguments, ALLOWED).bool("format", false);
    }

    /** {@code block_size}, checked; 0 when absent (as formatted, 4096 for a new cache). */
    static int blockSize(TargetArguments a) {
        if (!a.has("block_size")) {
            return 0;
        }
        long bs = a.number("block_size", Long.MIN_VALUE, Long.MAX_VALUE); // any other number: the one line below
        if (bs != 512 && bs != 4096) {
            throw new InvalidArgumentException("writecache: block_size=" + bs + " is not supported; use 512 or 4096");
        }
        return (int) bs;
    }

    /** Every tunable is also an argument: a persisted one is in force before the writeback daemon starts. */
    @Override
    public boolean buildsWithTunable(String key) {
        return Tunables.KEYS.contains(key);
    }

    /** The device cached; cache:attach names it. */
    @Override
    public String backingArgument() {
        return "backing";
    }

    /** What create refuses for the arguments alone (the same parsing, no device touched). */
    @Override
    public void check(Map<String, String> arguments) {
        parse(arguments);
    }

    @Override
    public Target create(TargetContext context) throws IOException {
        Map<String, String> args = context.arguments();
        Parsed p = parse(args);
        List<String> lower = p.lower();
        BlockDevice backing = context.lowerDevice(lower.get(0));
        // cache_size=: the part of the cache device a format lays the cache out in (cache:resize)
        BlockDevice cache = CacheWindow.of("writecache", args, context.lowerDevice(lower.get(1)));
        // format=true alone recovers a valid cache of this backing device (it stays in definitions);
        // with cache_size= it also lays out one whose geometry differs (cache:resize, drained first)
        String cacheName = lower.get(1);
        return Recovery.open(context.deviceName(), backing, cache, context.lowerDeviceId(lower.get(0)), p.blockSize(),
                p.format(), p.window(), p.tunables(), options.withControllers(controllers::get),
                (done, total) -> context.progress("formatting " + cacheName, done, total));
    }

    /** Every argument create reads, parsed and checked ({@code cache_size} by lowerDevices). */
    private record Parsed(List<String> lower, int blockSize, boolean format, boolean window, Tunables tunables) {
    }

    private Parsed parse(Map<String, String> args) {
        List<String> lower = lowerDevices(args);
        TargetArguments a = TargetArguments.of("writecache", args, ALLOWED);
        return new Parsed(lower, blockSize(a), a.bool("format", false), a.has(CacheWindow.KEY),
                Tunables.DEFAULTS.withAll(args));
    }
}
