package dev.strata.mirror.internal.io;

import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager;
import java.util.List;
import java.util.Optional;

/**
 * Which legs are remote: a leg whose own target type is {@code nbd} (an import of another
 * machine's export). Only those are recovered automatically ({@link LegProber}): a local leg
 * that failed stays out until {@code recover}, because a local disk that fails and works again
 * by itself is one to replace, not to trust.
 */
public final class RemoteLegs {
    /** How often an out-of-sync remote leg is probed. */
    public static final long PROBE_INTERVAL_MS = 1000;
    static final String REMOTE_TYPE = "nbd";

    private RemoteLegs() {
    }

    /** Bit i set when leg i is an {@code nbd} device; 0 without a device manager (tests, tools). */
    public static int mask(DeviceManager manager, List<String> legs) {
        if (manager == null) {
            return 0;
        }
        int m = 0;
        for (int i = 0; i < legs.size(); i++) {
            try {
                Optional<DeviceInfo> info = manager.info(legs.get(i));
                if (info.isPresent() && REMOTE_TYPE.equals(info.get().type())) {
                    m |= 1 << i;
                }
            } catch (RuntimeException e) {
                // the manager is going away: the leg is treated as local (recovered by hand)
            }
        }
        return m;
    }
}
