package dev.strata.tools.internal.format;

import dev.strata.api.BlockDevice;
import java.io.IOException;
import java.util.Map;

/**
 * One on-disk format the tool knows: how to scan it and describe it. Pure reading through the
 * caches' own format classes (no target, no factory), so the shell's {@code cache:check} embeds
 * this package and checks a suspended cache with the same code.
 */
public interface CacheFormat {
    /** The policy name in the superblock (and the target type). */
    String name();

    /**
     * Scans the cache device: every problem, with the patches that would mend it laid on the
     * returned overlay. Reads only.
     */
    default Findings scan(BlockDevice cache) throws IOException {
        return scan(cache, Hints.NONE);
    }

    /**
     * As {@link #scan(BlockDevice)}, with what the operator said about how the device was built
     * (used only to rebuild a superblock nothing else can be derived from).
     */
    Findings scan(BlockDevice cache, Hints hints) throws IOException;

    /** The metadata as a tree of maps and lists (rendered as text or JSON by {@link Tree}). */
    Map<String, Object> dump(BlockDevice cache, Findings scanned) throws IOException;

    /** Whether this kind of cache can hold data its backing device does not. */
    default boolean holdsDirtyData() {
        return true;
    }
}
