package dev.strata.testsupport.crash;

import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterProperty;

import java.util.List;

/**
 * The crash model as a jqwik property, for any target: extend this class in the target's tests
 * and supply the {@link CrashTestSubject}.
 *
 * <pre>{@code
 * class LinearCrashModelTest extends CrashModelProperties {
 *     protected CrashTestSubject subject() { return new LinearSubject(); }
 * }
 * }</pre>
 *
 * The property runs {@value #TRIES} generated sequences with a fixed seed per run that jqwik
 * prints on failure (re-run with {@code @Property(seed = "…")} in a subclass to reproduce);
 * a failure shrinks to a short sequence printed as a script. After the property, unless it
 * failed, seeded random sequences of the same mix (not shrunk; a failure prints the sequence)
 * run until the target has had {@value #MIN_CRASHES} crashes in all, whatever its workload's
 * crash density ({@link #MIN_CRASHES} times {@link CrashSoak#factor()} in a soak run; a
 * workload without crashes has no floor). Then it prints the report line: sequences,
 * operations, crashes, restarts, sectors checked, {@code mismatches: 0}.
 * A target that needs a different number of tries writes its own {@code @Property} calling
 * {@link CrashModelRunner#run(CrashTestSubject, List, CrashStats)}.
 */
public abstract class CrashModelProperties {
    /** Tries per run: sized so a whole module stays well under CI's budget. */
    public static final int TRIES = 60;
    /** Crashes per target and normal CI run, at least (CI's floor; ten times more in a soak run). */
    public static final int MIN_CRASHES = 1000;
    /** The seed of the top-up sequences: fixed, so a run is repeatable. */
    private static final long FLOOR_SEED = 1000;

    private final CrashStats stats = new CrashStats();
    private volatile boolean failed;

    /** The target under test. Called once per sequence; may return a new or the same object. */
    protected abstract CrashTestSubject subject();

    @Property(tries = TRIES)
    void crashModel(@ForAll("crashSequences") List<CrashOp> ops) {
        try {
            CrashModelRunner.run(subject(), ops, stats);
        } catch (RuntimeException | Error e) {
            failed = true; // jqwik shrinks and reports it; the floor does not run on top of a failure
            throw e;
        }
    }

    @Provide
    Arbitrary<List<CrashOp>> crashSequences() {
        return CrashOps.sequences(subject().workload());
    }

    @AfterProperty
    void crashFloorAndReport() {
        Workload w = subject().workload();
        long floor = (long) MIN_CRASHES * CrashSoak.factor();
        if (!failed && w.crashes()) {
            CrashModelRunner.untilCrashes(subject(), stats, floor, FLOOR_SEED);
        }
        System.out.println(stats.report(subject().name()));
    }

    /** The counters so far (for subclasses that assert on them). */
    protected CrashStats crashStats() {
        return stats;
    }
}
