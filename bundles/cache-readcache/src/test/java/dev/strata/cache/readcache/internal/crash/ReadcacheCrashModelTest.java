package dev.strata.cache.readcache.internal.crash;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.testsupport.crash.CrashModelRunner;
import dev.strata.testsupport.crash.CrashOp;
import dev.strata.testsupport.crash.CrashOps;
import dev.strata.testsupport.crash.CrashSoak;
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
    /** write_promote=on on its own: at least 1,000 crashes (ten times more in a soak run). */
    private static final CrashStats WRITE_PROMOTE = new CrashStats();
    /** readahead=16K (neighbours promoted into free slots) on its own: at least 1,000 crashes too. */
    private static final CrashStats READAHEAD = new CrashStats();

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

    @Property(tries = 150)
    void writePromoteLru(@ForAll("ops") List<CrashOp> ops) {
        CrashModelRunner.run(new ReadcacheSubject("readcache-write-promote-lru", "lru", true, true), ops, WRITE_PROMOTE);
    }

    @Property(tries = 100)
    void writePromoteWtinylfu(@ForAll("ops") List<CrashOp> ops) {
        CrashModelRunner.run(new ReadcacheSubject("readcache-write-promote-wtinylfu", "wtinylfu", false, true), ops, WRITE_PROMOTE);
    }

    @Property(tries = 100)
    void readaheadLru(@ForAll("ops") List<CrashOp> ops) {
        CrashModelRunner.run(new ReadcacheSubject("readcache-readahead-lru", "lru", true, false, "16K"), ops, READAHEAD);
    }

    @Property(tries = 100)
    void readaheadWritePromoteWtinylfu(@ForAll("ops") List<CrashOp> ops) {
        CrashModelRunner.run(new ReadcacheSubject("readcache-readahead-write-promote-wtinylfu", "wtinylfu", true, true, "16K"),
                ops, READAHEAD);
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
        // top up with seeded sequences (the floor of CrashModelProperties) so write_promote alone has 1,000 crashes
        CrashModelRunner.untilCrashes(new ReadcacheSubject("readcache-write-promote-lru", "lru", true, true), WRITE_PROMOTE,
                1000L * CrashSoak.factor(), 1000);
        System.out.println(WRITE_PROMOTE.report("readcache write_promote=on"));
        assertTrue(WRITE_PROMOTE.crashes() >= 1000L * CrashSoak.factor(), "crashes: " + WRITE_PROMOTE.crashes());
        assertTrue(WRITE_PROMOTE.mismatches() == 0);
        CrashModelRunner.untilCrashes(new ReadcacheSubject("readcache-readahead-lru", "lru", true, false, "16K"), READAHEAD,
                1000L * CrashSoak.factor(), 1000);
        System.out.println(READAHEAD.report("readcache readahead=16K"));
        assertTrue(READAHEAD.crashes() >= 1000L * CrashSoak.factor(), "crashes: " + READAHEAD.crashes());
        assertTrue(READAHEAD.mismatches() == 0);
    }
}
