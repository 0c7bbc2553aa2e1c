package dev.strata.daemons.internal.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.daemons.internal.modulator.ModulatorController;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A cache bound to {@code modulator} in a simulated run: writeback stays off while the front
 * end keeps the backing device busier than the threshold, and drains the cache once it does not.
 */
class ModulatorConvergenceTest {
    private static final long T0 = 1_000_000_000_000L;

    @Test
    void noWritebackWhileTheDeviceIsBusyThenTheCacheDrainsToClean() {
        SimulatedCache c = new SimulatedCache(new ModulatorController().open("c", Map.of()), 1 << 18, 4096, 5000, T0);
        c.foregroundBlocksPerSec = 500;
        c.foregroundBackingShare = 0.8; // 80 % busy with the front end's reads: above 70
        c.run(60_000);
        assertEquals(0, c.writtenBack(), "gate shut while the device is 80 % busy");
        assertEquals(30_000, c.dirtyBlocks(), 1);
        c.foregroundBlocksPerSec = 100;
        c.foregroundBackingShare = 0.2;
        long drained = c.runUntil(() -> c.dirtyBlocks() <= 100, 120_000);
        assertTrue(drained > 0, "with the device 20 % busy the backlog drains");
        // the gate counts writeback's own I/O as busy time (dm-writeboost's io_ticks do too), so it
        // shuts every other second: the drain is at least half the device's free speed
        assertTrue(drained <= 30_000.0 / (5000 * 0.8 / 2 - 100) * 1000 * 1.1, "drained in " + drained + " ms");
        // and it stays clean but for the last second's foreground writes
        for (int s = 0; s < 60; s++) {
            c.run(1000);
            assertTrue(c.dirtyBlocks() <= 5000 * 0.8 + 100, "dirty " + c.dirtyBlocks());
        }
    }

    @Test
    void thresholdHundredWritesBackUnlessTheDeviceIsFullyBusy() {
        SimulatedCache c = new SimulatedCache(new ModulatorController().open("c", Map.of("writeback_threshold", "100")),
                1 << 18, 4096, 5000, T0);
        c.foregroundBlocksPerSec = 500;
        c.foregroundBackingShare = 0.8;
        c.run(60_000);
        assertTrue(c.dirtyBlocks() < 5000, "keeps up with the front end: dirty " + c.dirtyBlocks());
    }
}
