package dev.strata.tools.internal;

import dev.strata.api.BlockDevice;
import dev.strata.api.TargetFactory;
import java.io.IOException;
import java.util.Map;

/** One on-disk format the tool knows: how to scan it, describe it, and open its real target. */
public interface CacheFormat {
    /** The policy name in the superblock (and the target type). */
    String name();

    /**
     * Scans the cache device: every problem, with the patches that would mend it laid on the
     * returned overlay. Reads only.
     */
    Findings scan(BlockDevice cache) throws IOException;

    /** The metadata as a tree of maps and lists (rendered as text or JSON by {@link Tree}). */
    Map<String, Object> dump(BlockDevice cache, Findings scanned) throws IOException;

    /** The factory of the real target (writeback opens the cache as the service would). */
    TargetFactory factory();

    /** The argument naming the device that holds the authoritative data ({@code backing}, {@code origin}). */
    String backingArgument();

    /** Whether this kind of cache can hold data its backing device does not. */
    default boolean holdsDirtyData() {
        return true;
    }
}
