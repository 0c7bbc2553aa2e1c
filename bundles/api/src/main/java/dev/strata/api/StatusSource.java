package dev.strata.api;

import java.util.Map;

/**
 * A service with named things whose counters a monitor may read (NBD exports, …), besides the
 * devices the {@link DeviceManager} reports. Core publishes each entry as a JMX MBean
 * {@code dev.strata:type=KIND,name=NAME}, KIND from the service property {@link #KIND}.
 */
public interface StatusSource {
    /** Service property: the kind of the entries (the MBean {@code type}), e.g. {@code Export}. */
    String KIND = "strata.status.kind";

    /** Every entry's status now: name → key/values (numbers as decimal strings). */
    Map<String, Map<String, String>> statuses();
}
