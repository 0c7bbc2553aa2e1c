package dev.strata.cache.readcache.internal.crash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.testsupport.crash.CrashReplay;
import dev.strata.testsupport.crash.CrashStats;
import org.junit.jupiter.api.Test;

/** Crash replay of the writeboost-over-readcache stack over log-writes recordings of all three devices. */
class StackCrashReplayTest {
    @Test
    void replayEveryFlushPoint() {
        CrashStats stats = CrashReplay.run(new StackSubject(),
                new CrashReplay.Options(100, 3, CrashReplay.Options.DEFAULT.modes(), 60));
        assertEquals(0, stats.mismatches());
        assertTrue(stats.crashPoints() >= 10, "crash points: " + stats.crashPoints());
    }

    @Test
    void replayEveryFlushPointWithWritePromote() {
        CrashStats stats = CrashReplay.run(new StackSubject(true),
                new CrashReplay.Options(100, 3, CrashReplay.Options.DEFAULT.modes(), 60));
        assertEquals(0, stats.mismatches());
        assertTrue(stats.crashPoints() >= 10, "crash points: " + stats.crashPoints());
    }
}
