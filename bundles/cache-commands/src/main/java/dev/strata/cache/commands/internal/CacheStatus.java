package dev.strata.cache.commands.internal;

import java.util.Map;
import java.util.Set;

import dev.strata.api.CacheMode;
import dev.strata.api.CacheTarget;

/**
 * What {@code cache:stats} shows about one cache: the typed figures of the cache API, and every
 * status key of the device and its target (in their order).
 *
 * @param device   the device name
 * @param mode     the cache's mode
 * @param modes    the modes its policy supports
 * @param blockSize the cache block size in bytes
 * @param capacityBlocks blocks the cache can hold
 * @param cachedBlocks   blocks it holds, clean or dirty
 * @param dirtyBlocks    blocks its backing device does not hold
 * @param values   the device's status keys followed by its target's
 */
record CacheStatus(String device, CacheMode mode, Set<CacheMode> modes, int blockSize, long capacityBlocks,
        long cachedBlocks, long dirtyBlocks, Map<String, String> values) {

    /** The figures of {@code t}, with the status keys {@code values} read for the same device. */
    static CacheStatus of(String device, CacheTarget t, Map<String, String> values) {
        return new CacheStatus(device, t.mode(), t.supportedModes(), t.cacheBlockSize(), t.capacityBlocks(),
                t.cachedBlocks(), t.dirtyBlocks(), values);
    }

    /** A status value as a number, or -1 when the target does not report it (or not as a number). */
    long number(String key) {
        String v = values.get(key);
        if (v == null || v.isBlank()) {
            return -1;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** A status value, "" when absent. */
    String text(String key) {
        String v = values.get(key);
        return v == null ? "" : v.trim();
    }
}
