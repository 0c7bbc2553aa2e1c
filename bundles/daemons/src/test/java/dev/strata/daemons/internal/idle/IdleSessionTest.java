package dev.strata.daemons.internal.idle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.WritebackController.CacheLoad;
import dev.strata.api.WritebackController.Decision;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The idle switch with made-up times. Defaults: idle after 3000 ms, 256 KiB/s while busy, which
 * with 4 KiB blocks is 64 blocks/s; a quantum (100 ms) of it is 6.4 blocks.
 */
class IdleSessionTest {
    private static final long S = 1_000_000_000L;
    private static final long MS = 1_000_000L;
    private static final long T0 = 11 * S;

    private static CacheLoad load(long t, long idleMillis, long dirty) {
        return new CacheLoad(t, dirty, 100_000, 4096, 0, 0, 0, idleMillis, 1024);
    }

    @Test
    void busyFrontEndGetsTheFloorSpacedByTheBucket() {
        IdleSession s = new IdleSession("c", Map.of());
        Decision d = s.decide(load(T0, 100, 5000));
        assertEquals(6, d.blocks());
        assertEquals(64, d.rateBlocksPerSec());
        assertEquals(93_750_000, d.askAgainNanos(), "6 blocks at 64/s cost 93.75 ms");
        assertEquals(0, s.decide(load(T0 + 50 * MS, 150, 5000)).blocks());
        assertEquals(6, s.decide(load(T0 + 94 * MS, 194, 5000)).blocks());
        assertEquals("busy", s.status().get("front_end"));
    }

    @Test
    void idleSwitchFullSpeedFromIdleMsOn() {
        IdleSession s = new IdleSession("c", Map.of());
        assertEquals(6, s.decide(load(T0, 2999, 5000)).blocks());
        assertEquals(Decision.fullSpeed(1024), s.decide(load(T0 + MS, 3000, 5000)));
        assertEquals(Decision.fullSpeed(1024), s.decide(load(T0 + 2 * MS, 60_000, 5000)));
        assertEquals("idle", s.status().get("front_end"));
        // busy again: the bucket starts empty, not with the idle spell banked
        assertEquals(6, s.decide(load(T0 + 10 * S, 5, 5000)).blocks());
    }

    @Test
    void aWaitEndsWhenTheFrontEndWouldTurnIdle() {
        IdleSession s = new IdleSession("c", Map.of("busy_kib_per_sec", "4"));
        // 4 KiB/s = 1 block/s: a grant of one block costs 1 s, but idle comes in 300 ms
        s.decide(load(T0, 2000, 5000));
        Decision d = s.decide(load(T0 + 700 * MS, 2700, 5000));
        assertEquals(0, d.blocks());
        assertEquals(300 * MS, d.askAgainNanos());
    }

    @Test
    void zeroFloorPausesWritebackWhileBusyAsDmWritecacheDoes() {
        IdleSession s = new IdleSession("c", Map.of("busy_kib_per_sec", "0"));
        assertEquals(Decision.waitFor(2000 * MS), s.decide(load(T0, 1000, 5000)));
        assertEquals(Decision.fullSpeed(1024), s.decide(load(T0 + 2 * S, 3000, 5000)));
    }

    @Test
    void zeroIdleMsMeansAlwaysFullSpeed() {
        IdleSession s = new IdleSession("c", Map.of("idle_ms", "0"));
        assertEquals(Decision.fullSpeed(1024), s.decide(load(T0, 0, 5000)));
    }

    @Test
    void aCleanCacheWaits() {
        assertEquals(Decision.waitFor(IdleSession.CLEAN_POLL_NANOS), new IdleSession("c", Map.of()).decide(load(T0, 9999, 0)));
    }

    @Test
    void badValuesAreOneLineWithTheRange() {
        IdleSession s = new IdleSession("c", Map.of());
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> s.set("idle_ms", "-5"));
        assertEquals("idle: idle_ms=-5 is out of range; allowed 0 to 3600000 "
                + "(milliseconds without foreground requests after which writeback runs at full speed)", e.getMessage());
        e = assertThrows(InvalidArgumentException.class, () -> s.set("busy_kib_per_sec", "fast"));
        assertEquals("idle: busy_kib_per_sec=fast is not a whole number; allowed 0 to 100000000 "
                + "(writeback rate in KiB per second while the front end is busy; 0 pauses writeback then)", e.getMessage());
        assertEquals("3000", s.status().get("idle_ms"));
        assertThrows(InvalidArgumentException.class, () -> new IdleController().open("c", Map.of("idle_ms", "1h")));
    }
}
