package dev.strata.cache.writeboost.internal;

import dev.strata.api.BlockDevice;
import dev.strata.api.Claim;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;
import dev.strata.api.TargetArguments;
import dev.strata.api.TargetContext;
import dev.strata.api.TargetFactory;
import dev.strata.api.WritebackController;
import dev.strata.cache.support.writeback.ControllerRegistry;
import dev.strata.cache.writeboost.internal.io.Tunables;
import dev.strata.cache.writeboost.internal.io.WriteboostCache;
import java.io.IOException;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

/**
 * {@code writeboost backing=DEV cache=DEV [format=true] [buffers=N] [tunable=value…]}: builds
 * (or reopens) a log-structured write cache. Writeback controllers are bound dynamically by name.
 */
@Component(service = TargetFactory.class, property = TargetFactory.TYPE + "=writeboost")
public final class WriteboostFactory implements TargetFactory {
    static final Set<String> ALLOWED;

    static {
        Set<String> s = new HashSet<>(Tunables.KEYS);
        s.add("backing");
        s.add("cache");
        s.add("format");
        s.add("buffers");
        s.add("flushers");
        ALLOWED = Set.copyOf(s);
    }

    private final ControllerRegistry controllers = new ControllerRegistry();

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            service = WritebackController.class)
    void addController(WritebackController c, Map<String, Object> props) {
        controllers.add(c, props);
    }

    void removeController(WritebackController c, Map<String, Object> props) {
        controllers.remove(c, props);
    }

    @Override
    public String usage() {
        return "writeboost backing=DEV cache=DEV [format=true] [buffers=2..64] [flushers=3] [writeback_threshold=70] "
                + "[nr_max_batched_writeback=16] [update_record_interval=60] [sync_data_interval=5] "
                + "[read_cache_threshold=0] [bypass_threshold=1M] [sequential_cutoff=4M] [write_around=false] [cache_mode=writeback] "
                + "[writeback.controller=modulator] [io_timeout_ms=60000]";
    }

    @Override
    public List<String> lowerDevices(Map<String, String> arguments) {
        TargetArguments a = TargetArguments.of("writeboost", arguments, ALLOWED);
        String backing = a.string("backing");
        String cache = a.string("cache");
        if (backing.equals(cache)) {
            throw new InvalidArgumentException("writeboost: backing and cache are the same device ('" + backing
                    + "'); use two devices");
        }
        return List.of(backing, cache);
    }

    /** Writeboost owns both devices' contents: the log on the cache, the data behind it on the backing. */
    @Override
    public Map<String, Claim> claims(Map<String, String> arguments) {
        List<String> lower = lowerDevices(arguments);
        return Map.of(lower.get(0), Claim.EXCLUSIVE, lower.get(1), Claim.EXCLUSIVE);
    }

    /** A writeboost over the same backing and cache devices recovers the same log, dirty blocks included. */
    @Override
    public boolean adopts(String oldType, Map<String, String> oldArguments, Map<String, String> newArguments) {
        return "writeboost".equals(oldType) && lowerDevices(oldArguments).equals(lowerDevices(newArguments))
                && !TargetArguments.of("writeboost", newArguments, ALLOWED).bool("format", false);
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
        Parsed p = parse(context.arguments());
        BlockDevice backing = context.lowerDevice(p.lower().get(0));
        BlockDevice cache = context.lowerDevice(p.lower().get(1));
        return WriteboostCache.open(context.deviceName(), backing, cache, p.format(), p.tunables(),
                WriteboostCache.Options.defaults().withBuffers(p.buffers()).withFlushers(p.flushers()), controllers::get,
                context.lowerDeviceId(p.lower().get(0)));
    }

    /** Every argument create reads, parsed and checked. */
    private record Parsed(List<String> lower, boolean format, int buffers, int flushers, Tunables tunables) {
    }

    private Parsed parse(Map<String, String> args) {
        List<String> lower = lowerDevices(args);
        TargetArguments a = TargetArguments.of("writeboost", args, ALLOWED);
        boolean format = a.bool("format", false);
        // absent: chosen by the cache's size at open (4 to 8 per flusher, see CacheOpener.autoBuffers)
        int buffers = (int) a.number("buffers", WriteboostCache.Options.AUTO_BUFFERS, 2, 64);
        // log writes in flight (flusher threads); 1 is the one-at-a-time flusher, for comparisons
        int flushers = (int) a.number("flushers", WriteboostCache.Options.FLUSHERS, 1, 4);
        return new Parsed(lower, format, buffers, flushers, Tunables.DEFAULTS.withAll(args));
    }
}
