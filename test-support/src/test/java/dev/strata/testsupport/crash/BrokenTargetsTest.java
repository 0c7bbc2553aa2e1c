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

    /** A target that writes its data, then flushes, then writes a "commit" block: crashed at every step. */
    static final class TwoPhase extends TestSubjects.PassThrough {
        final boolean flushBetween;

        TwoPhase(dev.strata.api.BlockDevice lower, boolean flushBetween) {
            super(lower);
            this.flushBetween = flushBetween;
        }

        @Override
        public void flush() throws java.io.IOException {
            // commit: a marker write that depends on everything before it being durable
            if (flushBetween) {
                lower.flush();
            }
            lower.write(lower.size() - 4096, java.nio.ByteBuffer.allocate(4096), 0);
            lower.flush();
        }
    }

    @Test
    void powerCutAtEveryStepOfAFlush() {
        CrashTestSubject ok = TestSubjects.over("two-phase", l -> new TwoPhase(l, true), false);
        List<CrashOp> prefix = List.of(new CrashOp.Write(0, 2, false), new CrashOp.Write(5, 1, false));
        CrashStats stats = CrashModelRunner.atEveryStep(ok, prefix, new CrashOp.Flush(), CrashMode.DROP_ALL);
        System.out.println("power cut at every step of a flush: " + stats.report("two-phase"));
        assertEquals(4, stats.crashes(), "flush, write, flush: three lower requests, cut before each and after the last");
        assertEquals(0, stats.mismatches());
    }

    @Test
    void powerCutsInsideOperationsCatchALyingFlushToo() {
        List<CrashOp> ops = List.of(new CrashOp.Write(0, 1, false),
                new CrashOp.PowerCut(new CrashOp.Flush(), 5, CrashMode.DROP_ALL, 1));
        CrashCheckFailure f = assertThrows(CrashCheckFailure.class, () -> CrashModelRunner.run(LYING_FLUSH, ops));
        assertTrue(f.getMessage().contains("power cut after 5 during [flush]"), f.getMessage());
    }

    @Test
    void aTargetWhoseAbandonThrowsFailsTheRunInsteadOfPassingSilently() {
        CrashTestSubject ok = TestSubjects.over("pass-through", TestSubjects.PassThrough::new, false);
        CrashTestSubject throwing = new CrashTestSubject() {
            @Override
            public String name() {
                return "abandon throws";
            }

            @Override
            public List<DeviceSpec> devices() {
                return ok.devices();
            }

            @Override
            public dev.strata.api.BlockDevice create(List<dev.strata.api.BlockDevice> devices) throws java.io.IOException {
                return ok.create(devices);
            }

            @Override
            public dev.strata.api.BlockDevice reopen(List<dev.strata.api.BlockDevice> devices) throws java.io.IOException {
                return ok.reopen(devices);
            }

            @Override
            public void abandon(dev.strata.api.BlockDevice target) {
                throw new AssertionError("abandon broke");
            }
        };
        List<CrashOp> ops = List.of(new CrashOp.Write(0, 1, false), new CrashOp.Flush(), new CrashOp.Crash(CrashMode.DROP_ALL, 0));
        CrashModelRunner.run(ok, ops); // the same sequence passes with a well-behaved abandon
        CrashCheckFailure f = assertThrows(CrashCheckFailure.class, () -> CrashModelRunner.run(throwing, ops));
        assertTrue(f.getMessage().contains("abandoning the target after the crash failed") && f.getMessage().contains("abandon broke"),
                f.getMessage());
    }
}
