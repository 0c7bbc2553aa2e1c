package dev.strata.cache.readcache.internal.crash;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.testsupport.crash.CrashModelRunner;
import dev.strata.testsupport.crash.CrashOp;
import dev.strata.testsupport.crash.CrashOps;
import dev.strata.testsupport.crash.CrashStats;
import java.util.List;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;

/**
 * The crash model on readcache alone: writes overwriting cached blocks, reads promoting blocks
 * whose origin data is still volatile, crashes of every mode and power cuts inside operations.
 * Asserts at the end that the run crashed at least 1,000 times.
 */
class ReadcacheCrashModelTest {
    private static final CrashStats STATS = new CrashStats();

    @Property(tries = 200)
    void lruRereading(@ForAll("ops") List<CrashOp> ops) {
        CrashModelRunner.run(new ReadcacheSubject("readcache-lru", "lru", true), ops, STATS);
    }

    @Property(tries = 150)
    void wtinylfu(@ForAll("ops") List<CrashOp> ops) {
        CrashModelRunner.run(new ReadcacheSubject("readcache-wtinylfu", "wtinylfu", true), ops, STATS);
    }

    @Property(tries = 100)
    void lruPlain(@ForAll("ops") List<CrashOp> ops) {
        CrashModelRunner.run(new ReadcacheSubject("readcache-lru-plain", "lru", false), ops, STATS);
    }

    @Provide
    Arbitrary<List<CrashOp>> ops() {
        return CrashOps.sequences(new ReadcacheSubject("x", "lru", true).workload());
    }

    @AfterContainer
    static void report() {
        System.out.println(STATS.report("readcache"));
        assertTrue(STATS.crashes() >= 1000, "crashes: " + STATS.crashes());
        assertTrue(STATS.mismatches() == 0);
    }
}
