package dev.strata.daemons.internal.idle;

import static dev.strata.daemons.internal.idle.IdleTunables.BUSY_KIB_PER_SEC;
import static dev.strata.daemons.internal.idle.IdleTunables.IDLE_MS;
import static dev.strata.daemons.internal.idle.IdleTunables.NAME;

import dev.strata.api.WritebackController.CacheLoad;
import dev.strata.api.WritebackController.Decision;
import dev.strata.api.WritebackController.Session;
import dev.strata.daemons.internal.Settings;
import dev.strata.daemons.internal.TokenBucket;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One cache's idle switch. Idle means {@link CacheLoad#idleMillis()} ≥ {@code idle_ms}: then
 * every decision is a full batch. While busy, grants are spaced by a {@link TokenBucket} at
 * {@code busy_kib_per_sec}; the bucket starts empty at the start of each busy spell, so an idle
 * spell never turns into a burst against fresh foreground I/O. A waiting cache is told to ask
 * again when the floor allows the next grant or when the front end would turn idle, whichever
 * comes first.
 * <p>
 * Locking: decide, set and status are synchronized on the session (cache thread vs shell).
 */
final class IdleSession implements Session {
    /** How soon a clean cache asks again. */
    static final long CLEAN_POLL_NANOS = 1_000_000_000L;

    private final String cache;
    private final TokenBucket bucket = new TokenBucket();
    private Settings settings;
    private boolean busy;
    private long lastIdleMillis;
    private Decision lastDecision;
    /** The rate of the last grant (0: it was not a paced grant, or it has been charged). */
    private double grantRate;

    IdleSession(String cache, Map<String, String> tunables) {
        this.cache = cache;
        this.settings = Settings.of(IdleTunables.ALL, tunables);
    }

    @Override
    public synchronized Decision decide(CacheLoad load) {
        Settings s = settings;
        long now = load.nanoTime();
        lastIdleMillis = load.idleMillis();
        long idleMs = s.get(IDLE_MS);
        Decision d;
        if (load.maxBatch() <= 0 || load.dirtyBlocks() <= 0) {
            d = Decision.waitFor(CLEAN_POLL_NANOS);
        } else if (load.idleMillis() >= idleMs) {
            busy = false;
            d = Decision.fullSpeed(load.maxBatch());
        } else {
            if (!busy) {
                bucket.reset(now);
                busy = true;
            }
            long untilIdle = Math.max(1, (idleMs - load.idleMillis()) * 1_000_000L);
            double blocksPerSec = s.get(BUSY_KIB_PER_SEC) * 1024.0 / Math.max(512, load.blockSize());
            if (!(blocksPerSec > 0)) {
                d = Decision.waitFor(untilIdle);
            } else {
                int g = bucket.take(now, blocksPerSec, Math.min(load.maxBatch(), load.dirtyBlocks()));
                d = new Decision(g, Math.min(bucket.waitNanos(now), untilIdle), Math.round(blocksPerSec));
                grantRate = g > 0 ? blocksPerSec : 0;
            }
        }
        if (d.blocks() <= 0 || d.rateBlocksPerSec() < 0) {
            grantRate = 0;
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
        return true;
    }

    /** The bucket charges what was written back beyond (or short of) the last paced grant, once. */
    @Override
    public synchronized void wroteBack(long blocks, long nanoTime) {
        if (grantRate > 0 && lastDecision != null) {
            bucket.charge(blocks - lastDecision.blocks(), grantRate);
            grantRate = 0;
        }
    }

    @Override
    public synchronized Map<String, String> status() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("controller", NAME);
        m.put("cache", cache);
        m.putAll(settings.asMap());
        m.put("front_end", busy ? "busy" : "idle");
        m.put("idle_ms_now", Long.toString(lastIdleMillis));
        if (lastDecision != null) {
            m.put("granted_blocks", Integer.toString(lastDecision.blocks()));
            m.put("ask_again_ms", Long.toString(lastDecision.askAgainNanos() / 1_000_000));
            m.put("rate_blocks_per_sec", lastDecision.rateBlocksPerSec() < 0 ? "unlimited"
                    : Long.toString(lastDecision.rateBlocksPerSec()));
        }
        return m;
    }
}
