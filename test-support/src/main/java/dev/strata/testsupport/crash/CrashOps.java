package dev.strata.testsupport.crash;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.RandomDistribution;
import net.jqwik.api.Tuple;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Generators of crash-test sequences: a jqwik {@link Arbitrary} (shrinks towards short
 * sequences of small, early, non-FUA requests and seed 0) and a plain {@link Random} one with
 * the same mix.
 */
public final class CrashOps {
    private CrashOps() {
    }

    /** Sequences of 1 to {@code maxOps} operations for {@code workload}. */
    public static Arbitrary<List<CrashOp>> sequences(Workload w) {
        return op(w).list().ofMinSize(1).ofMaxSize(w.maxOps()).withSizeDistribution(RandomDistribution.uniform());
    }

    /** One operation, weighted: mostly writes, then reads and flushes, some crashes. */
    @SuppressWarnings("unchecked")
    public static Arbitrary<CrashOp> op(Workload w) {
        Arbitrary<Integer> unit = Arbitraries.integers().between(0, w.units() - 1);
        Arbitrary<Integer> count = Arbitraries.integers().between(1, w.maxRun());
        Arbitrary<Boolean> fua = Arbitraries.frequency(Tuple.of(5, false), Tuple.of(1, true));
        List<Tuple.Tuple2<Integer, Arbitrary<? extends CrashOp>>> mix = new ArrayList<>();
        mix.add(Tuple.of(30, Combinators.combine(unit, count, fua).as((u, c, f) -> new CrashOp.Write(u, clip(w, u, c), f))));
        mix.add(Tuple.of(10, Combinators.combine(unit, count).as((u, c) -> new CrashOp.Read(u, clip(w, u, c)))));
        mix.add(Tuple.of(8, Arbitraries.just(new CrashOp.Flush())));
        mix.add(Tuple.of(3, Arbitraries.just(new CrashOp.Background())));
        if (w.zeroes()) {
            mix.add(Tuple.of(3, Combinators.combine(unit, count, fua).as((u, c, f) -> new CrashOp.Zero(u, clip(w, u, c), f))));
        }
        if (w.discards()) {
            mix.add(Tuple.of(3, Combinators.combine(unit, count).as((u, c) -> new CrashOp.Discard(u, clip(w, u, c)))));
        }
        if (w.crashes()) {
            mix.add(Tuple.of(5, Combinators.combine(Arbitraries.of(CrashMode.class), Arbitraries.longs().between(0, 999))
                    .as(CrashOp.Crash::new)));
        }
        if (w.restarts()) {
            mix.add(Tuple.of(2, Arbitraries.just(new CrashOp.Restart())));
        }
        if (w.crashes()) {
            Arbitrary<CrashOp> inner = Arbitraries.frequencyOf(
                    Tuple.of(4, Combinators.combine(unit, count, fua).as((u, c, f) -> new CrashOp.Write(u, clip(w, u, c), f))),
                    Tuple.of(3, Arbitraries.just(new CrashOp.Flush())),
                    Tuple.of(1, Arbitraries.just(new CrashOp.Restart())));
            mix.add(Tuple.of(4, Combinators.combine(inner, Arbitraries.integers().between(0, 8), Arbitraries.of(CrashMode.class),
                    Arbitraries.longs().between(0, 999)).as(CrashOp.PowerCut::new)));
        }
        return Arbitraries.frequencyOf(mix.toArray(new Tuple.Tuple2[0]));
    }

    /** A random sequence of {@code length} operations with the same mix as {@link #op}. */
    public static List<CrashOp> random(Workload w, Random r, int length) {
        List<CrashOp> ops = new ArrayList<>(length);
        for (int i = 0; i < length; i++) {
            int u = r.nextInt(w.units());
            int c = clip(w, u, 1 + r.nextInt(w.maxRun()));
            boolean f = r.nextInt(6) == 0;
            int x = r.nextInt(100);
            CrashOp op;
            if (x < 45) {
                op = new CrashOp.Write(u, c, f);
            } else if (x < 60) {
                op = new CrashOp.Read(u, c);
            } else if (x < 72) {
                op = new CrashOp.Flush();
            } else if (x < 77) {
                op = new CrashOp.Background();
            } else if (x < 82 && w.zeroes()) {
                op = new CrashOp.Zero(u, c, f);
            } else if (x < 87 && w.discards()) {
                op = new CrashOp.Discard(u, c);
            } else if (x < 92 && w.crashes()) {
                op = new CrashOp.Crash(CrashMode.values()[r.nextInt(CrashMode.values().length)], r.nextInt(1000));
            } else if (x < 96 && w.crashes()) {
                CrashOp inner = r.nextInt(3) == 0 ? new CrashOp.Flush() : new CrashOp.Write(u, c, f);
                op = new CrashOp.PowerCut(inner, r.nextInt(9), CrashMode.values()[r.nextInt(CrashMode.values().length)], r.nextInt(1000));
            } else if (w.restarts()) {
                op = new CrashOp.Restart();
            } else {
                op = new CrashOp.Write(u, c, f);
            }
            ops.add(op);
        }
        return ops;
    }

    /**
     * {@code ops} with every crash and power cut re-drawn from {@code r}: its mode and seed, and
     * for a power cut the lower request it falls after (0 to 8, as generated). Everything else is
     * kept, so the variant runs the same I/O and crashes elsewhere in it ({@link CrashSoak}).
     * Returns {@code ops} itself when it has no crash to re-draw.
     */
    public static List<CrashOp> redrawCrashes(List<CrashOp> ops, Random r) {
        List<CrashOp> out = new ArrayList<>(ops.size());
        boolean changed = false;
        CrashMode[] modes = CrashMode.values();
        for (CrashOp op : ops) {
            if (op instanceof CrashOp.Crash) {
                out.add(new CrashOp.Crash(modes[r.nextInt(modes.length)], r.nextInt(1000)));
                changed = true;
            } else if (op instanceof CrashOp.PowerCut pc) {
                out.add(new CrashOp.PowerCut(pc.op(), r.nextInt(9), modes[r.nextInt(modes.length)], r.nextInt(1000)));
                changed = true;
            } else {
                out.add(op);
            }
        }
        return changed ? out : ops;
    }

    private static int clip(Workload w, int unit, int count) {
        return Math.min(count, w.units() - unit);
    }
}
