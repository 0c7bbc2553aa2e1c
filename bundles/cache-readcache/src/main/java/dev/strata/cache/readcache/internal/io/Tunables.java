package dev.strata.cache.readcache.internal.io;

import dev.strata.cache.support.tunables.Tunable;
import dev.strata.cache.support.tunables.TunableTable;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The readcache's runtime tunables as one immutable value, swapped atomically: its own, a
 * snapshot of cache-support's {@link TunableTable} like the other caches' ({@code
 * sequential_cutoff}, {@code write_promote}), and the policy's (passed to the policy without a prefix, kept across
 * policy switches so each policy keeps its settings).
 */
public record Tunables(TunableTable.Snapshot own, Map<String, String> policy) {
    static final String SEQUENTIAL_CUTOFF = "sequential_cutoff";
    static final Tunable<Long> CUTOFF = Tunable.sizeOrOff(SEQUENTIAL_CUTOFF, 4L << 20, 0, 1L << 40,
            "reads of a sequential stream past this many bytes bypass the cache (0: never)");
    static final String WRITE_PROMOTE = "write_promote";
    static final Tunable<Boolean> PROMOTE_WRITES = Tunable.bool(WRITE_PROMOTE, false,
            "a write keeps its blocks cached as clean copies of the written data, when the policy admits them");
    static final String READAHEAD = "readahead";
    /** bcache's {@code readahead}: a miss reads up to this much around it, for free slots only. */
    static final Tunable<Long> READ_AHEAD = Tunable.sizeOrOff(READAHEAD, 0, 0, 1L << 20,
            "a read miss reads the aligned extent of this many bytes around it from the origin in one request and "
                    + "caches the extent's other blocks in free slots, never evicting for them (0: off)")
            .check(v -> v == 0 || (v >= 4096 && Long.bitCount(v) == 1), "is not 0 (off) or a power of two from 4 KiB to 1 MiB");
    // (both take "off" for 0, as write_promote does; a bad value is "readcache: key=value …", one line)
    static final TunableTable TABLE = new TunableTable("readcache", List.of(CUTOFF, PROMOTE_WRITES, READ_AHEAD));
    public static final Tunables DEFAULTS = new Tunables(TABLE.defaults(), Map.of());

    public Tunables {
        policy = Map.copyOf(policy);
    }

    /** The defaults with {@code sequential_cutoff} set to {@code cutoff} bytes. */
    public static Tunables of(long cutoff, Map<String, String> policy) {
        return new Tunables(TABLE.defaults().with(SEQUENTIAL_CUTOFF, Long.toString(cutoff)), policy);
    }

    /** A copy with {@code write_promote} set to {@code on}. */
    public Tunables withWritePromote(boolean on) {
        return withOwn(WRITE_PROMOTE, Boolean.toString(on));
    }

    /** Parses a {@code write_promote} value; a bad one is one clear line (InvalidArgumentException). */
    public static boolean parseWritePromote(String v) {
        return TABLE.defaults().with(WRITE_PROMOTE, v).get(PROMOTE_WRITES);
    }

    /** Parses a {@code sequential_cutoff} value; a bad one is one clear line (InvalidArgumentException). */
    public static long parseCutoff(String v) {
        return TABLE.defaults().with(SEQUENTIAL_CUTOFF, v).get(CUTOFF);
    }

    public long sequentialCutoff() {
        return own.get(CUTOFF);
    }

    /** A copy with {@code readahead} set to {@code v} (checked: one clear line if bad). */
    public Tunables withReadahead(String v) {
        return withOwn(READAHEAD, v);
    }

    /** The readahead extent in bytes (0: off). */
    public long readahead() {
        return own.get(READ_AHEAD);
    }

    public boolean writePromote() {
        return own.get(PROMOTE_WRITES);
    }

    /** A copy with one of the readcache's own tunables set (checked). */
    Tunables withOwn(String key, String value) {
        return new Tunables(own.with(key, value), policy);
    }

    Tunables withPolicy(String key, String value) {
        Map<String, String> m = new LinkedHashMap<>(policy);
        m.put(key, value);
        return new Tunables(own, m);
    }
}
