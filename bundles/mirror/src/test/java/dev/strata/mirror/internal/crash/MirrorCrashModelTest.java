package dev.strata.mirror.internal.crash;

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
 * The crash model: random I/O, crashes in every mode and restarts, each crash checked offline
 * (the disk rule, and the legs agreeing after resync) and then against the reference model.
 * 200 sequences (about 450 crashes, 15 s) so that with the replay's 600 images a CI run crashes
 * the mirror over 1,000 times.
 */
class MirrorCrashModelTest {
    private final CrashStats stats = new CrashStats();

    @Property(tries = 300)
    void crashModel(@ForAll("sequences") List<CrashOp> ops) {
        CrashModelRunner.run(new MirrorSubject(), ops, stats);
    }

    @Provide
    Arbitrary<List<CrashOp>> sequences() {
        return CrashOps.sequences(new MirrorSubject().workload());
    }

    @AfterProperty
    void report() {
        System.out.println(stats.report("mirror-disk-log"));
    }
}
