package dev.strata.mirror.internal.io;

import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager;
import java.util.List;
import java.util.Optional;
import java.util.function.IntPredicate;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;

/**
 * Which legs are remote: a leg whose own target type is {@code nbd} (an import of another
 * machine's export). Only those are recovered automatically ({@link LegProber}): a local leg
 * that failed stays out until {@code recover}, because a local disk that fails and works again
 * by itself is one to replace, not to trust.
 *
 * <p>The device manager is looked up when the prober asks (on its own thread, once a leg is out
 * of sync or when it starts), not held by a DS reference: the manager references every target
 * factory, and a reference back from the mirror's factory is a cycle SCR reports at every start.
 */
public final class RemoteLegs {
    /** How often an out-of-sync remote leg is probed. */
    public static final long PROBE_INTERVAL_MS = 1000;
    static final String REMOTE_TYPE = "nbd";

    private RemoteLegs() {
    }

    /** Whether device {@code leg} is an {@code nbd} device; false without a manager or such a device. */
    public static boolean isRemote(DeviceManager manager, String leg) {
        if (manager == null) {
            return false;
        }
        try {
            Optional<DeviceInfo> info = manager.info(leg);
            return info.isPresent() && REMOTE_TYPE.equals(info.get().type());
        } catch (RuntimeException e) {
            return false; // the manager is going away: treated as local (recovered by hand)
        }
    }

    /** Leg index → remote, asking the device manager registered in {@code context} at each call. */
    public static IntPredicate lookup(BundleContext context, List<String> legs) {
        List<String> names = List.copyOf(legs);
        return leg -> {
            try {
                ServiceReference<DeviceManager> ref = context.getServiceReference(DeviceManager.class);
                if (ref == null) {
                    return false;
                }
                DeviceManager dm = context.getService(ref);
                try {
                    return isRemote(dm, names.get(leg));
                } finally {
                    context.ungetService(ref);
                }
            } catch (RuntimeException e) {
                return false; // the bundle is stopping (its context no longer valid)
            }
        };
    }
}
