package dev.strata.cache.writeboost.internal.io;

import dev.strata.api.CacheMode;
import dev.strata.cache.support.tunables.Tunable;
import dev.strata.cache.support.tunables.TunableTable;
import dev.strata.cache.support.tunables.TunableValues;
import java.util.List;
import java.util.Set;

/**
 * The runtime tunables of a writeboost cache: a typed view of one immutable
 * {@link TunableTable.Snapshot}, replaced as a whole ({@link #with}) and published atomically, so
 * a reader always sees one consistent set. The table (key, parser, range, default, doc) is
 * {@link #TABLE}; {@link #help()} renders it.
 */
public final class Tunables extends TunableValues<Tunables> {
    public static final String WRITEBACK_THRESHOLD = "writeback_threshold";
    public static final String NR_MAX_BATCHED_WRITEBACK = "nr_max_batched_writeback";
    public static final String UPDATE_RECORD_INTERVAL = "update_record_interval";
    public static final String SYNC_DATA_INTERVAL = "sync_data_interval";
    public static final String READ_CACHE_THRESHOLD = "read_cache_threshold";
    public static final String BYPASS_THRESHOLD = "bypass_threshold";
    public static final String SEQUENTIAL_CUTOFF = "sequential_cutoff";
    public static final String WRITE_AROUND = "write_around";
    public static final String CACHE_MODE = "cache_mode";
    public static final String CONTROLLER = "writeback.controller";
    public static final String IO_TIMEOUT = "io_timeout_ms";

    private static final Set<String> MODE_LABELS = Set.of("writeback", "writethrough", "writearound", "passthrough");
    private static final String TOO_SMALL = "is too small; use 0 (off) or at least 4 KiB (4096)";
    static final Tunable<Long> T_WRITEBACK_THRESHOLD = Tunable.number(WRITEBACK_THRESHOLD, 70, 0, 100,
            "write back in the background only while the backing device is less busy than this, in percent "
                    + "(0: only when the log is full; 100: always)");
    static final Tunable<Long> T_BATCH = Tunable.number(NR_MAX_BATCHED_WRITEBACK, 16, 1, 256,
            "segments written back per batch (each up to 255 blocks)");
    static final Tunable<Long> T_RECORD = Tunable.number(UPDATE_RECORD_INTERVAL, 60, 0, 3600,
            "seconds between superblock record updates (0: only when a segment must be reclaimed)");
    static final Tunable<Long> T_SYNC = Tunable.number(SYNC_DATA_INTERVAL, 5, 0, 3600,
            "seconds between forced flushes of the log (0: only on client flushes)");
    static final Tunable<Long> T_READ_CACHE = Tunable.number(READ_CACHE_THRESHOLD, 0, 0, 127,
            "full-block read misses of reads whose sequential run is at most this many blocks are cached "
                    + "as clean blocks (0: off)");
    static final Tunable<Long> T_BYPASS = Tunable.size(BYPASS_THRESHOLD, 1L << 20, 0, 1L << 30,
            "writes of at least this many bytes go to the backing device (0: never)")
            .check(v -> v == 0 || v >= 4096, TOO_SMALL);
    static final Tunable<Long> T_CUTOFF = Tunable.size(SEQUENTIAL_CUTOFF, 4L << 20, 0, 1L << 40,
            "a sequential write stream longer than this many bytes goes to the backing device (0: never)")
            .check(v -> v == 0 || v >= 4096, TOO_SMALL);
    static final Tunable<Boolean> T_WRITE_AROUND = Tunable.bool(WRITE_AROUND, false,
            "every write goes to the backing device (used to drain a cache)");
    static final Tunable<String> T_CACHE_MODE = Tunable.name(CACHE_MODE, "writeback",
            "writeback, writethrough (writes go to the backing device and are also cached clean), writearound "
                    + "(writes go to the backing device only) or passthrough (the cache is neither read nor written); "
                    + "cache:mode sets it, draining first")
            .check(v -> MODE_LABELS.contains(v), "is not a mode; use writeback, writethrough, writearound or passthrough");
    static final Tunable<String> T_CONTROLLER = Tunable.name(CONTROLLER, "modulator",
            "name of the WritebackController service that paces writeback (builtin: the cache's own, also used while the named one is missing)");
    static final Tunable<Long> T_IO_TIMEOUT = Tunable.number(IO_TIMEOUT, 60_000, 1000, 3_600_000,
            "the longest a request waits for log space, a buffer or a flush, in milliseconds");

