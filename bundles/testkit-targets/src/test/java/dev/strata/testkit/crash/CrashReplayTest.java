package dev.strata.testkit.crash;

import dev.strata.testsupport.crash.CrashCheckFailure;
import dev.strata.testsupport.crash.CrashModelRunner;
import dev.strata.testsupport.crash.CrashOps;
import dev.strata.testsupport.crash.CrashReplay;
import dev.strata.testsupport.crash.CrashStats;
import dev.strata.testsupport.crash.CrashTestSubject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Crash replay over log-writes recordings for every target, and the broken one caught. */
class CrashReplayTest {

    private static void replays(CrashTestSubject subject) {
        CrashStats stats = CrashReplay.run(subject, CrashReplay.Options.DEFAULT);
        assertEquals(0, stats.mismatches());
        assertTrue(stats.crashPoints() >= 20, "crash points: " + stats.crashPoints());
    }

    @Test
    void linear() {
        replays(Subjects.linear());
    }

    @Test
    void delay() {
        replays(Subjects.delay());
    }

    @Test
    void flakeyUp() {
        replays(Subjects.flakeyUp());
    }

    @Test
    void logwrites() {
        replays(Subjects.logwrites());
    }

    @Test
    void spindle() {
        replays(Subjects.spindle());
    }

    @Test
    void linearRecordedOnAndReplayedIntoFiles(@TempDir Path dir) {
        replays(DriverSubjects.linearOverDriver("file", dir));
    }

    @Test
    void linearRecordedOnAndReplayedIntoDirectIo(@TempDir Path dir) {
        replays(DriverSubjects.linearOverDriver("direct", dir));
    }

    @Test
    void linearRecordedOnAndReplayedIntoMemory(@TempDir Path dir) {
        replays(DriverSubjects.linearOverDriver("memory", dir));
    }

    @Test
    void aDeviceThatDropsWritesIsCaughtByReplayAndByTheModel() {
        CrashTestSubject broken = Subjects.flakeyDroppingWrites();
        CrashCheckFailure replay = assertThrows(CrashCheckFailure.class, () -> CrashReplay.run(broken, CrashReplay.Options.DEFAULT));
        System.out.println("expected failure (drop_writes under replay): " + replay.getMessage().lines().findFirst().orElse(""));
        CrashCheckFailure model = assertThrows(CrashCheckFailure.class, () -> {
            Random r = new Random(5);
            for (int i = 0; i < 20; i++) {
                CrashModelRunner.run(broken, CrashOps.random(broken.workload(), r, 40));
            }
        });
        assertTrue(model.getMessage().contains("do not return the newest acknowledged value")
                || model.getMessage().contains("hold neither their durable value"), model.getMessage());
    }
}
