package dev.strata.api;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The mapped devices: named, stacked, suspendable, hot-swappable. Registered as an OSGi service
 * by the core bundle. Every method that takes user input throws {@link InvalidArgumentException}
 * (one line, nothing changed) for a mistake.
 */
public interface DeviceManager {

    /**
     * Creates a device and persists its definition.
     *
     * @throws InvalidArgumentException name taken or malformed, unknown type, bad arguments,
     *         missing lower device
     */
    DeviceInfo create(String name, String type, Map<String, String> arguments) throws IOException;

    /**
     * Closes and forgets a device. Refused while anything uses it (a device above, an export, an
     * open handle).
     */
    void remove(String name) throws IOException;

    List<DeviceInfo> list();

    Optional<DeviceInfo> info(String name);

    /** The target's status counters, prefixed by the device's own (state, I/O counts). */
    Map<String, String> status(String name) throws IOException;

    /** Passes a tunable to the device's target. */
    void message(String name, String key, String value) throws IOException;

    /** Closes the gate (new I/O waits), drains in-flight I/O, then suspends the target. */
    void suspend(String name) throws IOException;

    /** Resumes the target and opens the gate. */
    void resume(String name) throws IOException;

    /**
     * Builds a new target and swaps it in under a short suspend. If the new target cannot be
     * built, the old one stays and the device resumes unchanged.
     */
    DeviceInfo reload(String name, String type, Map<String, String> arguments) throws IOException;

    /**
     * Opens a device for use by {@code holder} (e.g. {@code nbd:export1}). While any handle is
     * open the device cannot be removed. I/O through the handle passes the device's gate, so it
     * waits (never fails) while the device is suspended or its target is being updated.
     */
    DeviceHandle open(String name, String holder);

    /** Target types currently available: type → usage line, bundle and version. */
    List<TargetType> targetTypes();

    /** A target type offered by a factory service. */
    record TargetType(String type, String usage, String bundle, String version) {
    }
}
