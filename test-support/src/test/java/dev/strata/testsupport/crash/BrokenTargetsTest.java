package dev.strata.testsupport.crash;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The checker must catch targets that break the durability contract. */
class BrokenTargetsTest {

    private static final CrashTestSubject LYING_FLUSH = TestSubjects.over("lying-flush", TestSubjects.LyingFlush::new, false);
    private static final CrashTestSubject DROPPED_FUA = TestSubjects.over("dropped-fua", TestSubjects.DroppedFua::new, false);

    @Test
    void lyingFlushIsCaughtByTheMinimalSequence() {
        List<CrashOp> ops = List.of(new CrashOp.Write(0, 1, false), new CrashOp.Flush(), new CrashOp.Crash(CrashMode.DROP_ALL, 0));
        CrashCheckFailure f = assertThrows(CrashCheckFailure.class, () -> CrashModelRunner.run(LYING_FLUSH, ops));
        System.out.println("expected failure (lying flush):\n" + f.getMessage());
        assertTrue(f.getMessage().contains("sector 0 (offset 0) holds zero, allowed durable {w1@s0}"), f.getMessage());
        assertTrue(f.getMessage().contains(">> #2 crash drop_all #0"), f.getMessage());
    }

    @Test
    void droppedFuaIsCaughtByTheMinimalSequence() {
        List<CrashOp> ops = List.of(new CrashOp.Write(1, 1, true), new CrashOp.Crash(CrashMode.DROP_ALL, 0));
        CrashCheckFailure f = assertThrows(CrashCheckFailure.class, () -> CrashModelRunner.run(DROPPED_FUA, ops));
        assertTrue(f.getMessage().contains("sector 8 (offset 4096) holds zero, allowed durable {w1@s8}"), f.getMessage());
    }

    @Test
    void randomSequencesCatchBothBrokenTargets() {
        for (CrashTestSubject broken : List.of(LYING_FLUSH, DROPPED_FUA)) {
            assertTrue(failsWithin(broken, 40), broken.name() + " was not caught by 40 random sequences");
        }
    }

    @Test
    void correctPassThroughSurvivesTheSameRandomSequences() {
        CrashStats stats = new CrashStats();
        Random r = new Random(42);
        CrashTestSubject ok = TestSubjects.over("pass-through", TestSubjects.PassThrough::new, false);
        for (int i = 0; i < 40; i++) {
            CrashModelRunner.run(ok, CrashOps.random(ok.workload(), r, 60), stats);
        }
        System.out.println(stats.report(ok.name()));
        assertEquals(0, stats.mismatches());
        assertTrue(stats.crashes() > 0);
    }

    @Test
    void plainDiskBreaksTheLogPropertyButNotTheSectorModel() {
        // w1 and w2 volatile; the crash keeps w2 and drops w1: each sector legal, but not a prefix.
        CrashTestSubject disk = TestSubjects.over("disk as log", TestSubjects.PassThrough::new, true);
        boolean caught = false;
        for (long seed = 0; seed < 50 && !caught; seed++) {
            List<CrashOp> ops = List.of(new CrashOp.Write(0, 1, false), new CrashOp.Write(1, 1, false),
                    new CrashOp.Crash(CrashMode.SUBSET, seed));
            try {
                CrashModelRunner.run(disk, ops);
            } catch (CrashCheckFailure f) {
                assertTrue(f.getMessage().contains("log property violated"), f.getMessage());
                caught = true;
            }
        }
        assertTrue(caught, "no seed made a non-prefix subset survive");
    }

    private static boolean failsWithin(CrashTestSubject subject, int sequences) {
        Random r = new Random(7);
        for (int i = 0; i < sequences; i++) {
            try {
                CrashModelRunner.run(subject, CrashOps.random(subject.workload(), r, 60));
            } catch (CrashCheckFailure expected) {
                return true;
            }
        }
        return false;
    }
}
