package dev.strata.cache.writeboost.review;

import dev.strata.api.BlockDevice;
import dev.strata.cache.writeboost.internal.WriteboostFactory;
import dev.strata.cache.writeboost.internal.io.WriteboostCache;
import dev.strata.testsupport.crash.CrashModelRunner;
import dev.strata.testsupport.crash.CrashOp;
import dev.strata.testsupport.crash.CrashOps;
import dev.strata.testsupport.crash.CrashStats;
import dev.strata.testsupport.crash.CrashTestSubject;
import dev.strata.testsupport.crash.FactorySubject;
import dev.strata.testsupport.crash.Workload;
import java.io.IOException;
import java.util.List;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The crash model (sector property) with what the module's own crash tests leave out: 512-byte
 * units (sub-block writes, per-sector valid bits, merges with the backing device), a bypass
 * threshold inside the workload's request sizes, and background steps that write back and
 * reclaim everything they can, so that segment slots are reused within a sequence.
 */
class ReviewCrashModelTest {
    static final class Subject extends FactorySubject {
        Subject(String args, Workload w) {
            super("writeboost", new WriteboostFactory(), "backing=slow cache=fast " + args,
                    List.of(new DeviceSpec("slow", 4L << 20, 4096), new DeviceSpec("fast", 17L << 20, 4096)));
            workload(w);
        }

        @Override
        public void background(BlockDevice target) throws IOException {
            WriteboostCache wb = (WriteboostCache) target;
            wb.writebackAll();
            wb.updateRecord(Long.MAX_VALUE);
        }
    }

    final CrashStats stats = new CrashStats();

    static CrashTestSubject subject(String args, Workload w) {
        return new Subject(args, w);
    }

    static final Workload SMALL = Workload.DEFAULT.withMaxOps(150);
    static final Workload SECTORS = Workload.DEFAULT.withUnits(64, 512).withMaxRun(16).withMaxOps(150);

    @Provide
    Arbitrary<List<CrashOp>> plainSeq() {
        return CrashOps.sequences(SMALL);
    }

    @Property(tries = 10)
    void bypass(@ForAll("plainSeq") List<CrashOp> ops) {
        CrashModelRunner.run(subject("bypass_threshold=8192 sequential_cutoff=0", SMALL), ops, stats);
    }

    @Property(tries = 10)
    void sectors(@ForAll("sectorSeq") List<CrashOp> ops) {
        CrashModelRunner.run(subject("bypass_threshold=4096 sequential_cutoff=0", SECTORS), ops, stats);
    }

    @Provide
    Arbitrary<List<CrashOp>> sectorSeq() {
        return CrashOps.sequences(SECTORS);
    }
}
