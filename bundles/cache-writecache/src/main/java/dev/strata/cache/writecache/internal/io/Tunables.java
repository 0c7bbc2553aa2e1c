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
 * @param pauseWriteback   ms: background writeback between the watermarks waits while a write went
 *                         around to the backing device less than this long ago (dm-writecache's
 *                         pause_writeback, default 3000; 0 = off)
 * @param controller       name of the WritebackController service that paces writeback between
 *                         the watermarks (built-in fallback: modulator)
 * @param writebackThreshold the modulator's threshold: % of the backing device's time busy with
 *                         foreground I/O above which it holds writeback back (0 = never pace-write)
 */
public record Tunables(int highWatermark, int lowWatermark, int writebackBatch, int autocommitBlocks, long autocommitTime,
        long maxAge, boolean cleaner, long pauseWriteback, String controller, int writebackThreshold) {
    public static final String HIGH_WATERMARK = "high_watermark";
    public static final String LOW_WATERMARK = "low_watermark";
    public static final String WRITEBACK_BATCH = "writeback_batch";
    public static final String AUTOCOMMIT_BLOCKS = "autocommit_blocks";
    public static final String AUTOCOMMIT_TIME = "autocommit_time";
    public static final String MAX_AGE = "max_age";
    public static final String CLEANER = "cleaner";
    public static final String PAUSE_WRITEBACK = "pause_writeback";
    public static final String CONTROLLER = "writeback.controller";
    public static final String WRITEBACK_THRESHOLD = "writeback_threshold";
    public static final List<String> KEYS = List.of(HIGH_WATERMARK, LOW_WATERMARK, WRITEBACK_BATCH, AUTOCOMMIT_BLOCKS, AUTOCOMMIT_TIME,
            MAX_AGE, CLEANER, PAUSE_WRITEBACK, CONTROLLER, WRITEBACK_THRESHOLD);
    public static final Tunables DEFAULTS = new Tunables(50, 45, 256, 64, 1000, 0, false, 3000, "modulator", 70);

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
                a.bool(CLEANER, cleaner), a.number(PAUSE_WRITEBACK, pauseWriteback, 0, 3_600_000),
                controllerName(a.string(CONTROLLER, controller)),
                (int) a.number(WRITEBACK_THRESHOLD, writebackThreshold, 0, 100));
    }

    private static String controllerName(String v) {
        String s = v.trim();
        if (!s.matches("[A-Za-z0-9_.-]{1,64}")) {
            throw new InvalidArgumentException("writecache: " + CONTROLLER + "=" + v
                    + " is not a controller name; use letters, digits, '.', '_' or '-'");
        }
        return s.toLowerCase(java.util.Locale.ROOT);
    }

    /** The tunables passed to the writeback controller's session (keys without the {@code writeback.} prefix). */
    public Map<String, String> controllerTunables() {
        return Map.of(WRITEBACK_THRESHOLD, Integer.toString(writebackThreshold));
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
        m.put(PAUSE_WRITEBACK, Long.toString(pauseWriteback));
        m.put(CONTROLLER, controller);
        m.put(WRITEBACK_THRESHOLD, Integer.toString(writebackThreshold));
        return m;
    }
}
