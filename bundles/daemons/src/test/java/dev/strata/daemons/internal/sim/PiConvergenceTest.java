package dev.strata.daemons.internal.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.WritebackController;
import dev.strata.daemons.internal.pi.PiController;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A cache bound to {@code pi} in a simulated run: a 4 GiB cache (2^20 blocks of 4 KiB) in front
 * of a device that writes back 5000 blocks/s, a front end dirtying 500 blocks/s (2 MB/s). With
 * bcache's gains P alone would settle 40 × 500 × 8 sectors ≈ 1.9 points above the target; the
 * integral removes that offset over some minutes.
 */
class PiConvergenceTest {
    private static final long T0 = 1_000_000_000_000L;
    private static final long CAPACITY = 1 << 20;

    @Test
    void holdsTheDirtyShareWithinTwoPointsOfTheTargetOnceReachedAndSettlesOnIt() {
        SimulatedCache c = new SimulatedCache(new PiController().open("c", Map.of()), CAPACITY, 4096, 5000, T0);
        c.foregroundBlocksPerSec = 500;
        long reachedAt = c.runUntil(() -> c.dirtyPercent() >= 10, 1_000_000);
        assertTrue(reachedAt > 0, "the dirty share rises to the target while the rate is at its minimum");
        double min = 100;
        double max = 0;
        for (int s = 0; s < 2500; s++) {
            c.run(1000);
            min = Math.min(min, c.dirtyPercent());
            max = Math.max(max, c.dirtyPercent());
        }
        assertTrue(min >= 8 && max <= 12, "held within ±2 points once reached: " + min + " … " + max);
        assertEquals(10, c.dirtyPercent(), 0.2, "settled on the target");
        long before = c.writtenBack();
        c.run(200_000);
        assertEquals(500 * 200, c.writtenBack() - before, 500 * 200 * 0.02, "settled: writeback matches the front end");
        assertEquals(0, c.stalledMillis());
    }

    @Test
    void anOverloadDoesNotWindTheIntegralUp() {
        // a device that writes back only 1000 blocks/s: twice the steady front end
        SimulatedCache c = new SimulatedCache(new PiController().open("c", Map.of()), CAPACITY, 4096, 1000, T0);
        c.foregroundBlocksPerSec = 500;
        c.run(2_000_000);
        assertEquals(10, c.dirtyPercent(), 0.3);
        // the front end now dirties three times faster than the device can write back: the rate
        // outgrows the device, the writer falls behind it, and the integral stops growing
        c.foregroundBlocksPerSec = 3000;
        c.run(60_000);
        assertEquals("false", c.session().status().get("keeping_up"));
        long integral = Long.parseLong(c.session().status().get("integral"));
        c.run(60_000);
        assertEquals("false", c.session().status().get("keeping_up"));
        assertEquals(integral, Long.parseLong(c.session().status().get("integral")),
                "no integration while the writer cannot keep up");
        // back to the old load: the excess is written back at the device's speed, and the share
        // comes back to the target and stays within ±2 points (a wound-up integral would drive
        // it far below)
        c.foregroundBlocksPerSec = 500;
        long back = c.runUntil(() -> c.dirtyPercent() <= 11.5, 2_000_000);
        assertTrue(back >= 0, "the excess is written back");
        double min = 100;
        double max = 0;
        for (int s = 0; s < 1500; s++) {
            c.run(1000);
            min = Math.min(min, c.dirtyPercent());
            max = Math.max(max, c.dirtyPercent());
        }
        assertTrue(min >= 8 && max <= 12, "no windup undershoot or overshoot afterwards: " + min + " … " + max);
    }

    @Test
    void twoCachesSharingOnePiServiceEachConvergeOnTheirOwnTarget() {
        WritebackController pi = new PiController();
        SimulatedCache a = new SimulatedCache(pi.open("a", Map.of()), CAPACITY, 4096, 5000, T0);
        SimulatedCache b = new SimulatedCache(pi.open("b", Map.of("writeback_percent", "20")), CAPACITY / 2, 2048, 3000, T0 + 7);
        a.foregroundBlocksPerSec = 500;
        b.foregroundBlocksPerSec = 200;
        for (int ms = 0; ms < 3_000_000; ms++) {
            a.run(1);
            b.run(1);
        }
        assertEquals(10, a.dirtyPercent(), 0.2);
        assertEquals(20, b.dirtyPercent(), 0.2);
        // each holds its own integral: at steady state I carries each front end's rate, in sectors/s
        assertEquals(500 * 8, Long.parseLong(a.session().status().get("integral_scaled")), 500 * 8 * 0.05);
        assertEquals(200 * 8, Long.parseLong(b.session().status().get("integral_scaled")), 200 * 8 * 0.05);
    }
}
