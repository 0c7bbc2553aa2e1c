package dev.strata.daemons.internal.modulator;

import static dev.strata.daemons.internal.modulator.ModulatorTunables.NAME;
import static dev.strata.daemons.internal.modulator.ModulatorTunables.WRITEBACK_THRESHOLD;

import dev.strata.api.WritebackController.CacheLoad;
import dev.strata.api.WritebackController.Decision;
import dev.strata.api.WritebackController.Session;
import dev.strata.daemons.internal.Settings;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One cache's modulator gate. dm-writeboost's {@code modulator_proc} wakes once a second, reads
 * the backing device's utilisation over that second and sets {@code allow_writeback} to
 * {@code util < writeback_threshold}; the writeback daemon then runs at full batch size while it
 * is set. Here the gate is re-evaluated on the first decision at least {@link #INTERVAL_NANOS}
 * after the last evaluation (the cache's busy meter already covers the last second) and holds in
 * between, so a burst of the cache's own writeback does not flip it every call. The threshold
 * is strict, as in dm-writeboost: at 70 a device busy 70 % keeps the gate shut; 0 keeps it shut
 * always (background writeback off; the cache still writes back when it must, outside the
 * controller).
 * <p>
 * Locking: decide, set and status are synchronized on the session (cache thread vs shell).
 */
final class ModulatorSession implements Session {
    /** dm-writeboost's modulator interval. */
    static final long INTERVAL_NANOS = 1_000_000_000L;
    /** How soon a clean cache asks again. */
    static final long CLEAN_POLL_NANOS = 1_000_000_000L;

    private final String cache;
    private Settings settings;
    private boolean evaluated;
    private boolean open;
    private long nextEvaluation;
    private int lastBusy;
    private Decision lastDecision;

    ModulatorSession(String cache, Map<String, String> tunables) {
        this.cache = cache;
        this.settings = Settings.of(ModulatorTunables.ALL, tunables);
    }

    @Override
    public synchronized Decision decide(CacheLoad load) {
        long now = load.nanoTime();
        if (!evaluated || now - nextEvaluation >= 0) {
            lastBusy = load.backingBusyPercent();
            open = lastBusy < settings.get(WRITEBACK_THRESHOLD);
            evaluated = true;
            nextEvaluation = now + INTERVAL_NANOS;
        }
        Decision d;
        if (load.maxBatch() <= 0 || load.dirtyBlocks() <= 0) {
            d = Decision.waitFor(CLEAN_POLL_NANOS);
        } else if (open) {
            d = Decision.fullSpeed(load.maxBatch());
        } else {
            d = Decision.waitFor(Math.max(1, nextEvaluation - now));
        }
        lastDecision = d;
        return d;
    }

    @Override
    public synchronized boolean set(String key, String value) {
        Settings n = settings.with(key, value);
        if (n == null) {
            return false;
        }
        settings = n;
        evaluated = false; // a new threshold applies from the next decision
        return true;
    }

    @Override
    public synchronized Map<String, String> status() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("controller", NAME);
        m.put("cache", cache);
        m.putAll(settings.asMap());
        m.put("backing_busy_percent", Integer.toString(lastBusy));
        m.put("gate", evaluated ? (open ? "open" : "shut") : "not evaluated");
        if (lastDecision != null) {
            m.put("allowed_blocks", Integer.toString(lastDecision.blocks()));
            m.put("ask_again_ms", Long.toString(lastDecision.askAgainNanos() / 1_000_000));
        }
        return m;
    }
}
