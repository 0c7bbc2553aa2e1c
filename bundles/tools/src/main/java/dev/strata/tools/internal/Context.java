package dev.strata.tools.internal;

import dev.strata.api.BlockDevice;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.TargetContext;
import java.util.Map;

/**
 * The tool's stand-in for the device manager: a target built from an argument map over named
 * devices. It has no device identities (a cache opened by the tool skips the identity check, as
 * its format documents), and the tool claims nothing: it must be the devices' only user.
 */
record Context(String deviceName, Map<String, String> arguments, Map<String, BlockDevice> devices)
        implements TargetContext {

    @Override
    public BlockDevice lowerDevice(String name) {
        BlockDevice d = devices.get(name);
        if (d == null) {
            throw new InvalidArgumentException("no device named '" + name + "'");
        }
        return d;
    }
}
