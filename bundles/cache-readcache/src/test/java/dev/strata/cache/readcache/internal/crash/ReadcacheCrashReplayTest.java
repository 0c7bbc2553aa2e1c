package dev.strata.cache.readcache.internal.crash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.testsupport.crash.CrashMode;
import dev.strata.testsupport.crash.CrashModelRunner;
import dev.strata.testsupport.crash.CrashOp;
import dev.strata.testsupport.crash.CrashReplay;
import dev.strata.testsupport.crash.CrashStats;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Crash replay over log-writes recordings of origin and cache at every flush point, and a power cut at every step. */
class ReadcacheCrashReplayTest {
    static final CrashReplay.Options OPTIONS = new CrashReplay.Options(150, 1, CrashReplay.Options.DEFAULT.modes(), 200);

    @Test
    void replayEveryFlushPoint() {
        for (long seed = 1; seed <= 2; seed++) {
            CrashStats stats = CrashReplay.run(new ReadcacheSubject("readcache-replay", "lru", true), OPTIONS.withSeed(seed));
            assertEquals(0, stats.mismatches());
            assertTrue(stats.crashPoints() >= 20, "crash points: " + stats.crashPoints());
        }
    }

    @Test
    void replayEveryFlushPointWithWritePromote() {
        for (long seed = 1; seed <= 2; seed++) {
            CrashStats stats = CrashReplay.run(new ReadcacheSubject("readcache-replay-write-promote", "lru", true, true),
                    OPTIONS.withSeed(seed));
            assertEquals(0, stats.mismatches());
            assertTrue(stats.crashPoints() >= 20, "crash points: " + stats.crashPoints());
        }
    }

    /**
     * write_promote=on: written copies over recorded and volatile ones, then a power cut after each
     * lower request of an overwrite (invalidation, origin write, the copy's slot write, the victim's
     * invalid entry), of a FUA write, and of the flush that records the copies (origin flush, cache
     * flush, metadata), in every crash mode.
     */
    @Test
    void powerCutAtEveryStepWithWritePromote() {
        List<CrashOp> prefix = new ArrayList<>();
        prefix.add(new CrashOp.Write(3, 2, false)); // kept VOLATILE
        prefix.add(new CrashOp.Flush()); // recorded valid
        prefix.add(new CrashOp.Write(8, 1, false)); // kept VOLATILE
        prefix.add(new CrashOp.Read(20, 4)); // promoted from durable data: recorded
        long crashes = 0;
        for (CrashMode mode : CrashMode.values()) {
            for (CrashOp op : List.of(new CrashOp.Write(3, 2, false), new CrashOp.Write(8, 2, true), new CrashOp.Flush())) {
                crashes += CrashModelRunner.atEveryStep(new ReadcacheSubject("readcache-step-write-promote", "lru", false, true),
                        prefix, op, mode).crashes();
            }
            List<CrashOp> afterOverwrite = new ArrayList<>(prefix);
            afterOverwrite.add(new CrashOp.Write(3, 2, false));
            afterOverwrite.add(new CrashOp.Write(21, 1, false));
            crashes += CrashModelRunner.atEveryStep(new ReadcacheSubject("readcache-step-write-promote", "lru", false, true),
                    afterOverwrite, new CrashOp.Flush(), mode).crashes();
        }
        assertTrue(crashes >= 40, "crashes: " + crashes);
    }

    /**
     * A cached block overwritten: power cut after each lower request of the overwrite (metadata
     * invalidation, origin write), in every crash mode.
     */
    @Test
    void powerCutAtEveryStepOfAnOverwrite() {
        List<CrashOp> prefix = new ArrayList<>();
        prefix.add(new CrashOp.Write(3, 2, false));
        prefix.add(new CrashOp.Flush());
        prefix.add(new CrashOp.Read(3, 2)); // promoted, recorded valid (source durable)
        prefix.add(new CrashOp.Write(8, 1, false));
        prefix.add(new CrashOp.Read(8, 1)); // promoted VOLATILE (source not durable)
        long crashes = 0;
        for (CrashMode mode : CrashMode.values()) {
            crashes += CrashModelRunner.atEveryStep(new ReadcacheSubject("readcache-step", "lru", false), prefix,
                    new CrashOp.Write(3, 2, true), mode).crashes();
            crashes += CrashModelRunner.atEveryStep(new ReadcacheSubject("readcache-step", "lru", false), prefix,
                    new CrashOp.Flush(), mode).crashes();
        }
        assertTrue(crashes >= 24, "crashes: " + crashes);
    }
}
