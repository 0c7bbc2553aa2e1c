package dev.strata.daemons.internal.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.WritebackController.CacheLoad;
import dev.strata.api.WritebackController.Decision;
import dev.strata.api.WritebackController.Session;
import dev.strata.daemons.internal.idle.IdleController;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A cache bound to {@code idle} in a simulated run: bursts of foreground writes with idle spells
 * between them. While busy, writeback is held to the floor (256 KiB/s = 64 blocks/s); from
 * {@code idle_ms} into an idle spell it runs unthrottled and the cache drains to clean.
 */
class IdleConvergenceTest {
    private static final long T0 = 1_000_000_000_000L;

    /** What "unthrottled" means in the comparison: a full batch whenever asked. */
    private static final Session UNTHROTTLED = new Session() {
        @Override
        public Decision decide(CacheLoad load) {
            return Decision.fullSpeed(load.maxBatch());
        }

        @Override
        public Map<String, String> status() {
            return Map.of();
        }
    };

    @Test
    void floorWhileBusyCleanAfterEachIdleSpell() {
        SimulatedCache c = new SimulatedCache(new IdleController().open("c", Map.of()), 1 << 18, 4096, 5000, T0);
        for (int burst = 0; burst < 3; burst++) {
            c.foregroundBlocksPerSec = 500;
            long before = c.writtenBack();
            c.run(10_000);
            long duringBusy = c.writtenBack() - before;
            assertTrue(duringBusy <= 64 * 10 + 7, "held to the floor while busy: " + duringBusy + " blocks in 10 s");
            assertTrue(duringBusy >= 64 * 10 * 0.8, "but the floor is used: " + duringBusy);
            c.foregroundBlocksPerSec = 0;
            c.run(2_900);
            assertEquals("busy", c.session().status().get("front_end"), "not idle before idle_ms");
            long clean = c.runUntil(() -> c.dirtyBlocks() == 0, 10_000);
            assertTrue(clean > 0, "clean within the idle spell");
        }
    }

    @Test
    void theTailDrainsAtLeastNineTenthsAsFastAsUnthrottled() {
        double idle = tailDrainRate(new IdleController().open("c", Map.of()), 3000);
        double free = tailDrainRate(UNTHROTTLED, 0);
        assertTrue(idle >= 0.9 * free, "idle " + idle + " blocks/s vs unthrottled " + free);
    }

    /** Blocks per second written back from {@code fromMs} into an idle spell until clean. */
    private static double tailDrainRate(Session session, long fromMs) {
        SimulatedCache c = new SimulatedCache(session, 1 << 18, 4096, 5000, T0);
        c.foregroundBlocksPerSec = 20_000; // fill fast: writeback cannot keep up with this
        c.run(5_000);
        c.foregroundBlocksPerSec = 0;
        c.run(fromMs);
        long dirty = c.dirtyBlocks();
        long ms = c.runUntil(() -> c.dirtyBlocks() == 0, 600_000);
        assertTrue(ms > 0 && dirty > 10_000, "a tail to drain: " + dirty + " blocks in " + ms + " ms");
        return dirty * 1000.0 / ms;
    }
}
