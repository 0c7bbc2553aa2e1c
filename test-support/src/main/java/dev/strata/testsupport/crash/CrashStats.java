package dev.strata.testsupport.crash;

import java.util.EnumMap;
import java.util.Map;

/** Counters of a crash-model or crash-replay run, printed as one report line. Thread-safe. */
public final class CrashStats {
    private long sequences;
    private long operations;
    private long crashes;
    private long restarts;
    private long crashPoints;
    private long sectorsChecked;
    private long logChecks;
    private long mismatches;
    private long powerCutsAfterCompletion;
    private long powerCuts;
    private long variants;
    private final Map<CrashMode, Long> byMode = new EnumMap<>(CrashMode.class);

    public synchronized void sequence() {
        sequences++;
    }

    public synchronized void operation() {
        operations++;
    }

    public synchronized void crash(CrashMode mode) {
        crashes++;
        byMode.merge(mode, 1L, Long::sum);
    }

    /** A soak variant of a sequence ({@link CrashSoak}); its crashes count as crashes too. */
    public synchronized void variant() {
        variants++;
    }

    public synchronized void restart() {
        restarts++;
    }

    public synchronized void crashPoint() {
        crashPoints++;
    }

    public synchronized void sectorsChecked(long n) {
        sectorsChecked += n;
    }

    /** A power cut inside an operation ({@link CrashOp.PowerCut}); also counted as a crash. */
    public synchronized void powerCut() {
        powerCuts++;
    }

    /** A power cut whose operation completed before the cut (it issued fewer lower requests). */
    public synchronized void powerCutAfterCompletion() {
        powerCutsAfterCompletion++;
    }

    public synchronized long powerCutsAfterCompletion() {
        return powerCutsAfterCompletion;
    }

    public synchronized void logCheck() {
        logChecks++;
    }

    public synchronized void mismatches(long n) {
        mismatches += n;
    }

    public synchronized long sequences() {
        return sequences;
    }

    public synchronized long operations() {
        return operations;
    }

    public synchronized long crashes() {
        return crashes;
    }

    public synchronized long crashPoints() {
        return crashPoints;
    }

    public synchronized long sectorsChecked() {
        return sectorsChecked;
    }

    public synchronized long mismatches() {
        return mismatches;
    }

    /** The crash-model report line. */
    public synchronized String report(String subject) {
        StringBuilder sb = new StringBuilder("crash model [").append(subject).append("]: sequences: ").append(sequences)
                .append(", operations: ").append(operations).append(", crashes: ").append(crashes);
        if (!byMode.isEmpty()) {
            sb.append(' ').append(modes());
        }
        if (powerCuts > 0) {
            sb.append(", of them inside operations: ").append(powerCuts);
        }
        if (variants > 0) {
            sb.append(", soak variants: ").append(variants);
        }
        sb.append(", restarts: ").append(restarts).append(", sectors checked: ").append(sectorsChecked);
        if (logChecks > 0) {
            sb.append(", log-property checks: ").append(logChecks);
        }
        return sb.append(", mismatches: ").append(mismatches).toString();
    }

    /** The crash-replay report line. */
    public synchronized String replayReport(String subject) {
        StringBuilder sb = new StringBuilder("crash replay [").append(subject).append("]: operations: ").append(operations)
                .append(", crash points replayed: ").append(crashPoints).append(", images checked: ").append(crashes);
        if (!byMode.isEmpty()) {
            sb.append(' ').append(modes());
        }
        sb.append(", sectors checked: ").append(sectorsChecked);
        if (logChecks > 0) {
            sb.append(", log-property checks: ").append(logChecks);
        }
        return sb.append(", mismatches: ").append(mismatches).toString();
    }

    private String modes() {
        StringBuilder sb = new StringBuilder("(");
        byMode.forEach((m, n) -> sb.append(sb.length() > 1 ? ", " : "").append(m.label()).append(' ').append(n));
        return sb.append(')').toString();
    }
}
