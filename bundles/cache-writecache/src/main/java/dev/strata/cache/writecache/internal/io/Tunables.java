package dev.strata.cache.writecache.internal.io;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.TargetArguments;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The runtime tunables, as one immutable value swapped whole ({@code cache:set}/{@code
 * dev:message} build a new one; nothing changes unless all of it is valid).
 *
 * @param highWatermark    % of slots in use at which background writeback starts (dm-writecache: 50)
 * @param lowWatermark     % of slots in use at which it stops (dm-writecache: 45)
 * @param writebackBatch   most blocks one writeback batch moves (dm-writecache: writeback_jobs)
 * @param autocommitBlocks uncommitted blocks at which the background commits (dm-writecache SSD: 64)
 * @param autocommitTime   ms after the first uncommitted write at which the background commits
 *                         (dm-writecache: 1000; 0 = off)
 * @param maxAge           ms: blocks written longer ago are written back whatever the watermarks (0 = off)
 * @param cleaner          write everything back and let new writes of uncached blocks go around
 */
public record Tunables(int highWatermark, int lowWatermark, int writebackBatch, int autocommitBlocks, long autocommitTime, long maxAge, boolean cleaner) {
    public static final String HIGH_WATERMARK = "high_watermark";
    public static final String LOW_WATERMARK = "low_watermark";
    public static final String WRITEBACK_BATCH = "writeback_batch";
    public static final String AUTOCOMMIT_BLOCKS = "autocommit_blocks";
    public static final String AUTOCOMMIT_TIME = "autocommit_time";
    public static final String MAX_AGE = "max_age";
    public static final String CLEANER = "cleaner";
    public static final List<String> KEYS = List.of(HIGH_WATERMARK, LOW_WATERMARK, WRITEBACK_BATCH, AUTOCOMMIT_BLOCKS, AUTOCOMMIT_TIME,
            MAX_AGE, CLEANER);
    public static final Tunables DEFAULTS = new Tunables(50, 45, 256, 64, 1000, 0, false);

    public Tunables {
        if (lowWatermark > highWatermark) {
            throw new InvalidArgumentException("writecache: low_watermark=" + lowWatermark + " is above high_watermark="
                    + highWatermark + "; the low watermark must not exceed the high one");
        }
    }

    /** This value with {@code key} set; throws (naming the key and range) if the result is invalid. */
    public Tunables with(String key, String value) {
        return withAll(Map.of(key, value));
    }

    /** This value with every tunable key of {@code args} set (other keys ignored). */
    public Tunables withAll(Map<String, String> args) {
        Map<String, String> mine = new LinkedHashMap<>();
        for (String k : KEYS) {
            if (args.containsKey(k)) {
                mine.put(k, args.get(k));
            }
        }
        TargetArguments a = TargetArguments.of("writecache", mine, java.util.Set.copyOf(KEYS));
        return new Tunables((int) a.number(HIGH_WATERMARK, highWatermark, 0, 100),
                (int) a.number(LOW_WATERMARK, lowWatermark, 0, 100),
                (int) a.number(WRITEBACK_BATCH, writebackBatch, 1, 65536),
                (int) a.number(AUTOCOMMIT_BLOCKS, autocommitBlocks, 1, 1 << 20),
                a.number(AUTOCOMMIT_TIME, autocommitTime, 0, 3_600_000), a.number(MAX_AGE, maxAge, 0, 86_400_000),
                a.bool(CLEANER, cleaner));
    }

    public Map<String, String> asMap() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(HIGH_WATERMARK, Integer.toString(highWatermark));
        m.put(LOW_WATERMARK, Integer.toString(lowWatermark));
        m.put(WRITEBACK_BATCH, Integer.toString(writebackBatch));
        m.put(AUTOCOMMIT_BLOCKS, Integer.toString(autocommitBlocks));
        m.put(AUTOCOMMIT_TIME, Long.toString(autocommitTime));
        m.put(MAX_AGE, Long.toString(maxAge));
        m.put(CLEANER, Boolean.toString(cleaner));
        return m;
    }
}
