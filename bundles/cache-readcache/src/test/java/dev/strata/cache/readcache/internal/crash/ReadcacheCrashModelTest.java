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
 * Asserts at the end that the run crashed at least 1,000 times (4 KiB blocks and larger ones together).
 */
class ReadcacheCrashModelTest {
    private static final CrashStats STATS = new CrashStats();
    /** write_promote=on on its own: at least 1,000 crashes (ten times more in a soak run). */
    private static final CrashStats WRITE_PROMOTE = new CrashStats();
    /** readahead=16K (neighbours promoted into free slots) on its own: at least 1,000 crashes too. */
    private static final CrashStats READAHEAD = new CrashStats();

    /**
     * Blocks larger than the I/O (16 and 64 KiB, every request 4-16 KiB): a promotion fills a whole
     * block from the origin, parts of it maybe volatile there or just overwritten. At least 250
     * crashes of their own (ten times more in a soak run); their tries come out of the 4 KiB
     * properties' budget, and the two together make the 1,000.
     */
    private static final CrashStats LARGE = new CrashStats();

    @Property(tries = 60)
    void largeBlocks16k(@ForAll("ops16k") List<CrashOp> ops) {
        CrashModelRunner.run(ReadcacheSubject.largeBlocks("readcache-16k", "lru", 16 << 10), ops, LARGE);
    }

    @Property(tries = 40)
    void largeBlocks64k(@ForAll("ops64k") List<CrashOp> ops) {
        CrashModelRunner.run(ReadcacheSubject.largeBlocks("readcache-64k", "wtinylfu", 64 << 10), ops, LARGE);
    }

    @Property(tries = 150)
    void lruRereading(@ForAll("ops") List<CrashOp> ops) {
        CrashModelRunner.run(new ReadcacheSubject("readcache-lru", "lru", true), ops, STATS);
    }

    @Property(tries = 100)
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

    @Provide
    Arbitrary<List<CrashOp>> ops16k() {
        return CrashOps.sequences(ReadcacheSubject.largeBlocks("x", "lru", 16 << 10).workload());
    }

    @Provide
    Arbitrary<List<CrashOp>> ops64k() {
        return CrashOps.sequences(ReadcacheSubject.largeBlocks("x", "lru", 64 << 10).workload());
    }

    @AfterContainer
    static void report() {
        // top up with seeded sequences so the large blocks have their floor whatever jqwik drew
        CrashModelRunner.untilCrashes(ReadcacheSubject.largeBlocks("readcache-16k", "lru", 16 << 10), LARGE,
                250L * CrashSoak.factor(), 16);
        System.out.println(STATS.report("readcache"));
        System.out.println(LARGE.report("readcache 16/64 KiB blocks"));
        assertTrue(STATS.crashes() + LARGE.crashes() >= 1000, "crashes: " + STATS.crashes() + " + " + LARGE.crashes());
        assertTrue(LARGE.crashes() >= 250L * CrashSoak.factor(), "crashes with large blocks: " + LARGE.crashes());
        assertTrue(STATS.mismatches() == 0);
        assertTrue(LARGE.mismatches() == 0);
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
