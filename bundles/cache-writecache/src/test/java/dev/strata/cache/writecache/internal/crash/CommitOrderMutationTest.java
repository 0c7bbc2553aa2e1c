package dev.strata.cache.writecache.internal.crash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.cache.writecache.internal.io.WritecacheSubject;
import dev.strata.testsupport.crash.CrashCheckFailure;
import dev.strata.testsupport.crash.CrashModelRunner;
import dev.strata.testsupport.crash.CrashOp;
import dev.strata.testsupport.crash.CrashOps;
import dev.strata.testsupport.crash.CrashStats;
import dev.strata.testsupport.crash.CrashTestSubject;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The mutation check of the commit order: with the data wait moved after the cache flush (the
 * order dm-writecache had before its 2020 fix "incorrect flush sequence when doing SSD mode
 * commit"), the crash model must find a lost write; with the correct order the same sequences
 * pass. Without this the crash tests could be blind to the one ordering the design insists on.
 */
class CommitOrderMutationTest {
    private static final int SEQUENCES = 200;

    /** Runs seeded random sequences until one fails; returns the failure (null if none did). */
    private static CrashCheckFailure firstFailure(CrashTestSubject subject, CrashStats stats) {
        Random r = new Random(2020);
        for (int i = 0; i < SEQUENCES; i++) {
            List<CrashOp> ops = CrashOps.random(subject.workload(), r, 40);
            try {
                CrashModelRunner.run(subject, ops, stats);
            } catch (CrashCheckFailure e) {
                return e;
            }
        }
        return null;
    }

    @Test
    void thePre2020OrderLosesWritesAndTheCrashModelFindsIt() {
        CrashStats stats = new CrashStats();
        CrashCheckFailure f = firstFailure(WritecacheSubject.pre2020(), stats);
        assertNotNull(f, "the crash model did not catch the pre-2020 commit order in " + SEQUENCES + " sequences");
        assertTrue(f.getMessage().contains("hold neither their durable value nor one acknowledged since"), f.getMessage());
        assertTrue(stats.mismatches() > 0);
        System.out.println("pre-2020 commit order caught after " + stats.sequences() + " sequences: "
                + f.getMessage().lines().findFirst().orElse(""));
    }

    @Test
    void theCorrectOrderPassesTheSameSequences() {
        CrashStats stats = new CrashStats();
        CrashCheckFailure f = firstFailure(WritecacheSubject.roomy(), stats);
        if (f != null) {
            throw f;
        }
        assertEquals(SEQUENCES, stats.sequences());
        System.out.println(stats.report("writecache (mutation control)"));
    }
}
