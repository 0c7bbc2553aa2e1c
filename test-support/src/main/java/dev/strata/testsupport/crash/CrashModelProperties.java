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
 * a failure shrinks to a short sequence printed as a script. After the property it prints the
 * report line: sequences, operations, crashes, restarts, sectors checked, {@code mismatches: 0}.
 * A target that needs a different number of tries writes its own {@code @Property} calling
 * {@link CrashModelRunner#run(CrashTestSubject, List, CrashStats)}.
 */
public abstract class CrashModelProperties {
    /** Tries per run: sized so a whole module stays well under CI's budget. */
    public static final int TRIES = 60;

    private final CrashStats stats = new CrashStats();

    /** The target under test. Called once per sequence; may return a new or the same object. */
    protected abstract CrashTestSubject subject();

    @Property(tries = TRIES)
    void crashModel(@ForAll("crashSequences") List<CrashOp> ops) {
        CrashModelRunner.run(subject(), ops, stats);
    }

    @Provide
    Arbitrary<List<CrashOp>> crashSequences() {
        return CrashOps.sequences(subject().workload());
    }

    @AfterProperty
    void printCrashModelReport() {
        System.out.println(stats.report(subject().name()));
    }

    /** The counters so far (for subclasses that assert on them). */
    protected CrashStats crashStats() {
        return stats;
    }
}
