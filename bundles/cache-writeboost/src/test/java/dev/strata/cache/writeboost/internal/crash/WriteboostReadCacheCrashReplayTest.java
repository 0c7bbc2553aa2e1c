package dev.strata.cache.writeboost.internal.crash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.testsupport.crash.CrashReplay;
import dev.strata.testsupport.crash.CrashStats;
import org.junit.jupiter.api.Test;

/** Crash replay over log-writes recordings of both devices at every flush point, read caching on. */
class WriteboostReadCacheCrashReplayTest {
    @Test
    void readCaching() {
        CrashStats stats = CrashReplay.run(WriteboostSubject.readCaching(), WriteboostCrashReplayTest.OPTIONS);
        assertEquals(0, stats.mismatches());
        assertTrue(stats.crashPoints() >= 20, "crash points: " + stats.crashPoints());
    }
}
