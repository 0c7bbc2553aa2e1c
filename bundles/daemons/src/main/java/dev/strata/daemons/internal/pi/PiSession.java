package dev.strata.daemons.internal.pi;

import static dev.strata.daemons.internal.pi.PiTunables.NAME;
import static dev.strata.daemons.internal.pi.PiTunables.RATE_MAXIMUM;
import static dev.strata.daemons.internal.pi.PiTunables.RATE_MINIMUM;
import static dev.strata.daemons.internal.pi.PiTunables.UPDATE_SECONDS;
import static dev.strata.daemons.internal.pi.PiTunables.WRITEBACK_PERCENT;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.WritebackController.CacheLoad;
import dev.strata.api.WritebackController.Decision;
import dev.strata.api.WritebackController.Occupancy;
import dev.strata.api.WritebackController.Session;
import dev.strata.daemons.internal.Settings;
import dev.strata.daemons.internal.TokenBucket;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One cache's {@code pi} pacing: its own {@link PiControl} (the integral), its own
 * {@link TokenBucket}, its own tunables. The rate is updated when a decision finds an update due
 * ({@code update_seconds} after the last one; bcache runs the update from a timer, a Strata
 * controller has no clock and updates on the cache's next call), and every grant is spaced by the
 * bucket at the current rate.
 * <p>
 * "Keeping up" (bcache: the rate limiter's next slot is less than 1 ms in the past) is judged
 * with a {@link #KEEPING_UP_SLACK_NANOS wider slack}: a Strata cache asks from a Java thread
 * between batches, so it is routinely a few milliseconds late without the device being slow.
 * <p>
 * Locking: decide, set and status are synchronized on the session; the cache calls decide from
 * one thread, the shell calls set and status from another, and each is short.
 */
final class PiSession implements Session {
    /** How soon a clean cache asks again. */
    static final long CLEAN_POLL_NANOS = 1_000_000_000L;
    /** How far behind its rate the writer may be and still count as keeping up. */
    static final long KEEPING_UP_SLACK_NANOS = TokenBucket.QUANTUM_NANOS;

    private final String cache;
    private final PiControl control = new PiControl();
    private final TokenBucket bucket = new TokenBucket();
    private Settings settings;

    private boolean updated;
    private long nextUpdate;
    private long updates;
    private boolean keepingUp = true;
    private CacheLoad lastLoad;
    private Decision lastDecision;
    /** The rate of the last grant (0: it was not a paced grant, or it has been charged). */
    private double grantRate;

    PiSession(String cache, Map<String, String> tunables) {
        this.cache = cache;
        Settings s = Settings.of(PiTunables.ALL, tunables);
        checkRates(s, null);
        this.settings = s;
    }

    @Override
    public synchronized Decision decide(CacheLoad load) {
        return decide(load, null);
    }

    @Override
    public synchronized Decision decide(CacheLoad load, Occupancy occupancy) {
        Settings s = settings;
        lastLoad = load;
        Decision d;
        if (load.maxBatch() <= 0 || load.dirtyBlocks() <= 0) {
            // bcache stops updating the rate while nothing is dirty; so does this
            d = Decision.waitFor(CLEAN_POLL_NANOS);
        } else if (s.get(WRITEBACK_PERCENT) == 0) {
            // bcache: writeback_percent 0 turns the rate limit off
            d = Decision.fullSpeed(load.maxBatch());
        } else {
            long now = load.nanoTime();
            if (!updated || now - nextUpdate >= 0) {
                update(s, load, occupancy, now);
            }
            double blocksPerSec = control.rate() * 512.0 / blockSize(load);
            int g = bucket.take(now, blocksPerSec, Math.min(load.maxBatch(), load.dirtyBlocks()));
            d = new Decision(g, bucket.waitNanos(now), Math.round(blocksPerSec));
            grantRate = g > 0 ? blocksPerSec : 0;
        }
        if (d.blocks() <= 0 || d.rateBlocksPerSec() < 0) {
            grantRate = 0;
        }
        lastDecision = d;
        return d;
    }

    private void update(Settings s, CacheLoad load, Occupancy occupancy, long now) {
        int bs = blockSize(load);
        // the first update has no interval behind it to integrate over: it only sets P
        keepingUp = updated && bucket.behindNanos(now) < KEEPING_UP_SLACK_NANOS;
        PiControl.Fragmentation frag = null;
        if (occupancy != null && load.capacityBlocks() > 0 && occupancy.unitBlocks() > 0) {
            frag = new PiControl.Fragmentation(occupancy.usedBlocks() * 100 / load.capacityBlocks(),
                    occupancy.usedBlocks() / occupancy.unitBlocks(), sectors(occupancy.unitBlocks(), bs));
        }
        control.update(s, sectors(load.dirtyBlocks(), bs), sectors(load.capacityBlocks(), bs), keepingUp, frag);
        updated = true;
        updates++;
        nextUpdate = now + s.get(UPDATE_SECONDS) * 1_000_000_000L;
    }

    @Override
    public synchronized boolean set(String key, String value) {
        Settings n = settings.with(key, value);
        if (n == null) {
            return false;
        }
        checkRates(n, key);
        settings = n;
        return true;
    }

    private static void checkRates(Settings s, String key) {
        long min = s.get(RATE_MINIMUM);
        long max = s.get(RATE_MAXIMUM);
        if (min > max) {
            String what = RATE_MAXIMUM.key().equals(key) ? RATE_MAXIMUM.key() + "=" + max : RATE_MINIMUM.key() + "=" + min;
            throw new InvalidArgumentException(NAME + ": " + what + " leaves rate_minimum (" + min
                    + ") above rate_maximum (" + max + "); allowed rate_minimum ≤ rate_maximum, 1 to 1000000000 sectors per second");
        }
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
        if (lastLoad != null) {
            m.put("dirty_blocks", Long.toString(lastLoad.dirtyBlocks()));
            m.put("dirty_percent", lastLoad.capacityBlocks() <= 0 ? "0"
                    : String.format(Locale.ROOT, "%.1f", 100.0 * lastLoad.dirtyBlocks() / lastLoad.capacityBlocks()));
        }
        m.put("target_sectors", Long.toString(control.target()));
        m.put("error_sectors", Long.toString(control.error()));
        m.put("proportional", Long.toString(control.proportional()));
        m.put("fragment_term", control.fragmentTerm() < 0 ? "off" : Long.toString(control.fragmentTerm()));
        m.put("integral", Long.toString(control.integral()));
        m.put("integral_scaled", Long.toString(control.integralScaled()));
        m.put("rate_sectors_per_sec", Long.toString(control.rate()));
        m.put("keeping_up", Boolean.toString(keepingUp));
        m.put("updates", Long.toString(updates));
        if (lastDecision != null) {
            m.put("granted_blocks", Integer.toString(lastDecision.blocks()));
            m.put("ask_again_ms", Long.toString(lastDecision.askAgainNanos() / 1_000_000));
            m.put("rate_blocks_per_sec", Long.toString(lastDecision.rateBlocksPerSec()));
        }
        return m;
    }

    /** The integral in sector-seconds (for tests and status). */
    synchronized long integral() {
        return control.integral();
    }

    /** The current rate in sectors per second. */
    synchronized long rate() {
        return control.rate();
    }

    private static int blockSize(CacheLoad load) {
        return Math.max(512, load.blockSize());
    }

    private static long sectors(long blocks, int blockSize) {
        return Math.multiplyExact(blocks, (long) blockSize) >> 9;
    }
}
