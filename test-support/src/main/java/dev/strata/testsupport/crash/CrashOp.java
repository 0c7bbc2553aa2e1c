package dev.strata.testsupport.crash;

/**
 * One step of a generated crash-test sequence. Addresses are in <em>units</em> of
 * {@link Workload#unitSize()} bytes; {@code toString()} is short so a shrunk failing sequence
 * reads like a script: {@code [write 3+2, flush, write 3+1 fua, crash torn #7]}.
 */
public sealed interface CrashOp {

    /** Write {@code count} units at {@code unit} with fresh, self-describing data. */
    record Write(int unit, int count, boolean fua) implements CrashOp {
        @Override
        public String toString() {
            return "write " + unit + "+" + count + (fua ? " fua" : "");
        }
    }

    /** Zero {@code count} units at {@code unit} ({@code writeZeroes}). */
    record Zero(int unit, int count, boolean fua) implements CrashOp {
        @Override
        public String toString() {
            return "zero " + unit + "+" + count + (fua ? " fua" : "");
        }
    }

    /** Discard {@code count} units at {@code unit}. */
    record Discard(int unit, int count) implements CrashOp {
        @Override
        public String toString() {
            return "discard " + unit + "+" + count;
        }
    }

    /** Read {@code count} units at {@code unit} and check them against the model. */
    record Read(int unit, int count) implements CrashOp {
        @Override
        public String toString() {
            return "read " + unit + "+" + count;
        }
    }

    /** Flush the target. */
    record Flush() implements CrashOp {
        @Override
        public String toString() {
            return "flush";
        }
    }

    /** One step of the target's background work ({@link CrashTestSubject#background}). */
    record Background() implements CrashOp {
        @Override
        public String toString() {
            return "background";
        }
    }

    /** Close the target cleanly and reopen it; everything acknowledged must be there. */
    record Restart() implements CrashOp {
        @Override
        public String toString() {
            return "restart";
        }
    }

    /** Power loss of every crashable device ({@code mode}, random choices from {@code seed}), then reopen. */
    record Crash(CrashMode mode, long seed) implements CrashOp {
        @Override
        public String toString() {
            return "crash " + mode.label() + " #" + seed;
        }
    }

    /**
     * Power loss <em>inside</em> an operation: the crashable devices let {@code afterRequests}
     * mutating requests (writes, zeroing, discards, flushes — the target's and its background
     * threads') through, then the next one cuts the power of all of them ({@code mode}). Then
     * {@code op} (a write, zeroing, discard, flush or restart) runs; if it did not reach the cut,
     * the power is cut right after it. Then reopen and a full check; an operation cut short counts
     * as in flight (its data may or may not be there).
     */
    record PowerCut(CrashOp op, int afterRequests, CrashMode mode, long seed) implements CrashOp {
        @Override
        public String toString() {
            return "power cut after " + afterRequests + " during [" + op + "] " + mode.label() + " #" + seed;
        }
    }
}
