package dev.strata.api;

import java.util.List;
import java.util.Map;

/**
 * A snapshot of a mapped device.
 *
 * @param name      the device's name
 * @param type      its target type
 * @param arguments the target arguments (its table line)
 * @param size      size in bytes (0 while the target is not built)
 * @param blockSize logical block size
 * @param state     the gate's state
 * @param lower     names of the devices it is stacked on
 * @param holders   names of what uses it: devices stacked on it and exports (e.g. {@code nbd:name})
 */
public record DeviceInfo(String name, String type, Map<String, String> arguments, long size, int blockSize,
        DeviceState state, List<String> lower, List<String> holders) {
}
