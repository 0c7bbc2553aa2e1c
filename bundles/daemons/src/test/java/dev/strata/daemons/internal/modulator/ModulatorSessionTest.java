package dev.strata.daemons.internal.modulator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.WritebackController.CacheLoad;
import dev.strata.api.WritebackController.Decision;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** dm-writeboost's gate with made-up times and busy readings. */
class ModulatorSessionTest {
    private static final long S = 1_000_000_000L;
    private static final long MS = 1_000_000L;
    private static final long T0 = 3 * S;

    private static CacheLoad load(long t, int busy, long dirty) {
        return new CacheLoad(t, dirty, 10_000, 4096, busy, 0, 0, 0, 512);
    }

    @Test
    void fullBatchBelowTheThresholdNothingAtOrAboveIt() {
        ModulatorSession m = new ModulatorSession("c", Map.of());
        assertEquals(Decision.fullSpeed(512), m.decide(load(T0, 69, 100)));
        ModulatorSession shut = new ModulatorSession("c", Map.of());
        Decision d = shut.decide(load(T0, 70, 100));
        assertEquals(0, d.blocks(), "strictly below: util < threshold, as dm-writeboost compares");
        assertEquals(S, d.askAgainNanos(), "shut until the next evaluation, one second on");
    }

    @Test
    void theGateHoldsForASecondThenFollowsTheBusyMeter() {
        ModulatorSession m = new ModulatorSession("c", Map.of());
        assertEquals(0, m.decide(load(T0, 90, 100)).blocks());
        Decision d = m.decide(load(T0 + 400 * MS, 10, 100));
        assertEquals(0, d.blocks(), "evaluated once a second, like modulator_proc");
        assertEquals(600 * MS, d.askAgainNanos());
        assertEquals(512, m.decide(load(T0 + S, 10, 100)).blocks());
        assertEquals(512, m.decide(load(T0 + 1500 * MS, 95, 100)).blocks(), "open until the next second");
        assertEquals(0, m.decide(load(T0 + 2 * S, 95, 100)).blocks());
        assertEquals("shut", m.status().get("gate"));
        assertEquals("95", m.status().get("backing_busy_percent"));
    }

    @Test
    void zeroTurnsBackgroundWritebackOffAndHundredLeavesItOn() {
        ModulatorSession off = new ModulatorSession("c", Map.of("writeback_threshold", "0"));
        assertEquals(0, off.decide(load(T0, 0, 100)).blocks());
        ModulatorSession on = new ModulatorSession("c", Map.of("writeback_threshold", "100"));
        assertEquals(512, on.decide(load(T0, 99, 100)).blocks());
    }

    @Test
    void aCleanCacheWaits() {
        ModulatorSession m = new ModulatorSession("c", Map.of());
        assertEquals(Decision.waitFor(ModulatorSession.CLEAN_POLL_NANOS), m.decide(load(T0, 0, 0)));
    }

    @Test
    void aNewThresholdAppliesFromTheNextDecision() {
        ModulatorSession m = new ModulatorSession("c", Map.of());
        assertEquals(0, m.decide(load(T0, 80, 100)).blocks());
        m.set("writeback_threshold", "90");
        assertEquals(512, m.decide(load(T0 + MS, 80, 100)).blocks());
        assertEquals("90", m.status().get("writeback_threshold"));
    }

    @Test
    void badValuesAreOneLineWithTheRange() {
        ModulatorSession m = new ModulatorSession("c", Map.of());
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> m.set("writeback_threshold", "101"));
        assertEquals("modulator: writeback_threshold=101 is out of range; allowed 0 to 100 "
                + "(percent of the backing device's busy time below which writeback runs; 0 turns it off)", e.getMessage());
        assertEquals("70", m.status().get("writeback_threshold"));
        assertFalse(m.set("writeback_percent", "5"));
        assertThrows(InvalidArgumentException.class, () -> new ModulatorController().open("c", Map.of("writeback_threshold", "-1")));
    }
}
