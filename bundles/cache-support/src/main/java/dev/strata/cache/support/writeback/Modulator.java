package dev.strata.cache.support.writeback;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.WritebackController;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The built-in writeback controller, named {@value #NAME}: write back a full batch while the
 * backing device is less busy than {@code writeback_threshold} percent, nothing otherwise. A
 * threshold of 0 turns background writeback off (the cache still writes back when its log is full).
 *
 * <p>Named {@code builtin}, not {@code modulator}: the daemons bundle registers a service called
 * {@code modulator} (dm-writeboost's once-a-second gate), and a cache falling back while that
 * service is away must not show the same name as the service itself (docs/daemons.md).
 */
public final class Modulator implements WritebackController {
    public static final String NAME = "builtin";
    public static final Modulator INSTANCE = new Modulator();
    public static final String THRESHOLD = "writeback_threshold";
    /** How long to wait before asking again when the device is too busy. */
    public static final long RETRY_NANOS = 100_000_000L;

    @Override
    public Session open(String cache, Map<String, String> tunables) {
        ModulatorSession s = new ModulatorSession();
        String t = tunables.get(THRESHOLD);
        if (t != null) {
            s.set(THRESHOLD, t);
        }
        return s;
    }

    private static final class ModulatorSession implements Session {
        private volatile int threshold = 70;
        private volatile int lastBusy;
        private volatile int lastBlocks;

        @Override
        public Decision decide(CacheLoad load) {
            lastBusy = load.backingBusyPercent();
            int th = threshold;
            Decision d;
            if (load.dirtyBlocks() == 0 || th == 0 || load.backingBusyPercent() >= th) {
                d = Decision.waitFor(RETRY_NANOS);
            } else {
                d = Decision.fullSpeed(load.maxBatch());
            }
            lastBlocks = d.blocks();
            return d;
        }

        @Override
        public boolean set(String key, String value) {
            if (!THRESHOLD.equals(key)) {
                return false;
            }
            int v;
            try {
                v = Integer.parseInt(value.trim());
            } catch (NumberFormatException e) {
                v = -1;
            }
            if (v < 0 || v > 100) {
                throw new InvalidArgumentException("modulator: writeback_threshold=" + value
                        + " is out of range; allowed 0 to 100 (percent of the backing device's busy time)");
            }
            threshold = v;
            return true;
        }

        @Override
        public Map<String, String> status() {
            Map<String, String> m = new LinkedHashMap<>();
            m.put(THRESHOLD, Integer.toString(threshold));
            m.put("backing_busy_percent", Integer.toString(lastBusy));
            m.put("allowed_blocks", Integer.toString(lastBlocks));
            return m;
        }
    }
}
