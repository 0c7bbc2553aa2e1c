package dev.strata.cache.writecache.internal.crash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.cache.writecache.internal.io.WritecacheSubject;
import dev.strata.testsupport.crash.CrashReplay;
import dev.strata.testsupport.crash.CrashStats;
import org.junit.jupiter.api.Test;

/** Crash replay over log-writes recordings of both the cache and the backing device, at every flush and FUA point. */
class WritecacheCrashReplayTest {
    static final CrashReplay.Options OPTIONS = new CrashReplay.Options(150, 1, CrashReplay.Options.DEFAULT.modes(), 200);

    @Test
    void roomy() {
        CrashStats stats = CrashReplay.run(WritecacheSubject.roomy(), OPTIONS);
        assertEquals(0, stats.mismatches());
        assertTrue(stats.crashPoints() >= 20, "crash points: " + stats.crashPoints());
    }

    @Test
    void fullCache() {
        CrashStats stats = CrashReplay.run(WritecacheSubject.small(), OPTIONS.withSeed(2));
        assertEquals(0, stats.mismatches());
        assertTrue(stats.crashPoints() >= 20, "crash points: " + stats.crashPoints());
    }

    @Test
    void sectors512() {
        CrashStats stats = CrashReplay.run(WritecacheSubject.sectors(), OPTIONS.withSeed(3));
        assertEquals(0, stats.mismatches());
        assertTrue(stats.crashPoints() >= 20, "crash points: " + stats.crashPoints());
    }
}
