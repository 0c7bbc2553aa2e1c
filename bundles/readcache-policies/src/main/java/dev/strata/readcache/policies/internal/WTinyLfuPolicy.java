package dev.strata.readcache.policies.internal;

import dev.strata.api.ReadCachePolicy;
import java.util.Map;
import org.osgi.service.component.annotations.Component;

/**
 * {@code wtinylfu} (the default): Caffeine's W-TinyLFU on primitive arrays — a small admission
 * window (LRU) in front of a segmented LRU main region (probation, protected), a
 * {@link FrequencySketch} of recent accesses deciding whether the window's oldest block may
 * displace the main region's victim, and (optionally) Caffeine's hill climber resizing the window. See
 * {@link WTinyLfu}.
 */
@Component(service = ReadCachePolicy.class, property = ReadCachePolicy.NAME + "=" + WTinyLfuPolicy.NAME)
public class WTinyLfuPolicy implements ReadCachePolicy {
    static final String NAME = "wtinylfu";

    @Override
    public String usage() {
        return "wtinylfu [window=1 (0-100 % of slots; 0: admit at the door)] [climb=false] [protected=80 (0-100 % of main)]"
                + " [sample=20 (1-1000 accesses per slot between agings)] [climb_sample=10 (1-1000 accesses per slot"
                + " between window adjustments)] — frequency-based admission, scan resistant";
    }

    @Override
    public Instance open(Contents contents, Map<String, String> tunables) {
        WTinyLfu.Settings settings = new WTinyLfu.Settings(
                Tunables.intValue(NAME, tunables, "window", WTinyLfu.Settings.DEFAULT.windowPercent(), 0, 100),
                Tunables.boolValue(NAME, tunables, "climb", WTinyLfu.Settings.DEFAULT.climb()),
                Tunables.intValue(NAME, tunables, "protected", WTinyLfu.Settings.DEFAULT.protectedPercent(), 0, 100),
                Tunables.intValue(NAME, tunables, "sample", WTinyLfu.Settings.DEFAULT.sampleFactor(), 1, 1000),
                Tunables.intValue(NAME, tunables, "climb_sample", WTinyLfu.Settings.DEFAULT.climbFactor(), 1, 1000));
        return new WTinyLfu(contents, settings);
    }
}
