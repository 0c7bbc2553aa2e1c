package dev.strata.cache.writecache.internal.io;

import dev.strata.api.InvalidArgumentException;
import dev.strata.cache.support.tunables.Tunable;
import dev.strata.cache.support.tunables.TunableTable;
import dev.strata.cache.support.tunables.TunableValues;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The runtime tunables of a writecache: a typed view of one immutable
 * {@link TunableTable.Snapshot} (cache-support's table, as writeboost's), replaced as a whole
 * ({@code cache:set}/{@code dev:message} build a new one; nothing changes unless all of it is
 * valid). The table (key, parser, range, default, doc) is {@link #TABLE}; {@link #help()}
 * renders it. The one check that spans two keys (low ≤ high watermark) runs on the whole value.
 */
public final class Tunables extends TunableValues<Tunables> {
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

    static final Tunable<Long> T_HIGH = Tunable.number(HIGH_WATERMARK, 50, 0, 100,
            "% of slots in use at which background writeback starts (dm-writecache: 50)");
    static final Tunable<Long> T_LOW = Tunable.number(LOW_WATERMARK, 45, 0, 100,
            "% of slots in use at which background writeback stops; at most high_watermark (dm-writecache: 45)");
    static final Tunable<Long> T_BATCH = Tunable.number(WRITEBACK_BATCH, 256, 1, 65536,
            "most blocks one writeback batch moves (dm-writecache: writeback_jobs)");
    static final Tunable<Long> T_AUTOCOMMIT_BLOCKS = Tunable.number(AUTOCOMMIT_BLOCKS, 64, 1, 1 << 20,
            "uncommitted blocks at which the background commits (dm-writecache SSD mode: 64)");
    static final Tunable<Long> T_AUTOCOMMIT_TIME = Tunable.number(AUTOCOMMIT_TIME, 1000, 0, 3_600_000,
            "ms after the first uncommitted write at which the background commits (0: off)");
    static final Tunable<Long> T_MAX_AGE = Tunable.number(MAX_AGE, 0, 0, 86_400_000,
            "ms: blocks written longer ago are written back whatever the watermarks (0: off)");
    static final Tunable<Boolean> T_CLEANER = Tunable.bool(CLEANER, false,
            "write everything back; new writes of uncached blocks go around");
    static final Tunable<Long> T_PAUSE = Tunable.number(PAUSE_WRITEBACK, 3000, 0, 3_600_000,
            "ms: background writeback between the watermarks waits while a write went around less than "
                    + "this long ago (0: off)");
    static final Tunable<String> T_CONTROLLER = Tunable.name(CONTROLLER, "modulator",
            "name of the WritebackController service that paces writeback between the watermarks "
                    + "(built-in: modulator)");
    static final Tunable<Long> T_THRESHOLD = Tunable.number(WRITEBACK_THRESHOLD, 70, 0, 100,
            "the modulator's threshold: % of the backing device's time busy with foreground I/O above which it "
                    + "holds writeback back");

    /** The table, in display order. */
    public static final TunableTable TABLE = new TunableTable("writecache", List.of(T_HIGH, T_LOW, T_BATCH,
            T_AUTOCOMMIT_BLOCKS, T_AUTOCOMMIT_TIME, T_MAX_AGE, T_CLEANER, T_PAUSE, T_CONTROLLER, T_THRESHOLD));

    /** Every tunable key, in display order. */
    public static final Set<String> KEYS = TABLE.keys();

    public static final Tunables DEFAULTS = new Tunables(TABLE.defaults());

    // unpacked once: read on the background's and the write path's hot paths
    private final int highWatermark;
    private final int lowWatermark;
    private final int writebackBatch;
    private final int autocommitBlocks;
    private final long autocommitTime;
    private final long maxAge;
    private final boolean cleaner;
    private final long pauseWriteback;
    private final String controller;
    private final int writebackThreshold;

    private Tunables(TunableTable.Snapshot v) {
        super(v);
        this.highWatermark = v.get(T_HIGH).intValue();
        this.lowWatermark = v.get(T_LOW).intValue();
        this.writebackBatch = v.get(T_BATCH).intValue();
        this.autocommitBlocks = v.get(T_AUTOCOMMIT_BLOCKS).intValue();
        this.autocommitTime = v.get(T_AUTOCOMMIT_TIME);
        this.maxAge = v.get(T_MAX_AGE);
        this.cleaner = v.get(T_CLEANER);
        this.pauseWriteback = v.get(T_PAUSE);
        this.controller = v.get(T_CONTROLLER);
        this.writebackThreshold = v.get(T_THRESHOLD).intValue();
        if (lowWatermark > highWatermark) {
            throw new InvalidArgumentException("writecache: low_watermark=" + lowWatermark + " is above high_watermark="
                    + highWatermark + "; the low watermark must not exceed the high one");
        }
    }

    /** One line per tunable: key=default (range): what it does. */
    public static String help() {
        return TABLE.help();
    }

    /** The tunables passed to the writeback controller's session (keys without the {@code writeback.} prefix). */
    public Map<String, String> controllerTunables() {
        return Map.of(WRITEBACK_THRESHOLD, Integer.toString(writebackThreshold));
    }

    public int highWatermark() {
        return highWatermark;
    }

    public int lowWatermark() {
        return lowWatermark;
    }

    public int writebackBatch() {
        return writebackBatch;
    }

    public int autocommitBlocks() {
        return autocommitBlocks;
    }

    public long autocommitTime() {
        return autocommitTime;
    }

    public long maxAge() {
        return maxAge;
    }

    public boolean cleaner() {
        return cleaner;
    }

    public long pauseWriteback() {
        return pauseWriteback;
    }

    public String controller() {
        return controller;
    }

    public int writebackThreshold() {
        return writebackThreshold;
    }

    @Override
    protected Tunables make(TunableTable.Snapshot v) {
        return new Tunables(v);
    }
}
