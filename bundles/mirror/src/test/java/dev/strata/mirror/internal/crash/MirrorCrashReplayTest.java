package dev.strata.mirror.internal.crash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.testsupport.crash.CrashReplay;
import dev.strata.testsupport.crash.CrashStats;
import org.junit.jupiter.api.Test;

/**
 * Crash replay over log-writes recordings of both legs and the log: a power cut at every flush
 * and FUA point (every log commit is a FUA write, so every step of the integrated flush: the mark,
 * the leg writes, the leg flushes, the clear), in every crash mode.
 */
class MirrorCrashReplayTest {
    static final CrashReplay.Options OPTIONS = new CrashReplay.Options(200, 1, CrashReplay.Options.DEFAULT.modes(), 400);

    @Test
    void everyFlushPoint() {
        CrashStats stats = CrashReplay.run(new MirrorSubject(), OPTIONS);
        assertEquals(0, stats.mismatches());
        assertTrue(stats.crashPoints() >= 100, "crash points: " + stats.crashPoints());
    }
}
