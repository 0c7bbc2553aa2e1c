package dev.strata.cache.writeboost.internal.io;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.TargetArguments;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The runtime tunables of a writeboost cache: an immutable value, replaced as a whole
 * ({@link #with}) and published through one volatile field, so a reader always sees one
 * consistent set.
 *
 * @param writebackThreshold    write back in the background only while the backing device is less
 *                              busy than this, in percent (0: only when the log is full; 100: always)
 * @param maxBatchedWriteback   segments written back per batch (each up to 255 blocks)
 * @param updateRecordInterval  seconds between superblock record updates (0: only when a segment
 *                              must be reclaimed)
 * @param syncDataInterval      seconds between forced flushes of the log (0: only on client flushes)
 * @param readCacheThreshold    full-block read misses of reads whose sequential run is at most this
 *                              many blocks are cached as clean blocks (0: off; see ReadCacheInjector)
 * @param bypassThreshold       writes of at least this many bytes go to the backing device (0: never)
 * @param sequentialCutoff      a sequential write stream longer than this many bytes goes to the
 *                              backing device (0: never)
 * @param writeAround           every write goes to the backing device (used to drain a cache)
 * @param controller            name of the WritebackController service to use
 * @param ioTimeoutMillis       the longest a request waits for log space, a buffer or a flush
 */
public record Tunables(int writebackThreshold, int maxBatchedWriteback, int updateRecordInterval,
        int syncDataInterval, int readCacheThreshold, long bypassThreshold, long sequentialCutoff,
        boolean writeAround, String controller, long ioTimeoutMillis) {

    public static final String WRITEBACK_THRESHOLD = "writeback_threshold";
    public static final String NR_MAX_BATCHED_WRITEBACK = "nr_max_batched_writeback";
    public static final String UPDATE_RECORD_INTERVAL = "update_record_interval";
    public static final String SYNC_DATA_INTERVAL = "sync_data_interval";
    public static final String READ_CACHE_THRESHOLD = "read_cache_threshold";
    public static final String BYPASS_THRESHOLD = "bypass_threshold";
    public static final String SEQUENTIAL_CUTOFF = "sequential_cutoff";
    public static final String WRITE_AROUND = "write_around";
    public static final String CONTROLLER = "writeback.controller";
    public static final String IO_TIMEOUT = "io_timeout_ms";

    /** Every tunable key, in display order. */
    public static final Set<String> KEYS = Set.of(WRITEBACK_THRESHOLD, NR_MAX_BATCHED_WRITEBACK,
            UPDATE_RECORD_INTERVAL, SYNC_DATA_INTERVAL, READ_CACHE_THRESHOLD, BYPASS_THRESHOLD, SEQUENTIAL_CUTOFF,
            WRITE_AROUND, CONTROLLER, IO_TIMEOUT);

    public static final Tunables DEFAULTS = new Tunables(70, 16, 60, 5, 0, 1L << 20, 4L << 20, false,
            "modulator", 60_000);

    /** A copy with {@code key} set to {@code value}; throws InvalidArgumentException (one line) on a bad key or value. */
    public Tunables with(String key, String value) {
        TargetArguments a = TargetArguments.of("writeboost", Map.of(key, value), KEYS);
        switch (key) {
            case WRITEBACK_THRESHOLD:
                return new Tunables((int) a.number(key, 0, 100), maxBatchedWriteback, updateRecordInterval,
                        syncDataInterval, readCacheThreshold, bypassThreshold, sequentialCutoff, writeAround, controller,
                        ioTimeoutMillis);
            case NR_MAX_BATCHED_WRITEBACK:
                return new Tunables(writebackThreshold, (int) a.number(key, 1, 256), updateRecordInterval,
                        syncDataInterval, readCacheThreshold, bypassThreshold, sequentialCutoff, writeAround, controller,
                        ioTimeoutMillis);
            case UPDATE_RECORD_INTERVAL:
                return new Tunables(writebackThreshold, maxBatchedWriteback, (int) a.number(key, 0, 3600),
                        syncDataInterval, readCacheThreshold, bypassThreshold, sequentialCutoff, writeAround, controller,
                        ioTimeoutMillis);
            case SYNC_DATA_INTERVAL:
                return new Tunables(writebackThreshold, maxBatchedWriteback, updateRecordInterval,
                        (int) a.number(key, 0, 3600), readCacheThreshold, bypassThreshold, sequentialCutoff, writeAround,
                        controller, ioTimeoutMillis);
            case READ_CACHE_THRESHOLD:
                return new Tunables(writebackThreshold, maxBatchedWriteback, updateRecordInterval, syncDataInterval,
                        (int) a.number(key, 0, 127), bypassThreshold, sequentialCutoff, writeAround, controller,
                        ioTimeoutMillis);
            case BYPASS_THRESHOLD: {
                long v = a.size(key, 0, 1L << 30);
                if (v != 0 && v < 4096) {
                    throw new InvalidArgumentException("writeboost: " + key + "=" + value
                            + " is too small; use 0 (off) or at least 4096 bytes");
                }
                return new Tunables(writebackThreshold, maxBatchedWriteback, updateRecordInterval, syncDataInterval,
                        readCacheThreshold, v, sequentialCutoff, writeAround, controller, ioTimeoutMillis);
            }
            case SEQUENTIAL_CUTOFF: {
                long v = a.size(key, 0, 1L << 40);
                if (v != 0 && v < 4096) {
                    throw new InvalidArgumentException("writeboost: " + key + "=" + value
                            + " is too small; use 0 (off) or at least 4096 bytes");
                }
                return new Tunables(writebackThreshold, maxBatchedWriteback, updateRecordInterval, syncDataInterval,
                        readCacheThreshold, bypassThreshold, v, writeAround, controller, ioTimeoutMillis);
            }
            case WRITE_AROUND:
                return new Tunables(writebackThreshold, maxBatchedWriteback, updateRecordInterval, syncDataInterval,
                        readCacheThreshold, bypassThreshold, sequentialCutoff, a.bool(key, false), controller,
                        ioTimeoutMillis);
            case CONTROLLER: {
                String v = value.trim();
                if (!v.matches("[A-Za-z0-9_.-]{1,64}")) {
                    throw new InvalidArgumentException("writeboost: " + key + "=" + value
                            + " is not a controller name; use letters, digits, '.', '_' or '-'");
                }
                return new Tunables(writebackThreshold, maxBatchedWriteback, updateRecordInterval, syncDataInterval,
                        readCacheThreshold, bypassThreshold, sequentialCutoff, writeAround, v.toLowerCase(Locale.ROOT),
                        ioTimeoutMillis);
            }
            case IO_TIMEOUT:
                return new Tunables(writebackThreshold, maxBatchedWriteback, updateRecordInterval, syncDataInterval,
                        readCacheThreshold, bypassThreshold, sequentialCutoff, writeAround, controller,
                        a.number(key, 1000, 3_600_000));
            default:
                throw new InvalidArgumentException("writeboost: unknown tunable '" + key + "'");
        }
    }

    /** Applies every tunable present in {@code args} (other keys are ignored). */
    public Tunables withAll(Map<String, String> args) {
        Tunables t = this;
        for (Map.Entry<String, String> e : args.entrySet()) {
            if (KEYS.contains(e.getKey())) {
                t = t.with(e.getKey(), e.getValue());
            }
        }
        return t;
    }

    /** The tunables as key/values, in a stable order. */
    public Map<String, String> asMap() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(WRITEBACK_THRESHOLD, Integer.toString(writebackThreshold));
        m.put(NR_MAX_BATCHED_WRITEBACK, Integer.toString(maxBatchedWriteback));
        m.put(UPDATE_RECORD_INTERVAL, Integer.toString(updateRecordInterval));
        m.put(SYNC_DATA_INTERVAL, Integer.toString(syncDataInterval));
        m.put(READ_CACHE_THRESHOLD, Integer.toString(readCacheThreshold));
        m.put(BYPASS_THRESHOLD, Long.toString(bypassThreshold));
        m.put(SEQUENTIAL_CUTOFF, Long.toString(sequentialCutoff));
        m.put(WRITE_AROUND, Boolean.toString(writeAround));
        m.put(CONTROLLER, controller);
        m.put(IO_TIMEOUT, Long.toString(ioTimeoutMillis));
        return m;
    }
}
