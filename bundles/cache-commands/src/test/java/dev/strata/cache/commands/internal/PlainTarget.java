package dev.strata.cache.commands.internal;

import java.util.LinkedHashMap;
import java.util.Map;

import dev.strata.api.BlockDevice;
import dev.strata.api.Target;
import dev.strata.testsupport.target.ForwardingBlockDevice;

/** A device that is not a cache (a driver, or the linear mapping a detach leaves). */
final class PlainTarget extends ForwardingBlockDevice implements Target {
    private final String type;

    PlainTarget(String type, BlockDevice lower) {
        super(lower);
        this.type = type;
    }

    @Override
    public String type() {
        return type;
    }

    @Override
    public Map<String, String> status() {
        return new LinkedHashMap<>(Map.of("size_bytes", Long.toString(size())));
    }
}
