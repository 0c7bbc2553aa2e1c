package dev.strata.cache.commands.internal;

import java.util.Map;

import dev.strata.api.CacheMode;
import dev.strata.api.CacheTarget;

/**
 * What {@code cache:stats} shows about one cache: the typed figures of the cache API, and every
 * status key of the device and its target (in their order).
 *
 * @param device   the device name
 * @param mode     the cache's mode
 * @param blockSize the cache block size in bytes
 * @param capacityBlocks blocks the cache can hold
 * @param cachedBlocks   blocks it holds, clean or dirty
 * @param dirtyBlocks    blocks its backing device does not hold
 * @param values   the device's status keys followed by its target's
 */
record CacheStatus(String device, CacheMode mode, int blockSize, long capacityBlocks,
        long cachedBlocks, long dirtyBlocks, Map<String, String> values) {

    /** The figures of {@code t}, with the status keys {@code values} read for the same device. */
    static CacheStatus of(String device, CacheTarget t, Map<String, String> values) {
        return new CacheStatus(device, t.mode(), t.cacheBlockSize(), t.capacityBlocks(),
                t.cachedBlocks(), t.dirtyBlocks(), values);
    }

    /**
     * The figures from the status keys every cache reports ({@link CacheTarget.Keys}), read without
     * waiting for an operation that runs on the device (a {@code cache:replace} copying); null when
     * one is missing (not a cache, or its target is being swapped right now).
     */
    static CacheStatus fromKeys(String device, Map<String, String> values) {
        CacheStatus s = new CacheStatus(device, CacheMode.WRITEBACK, 0, 0, 0, 0, values);
        long bs = s.number(CacheTarget.Keys.BLOCK_SIZE);
        long capacity = s.number(CacheTarget.Keys.CAPACITY_BLOCKS);
        long cached = s.number(CacheTarget.Keys.CACHED_BLOCKS);
        long dirty = s.number(CacheTarget.Keys.DIRTY_BLOCKS);
        String mode = s.text(CacheTarget.Keys.MODE);
        if (bs <= 0 || bs > Integer.MAX_VALUE || capacity < 0 || cached < 0 || dirty < 0 || mode.isEmpty()) {
            return null;
        }
        try {
            return new CacheStatus(device, CacheMode.parse(mode), (int) bs, capacity, cached, dirty, values);
        } catch (IllegalArgumentException e) {
            return null;
        }
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
