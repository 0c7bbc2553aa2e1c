package dev.strata.cache.writecache.internal.crash;

import dev.strata.cache.writecache.internal.io.WritecacheSubject;
import dev.strata.testsupport.crash.CrashModelRunner;
import dev.strata.testsupport.crash.CrashOp;
import dev.strata.testsupport.crash.CrashOps;
import dev.strata.testsupport.crash.CrashStats;
import java.util.List;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterProperty;

/**
 * The crash model with the disk rule: a cache where most of the workload fits. 250 sequences (a run takes a few
 * seconds), so that the crash tests of this bundle cut the power well over 1,000 times per run.
 */
class WritecacheCrashModelTest {
    private final CrashStats stats = new CrashStats();

    @Property(tries = 300)
    void crashModel(@ForAll("sequences") List<CrashOp> ops) {
        CrashModelRunner.run(WritecacheSubject.roomy(), ops, stats);
    }

    @Provide
    Arbitrary<List<CrashOp>> sequences() {
        return CrashOps.sequences(WritecacheSubject.roomy().workload());
    }

    @AfterProperty
    void report() {
        System.out.println(stats.report(WritecacheSubject.roomy().name()));
    }
}
