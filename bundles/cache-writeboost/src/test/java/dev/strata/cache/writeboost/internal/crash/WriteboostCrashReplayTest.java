package dev.strata.cache.writeboost.internal.crash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.testsupport.crash.CrashReplay;
import dev.strata.testsupport.crash.CrashStats;
import org.junit.jupiter.api.Test;

/** Crash replay over log-writes recordings of both the cache and the backing device, at every flush point. */
class WriteboostCrashReplayTest {
    /** 120 operations, every crash mode, at most 150 crash points: about 30 s per subject. */
    static final CrashReplay.Options OPTIONS = new CrashReplay.Options(120, 1, CrashReplay.Options.DEFAULT.modes(), 150);


    @Test
    void cached() {
        CrashStats stats = CrashReplay.run(WriteboostSubject.cached(), OPTIONS);
        assertEquals(0, stats.mismatches());
        assertTrue(stats.crashPoints() >= 20, "crash points: " + stats.crashPoints());
    }

    @Test
    void bypassing() {
        CrashStats stats = CrashReplay.run(WriteboostSubject.bypassing(), OPTIONS);
        assertEquals(0, stats.mismatches());
        assertTrue(stats.crashPoints() >= 20, "crash points: " + stats.crashPoints());
    }
}