    /** The table, in display order. */
    public static final TunableTable TABLE = new TunableTable("writeboost", List.of(T_WRITEBACK_THRESHOLD, T_BATCH,
            T_RECORD, T_SYNC, T_READ_CACHE, T_BYPASS, T_CUTOFF, T_WRITE_AROUND, T_CACHE_MODE, T_CONTROLLER, T_IO_TIMEOUT));

    /** Every tunable key, in display order. */
    public static final Set<String> KEYS = TABLE.keys();

    public static final Tunables DEFAULTS = new Tunables(TABLE.defaults());

    // unpacked once: read on every request's path
    private final int writebackThreshold;
    private final int maxBatchedWriteback;
    private final int updateRecordInterval;
    private final int syncDataInterval;
    private final int readCacheThreshold;
    private final long bypassThreshold;
    private final long sequentialCutoff;
    private final boolean writeAround;
    private final CacheMode mode;
    private final String controller;
    private final long ioTimeoutMillis;

    private Tunables(TunableTable.Snapshot v) {
        super(v);
        this.writebackThreshold = v.get(T_WRITEBACK_THRESHOLD).intValue();
        this.maxBatchedWriteback = v.get(T_BATCH).intValue();
        this.updateRecordInterval = v.get(T_RECORD).intValue();
        this.syncDataInterval = v.get(T_SYNC).intValue();
        this.readCacheThreshold = v.get(T_READ_CACHE).intValue();
        this.bypassThreshold = v.get(T_BYPASS);
        this.sequentialCutoff = v.get(T_CUTOFF);
        // write_around=true is the older spelling of cache_mode=writearound, kept for stored definitions
        CacheMode m = CacheMode.parse(v.get(T_CACHE_MODE));
        this.mode = v.get(T_WRITE_AROUND) ? CacheMode.WRITEAROUND : m;
        this.writeAround = mode == CacheMode.WRITEAROUND;
        this.controller = v.get(T_CONTROLLER);
        this.ioTimeoutMillis = v.get(T_IO_TIMEOUT);
    }

    /** One line per tunable: key=default (range): what it does. */
    public static String help() {
        return TABLE.help();
    }

    public int writebackThreshold() {
        return writebackThreshold;
    }

    public int maxBatchedWriteback() {
        return maxBatchedWriteback;
    }

    public int updateRecordInterval() {
        return updateRecordInterval;
    }

    public int syncDataInterval() {
        return syncDataInterval;
    }

    public int readCacheThreshold() {
        return readCacheThreshold;
    }

    public long bypassThreshold() {
        return bypassThreshold;
    }

    public long sequentialCutoff() {
        return sequentialCutoff;
    }

    /** Write-around: every full-block write goes to the backing device only. */
    public boolean writeAround() {
        return writeAround;
    }

    /** The cache mode in effect (write_around=true counts as writearound). */
    public CacheMode mode() {
        return mode;
    }

    /** Full-block writes go to the backing device (writearound, writethrough, passthrough). */
    public boolean writesToBacking() {
        return mode != CacheMode.WRITEBACK;
    }

    /** The cache is neither read nor written (passthrough). */
    public boolean passthrough() {
        return mode == CacheMode.PASSTHROUGH;
    }

    /** Written full blocks are also cached as clean copies (writethrough). */
    public boolean writethrough() {
        return mode == CacheMode.WRITETHROUGH;
    }

    public String controller() {
        return controller;
    }

    public long ioTimeoutMillis() {
        return ioTimeoutMillis;
    }

    @Override
    protected Tunables make(TunableTable.Snapshot v) {
        return new Tunables(v);
    }
}
