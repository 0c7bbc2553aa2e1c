package dev.strata.testkit.crash;

import dev.strata.testsupport.crash.CrashMode;
import dev.strata.testsupport.crash.CrashModelRunner;
import dev.strata.testsupport.crash.CrashOp;
import dev.strata.testsupport.crash.CrashStats;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Power cut after each lower request of an operation in turn, until the operation completes (DESIGN §14). */
class PowerCutAtEveryStepTest {
    private static final List<CrashOp> PREFIX = List.of(new CrashOp.Write(0, 2, false), new CrashOp.Write(7, 3, true),
            new CrashOp.Zero(1, 1, false), new CrashOp.Write(1, 1, false));

    @Test
    void logwritesFlushAndFuaWrite() {
        for (CrashMode mode : List.of(CrashMode.DROP_ALL, CrashMode.TORN)) {
            CrashStats flush = CrashModelRunner.atEveryStep(Subjects.logwrites(), PREFIX, new CrashOp.Flush(), mode);
            System.out.println("logwrites flush, power cut at every step: " + flush.report("logwrites"));
            // device flush, log header write, log flush: 3 lower requests, so 4 cuts
            assertEquals(4, flush.crashes());
            CrashStats fua = CrashModelRunner.atEveryStep(Subjects.logwrites(), PREFIX, new CrashOp.Write(3, 2, true), mode);
            System.out.println("logwrites FUA write, power cut at every step: " + fua.report("logwrites"));
            assertTrue(fua.crashes() >= 4, "device write, log header, log data, log flush: " + fua.crashes());
            assertEquals(0, flush.mismatches() + fua.mismatches());
        }
    }

    @Test
    void linearFlushAndCleanClose() {
        CrashStats flush = CrashModelRunner.atEveryStep(Subjects.linear(), PREFIX, new CrashOp.Flush(), CrashMode.SUBSET);
        assertEquals(2, flush.crashes());
        CrashStats close = CrashModelRunner.atEveryStep(Subjects.linear(), PREFIX, new CrashOp.Restart(), CrashMode.DROP_ALL);
        assertEquals(2, close.crashes());
        assertEquals(0, flush.mismatches() + close.mismatches());
    }
}
