package dev.strata.testsupport.crash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Random;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;

/** The soak flag multiplies crashes by ten; the floor gives every target its 1,000 crashes. */
class CrashSoakTest {
    private static final CrashTestSubject PASS = TestSubjects.over("pass-through", TestSubjects.PassThrough::new, false);
    private static final CrashTestSubject LYING_FLUSH = TestSubjects.over("lying-flush", TestSubjects.LyingFlush::new, false);

    /** Runs {@code body} with {@code -Dstrata.soak=soak}, restoring the property after. */
    private static <T> T withSoak(boolean soak, Supplier<T> body) {
        String old = System.getProperty(CrashSoak.PROPERTY);
        System.setProperty(CrashSoak.PROPERTY, Boolean.toString(soak));
        try {
            return body.get();
        } finally {
            if (old == null) {
                System.clearProperty(CrashSoak.PROPERTY);
            } else {
                System.setProperty(CrashSoak.PROPERTY, old);
            }
        }
    }

    private static final List<CrashOp> TWO_CRASHES = List.of(new CrashOp.Write(0, 2, false), new CrashOp.Flush(),
            new CrashOp.Crash(CrashMode.KEEP_ALL, 1), new CrashOp.Write(1, 1, false),
            new CrashOp.PowerCut(new CrashOp.Flush(), 0, CrashMode.DROP_ALL, 2), new CrashOp.Read(0, 2));

    @Test
    void aSoakRunMakesTenTimesTheCrashesOfANormalRun() {
        CrashStats normal = withSoak(false, () -> CrashModelRunner.run(PASS, TWO_CRASHES));
        CrashStats soak = withSoak(true, () -> CrashModelRunner.run(PASS, TWO_CRASHES));
        assertEquals(2, normal.crashes());
        assertEquals(20, soak.crashes());
        assertEquals(1, soak.sequences(), "the variants are of one generated sequence");
        assertTrue(soak.report("p").contains("soak variants: 9"), soak.report("p"));
        assertEquals(0, soak.mismatches());
    }

    @Test
    void aSoakVariantCatchesWhatTheGeneratedCrashMissed() {
        // a lying flush survives a crash that keeps every write; the soak re-draws the crash's mode
        List<CrashOp> ops = List.of(new CrashOp.Write(0, 1, false), new CrashOp.Flush(), new CrashOp.Crash(CrashMode.KEEP_ALL, 0));
        withSoak(false, () -> CrashModelRunner.run(LYING_FLUSH, ops));
        CrashCheckFailure f = assertThrows(CrashCheckFailure.class, () -> withSoak(true, () -> CrashModelRunner.run(LYING_FLUSH, ops)));
        assertTrue(f.getMessage().startsWith("soak variant "), f.getMessage());
        assertTrue(f.getMessage().contains("hold neither their durable value"), f.getMessage());
    }

    @Test
    void redrawingKeepsTheIoAndChangesOnlyTheCrashes() {
        Random r = new Random(3);
        List<CrashOp> v = CrashOps.redrawCrashes(TWO_CRASHES, r);
        assertEquals(TWO_CRASHES.size(), v.size());
        for (int i = 0; i < v.size(); i++) {
            CrashOp a = TWO_CRASHES.get(i);
            if (a instanceof CrashOp.PowerCut pc) {
                assertEquals(pc.op(), ((CrashOp.PowerCut) v.get(i)).op());
            } else {
                assertEquals(a.getClass(), v.get(i).getClass());
                if (!(a instanceof CrashOp.Crash)) {
                    assertEquals(a, v.get(i));
                }
            }
        }
        assertNotEquals(TWO_CRASHES, v);
        List<CrashOp> noCrash = List.of(new CrashOp.Write(0, 1, false), new CrashOp.Flush());
        assertSame(noCrash, CrashOps.redrawCrashes(noCrash, r));
    }

    @Test
    void theFloorRunsSequencesUntilAThousandCrashes() {
        CrashStats stats = withSoak(false, () -> {
            CrashStats s = new CrashStats();
            CrashModelRunner.untilCrashes(PASS, s, CrashModelProperties.MIN_CRASHES, 1);
            return s;
        });
        assertTrue(stats.crashes() >= 1000, stats.report("pass-through"));
        assertTrue(stats.crashes() < 1100, "stops soon after the floor: " + stats.report("pass-through"));
        assertEquals(0, stats.mismatches());
    }

    @Test
    void theFloorChecksItsSequencesLikeAnyOther() {
        assertThrows(CrashCheckFailure.class, () -> withSoak(false, () -> {
            CrashModelRunner.untilCrashes(LYING_FLUSH, new CrashStats(), CrashModelProperties.MIN_CRASHES, 1);
            return null;
        }));
    }

    @Test
    void aSoakReplayReplaysTenRecordings() {
        CrashReplay.Options o = CrashReplay.Options.DEFAULT.withOperations(60);
        CrashStats normal = withSoak(false, () -> CrashReplay.run(PASS, o));
        CrashStats soak = withSoak(true, () -> CrashReplay.run(PASS, o));
        assertEquals(10 * normal.operations(), soak.operations());
        assertTrue(soak.crashes() > 5 * normal.crashes(), soak.replayReport("p") + " vs " + normal.replayReport("p"));
        assertEquals(0, soak.mismatches());
    }
}
