package dev.strata.cache.writecache.internal.crash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.cache.writecache.internal.io.WritecacheSubject;
import dev.strata.testsupport.crash.CrashMode;
import dev.strata.testsupport.crash.CrashModelRunner;
import dev.strata.testsupport.crash.CrashOp;
import dev.strata.testsupport.crash.CrashStats;
import dev.strata.testsupport.crash.CrashTestSubject;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A power cut after every lower request of a commit (metadata write, data write, cache flush,
 * superblock write, backing flush, freeing of older copies), in every crash mode: a flush, a FUA
 * write, a flush with writes gone around, writeback, a discard and a restart.
 */
class CommitPowerCutTest {
    /** Writes that leave new slots, overwritten committed blocks (older copies to free) and uncommitted reuse. */
    private static List<CrashOp> prefix() {
        List<CrashOp> ops = new ArrayList<>();
        ops.add(new CrashOp.Write(0, 4, false));
        ops.add(new CrashOp.Write(10, 2, false));
        ops.add(new CrashOp.Flush());
        ops.add(new CrashOp.Write(1, 2, false)); // committed blocks: new slots, older copies wait
        ops.add(new CrashOp.Write(1, 1, false)); // uncommitted: in place
        ops.add(new CrashOp.Write(20, 3, false));
        return ops;
    }

    private static long everyStep(CrashTestSubject subject, List<CrashOp> prefix, CrashOp op) {
        long crashes = 0;
        for (CrashMode mode : CrashMode.values()) {
            CrashStats stats = CrashModelRunner.atEveryStep(subject, prefix, op, mode);
            assertEquals(0, stats.mismatches());
            assertTrue(stats.crashes() >= 3, op + " " + mode + ": only " + stats.crashes() + " cuts");
            crashes += stats.crashes();
        }
        return crashes;
    }

    @Test
    void flush() {
        long n = everyStep(WritecacheSubject.roomy(), prefix(), new CrashOp.Flush());
        System.out.println("power cuts during a commit (flush): " + n);
    }

    @Test
    void fuaWrite() {
        everyStep(WritecacheSubject.roomy(), prefix(), new CrashOp.Write(30, 3, true));
        everyStep(WritecacheSubject.roomy(), prefix(), new CrashOp.Write(2, 2, true));
    }

    @Test
    void flushForwardedToTheBackingDevice() {
        List<CrashOp> ops = new ArrayList<>(prefix());
        for (int u = 32; u < 48; u += 4) {
            ops.add(new CrashOp.Write(u, 4, false)); // 12 slots: most of these go around
        }
        everyStep(WritecacheSubject.small(), ops, new CrashOp.Flush());
        everyStep(WritecacheSubject.small(), ops, new CrashOp.Write(50, 4, true));
    }

    @Test
    void restartAndDiscardAndZeroes() {
        everyStep(WritecacheSubject.roomy(), prefix(), new CrashOp.Restart());
        everyStep(WritecacheSubject.roomy(), prefix(), new CrashOp.Discard(0, 3));
        everyStep(WritecacheSubject.roomy(), prefix(), new CrashOp.Zero(1, 2, false));
        everyStep(WritecacheSubject.roomy(), prefix(), new CrashOp.Zero(9, 3, true));
    }
}
