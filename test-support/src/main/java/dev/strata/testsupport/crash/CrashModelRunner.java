package dev.strata.testsupport.crash;

import dev.strata.api.BlockDevice;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * Runs one sequence of {@link CrashOp}s against a {@link CrashTestSubject} and the
 * {@link ReferenceModel} (plus the {@link LogModel} for a log-structured subject), and fails with
 * a {@link CrashCheckFailure} at the first difference:
 * <ul>
 * <li>a read returns anything but the newest acknowledged value (or, after a discard, zero);
 * <li>after a crash and reopen, a sector holds neither its durable value nor a value
 * acknowledged since (or the log property fails);
 * <li>after a clean restart, a sector lost an acknowledged write;
 * <li>the target throws, or does not come back after a crash within 60 s.
 * </ul>
 * Every sequence ends with a clean close, a reopen and a full check (or only the full check if
 * the workload has no restarts, for a target that keeps nothing across a reopen).
 */
public final class CrashModelRunner {
    private static final long DEADLINE_SECONDS = 60;

    private final CrashTestSubject subject;
    private final CrashStats stats;
    private final Workload workload;
    private final int sectors;
    private final List<String> trace = new ArrayList<>();
    private List<CrashableDevice> devices;
    private BlockDevice target;
    private ReferenceModel model;
    private LogModel logModel;
    private long writeIds;
    private final List<String> lastCrashStats = new ArrayList<>();

    private CrashModelRunner(CrashTestSubject subject, CrashStats stats) {
        this.subject = subject;
        this.stats = stats;
        this.workload = subject.workload();
        this.sectors = (int) (workload.bytes() / BlockDevice.SECTOR);
    }

    /**
     * Runs {@code ops} on a fresh target, counting into {@code stats}; in a soak run
     * ({@link CrashSoak}) then {@code factor - 1} variants of it with its crashes re-drawn from a
     * {@link Random} seeded by the sequence's text (so a run is repeatable). A failing variant is
     * reported with the variant's own sequence, which reproduces it without the soak flag.
     */
    public static void run(CrashTestSubject subject, List<CrashOp> ops, CrashStats stats) {
        stats.sequence();
        runOnce(subject, ops, stats);
        int factor = CrashSoak.factor();
        if (factor == 1) {
            return;
        }
        Random r = new Random(ops.toString().hashCode());
        for (int v = 1; v < factor; v++) {
            List<CrashOp> variant = CrashOps.redrawCrashes(ops, r);
            if (variant == ops) {
                return; // nothing to re-draw: the variant would repeat the run
            }
            stats.variant();
            try {
                runOnce(subject, variant, stats);
            } catch (CrashCheckFailure e) {
                throw new CrashCheckFailure("soak variant " + v + " of a generated sequence (its crashes re-drawn; "
                        + "the sequence printed is the variant): " + e.getMessage(), e.getCause());
            }
        }
    }

    /**
     * Runs random sequences of the workload's mix (lengths 1 to {@code maxOps}, from {@code seed})
     * until {@code stats} counts at least {@code crashes} crashes: a floor of crashes per target
     * whatever its workload's crash density. Each sequence goes through {@link #run}, so it is
     * checked as usual (and multiplied in a soak run).
     *
     * @throws CrashCheckFailure at the first failing sequence, or if the workload makes no crashes
     */
    public static void untilCrashes(CrashTestSubject subject, CrashStats stats, long crashes, long seed) {
        Workload w = subject.workload();
        if (!w.crashes()) {
            throw new IllegalArgumentException(subject.name() + ": the workload has no crashes");
        }
        Random r = new Random(seed);
        for (long i = 0; stats.crashes() < crashes; i++) {
            if (i > 100 * crashes) {
                throw new CrashCheckFailure(subject.name() + ": " + i + " sequences made only " + stats.crashes()
                        + " crashes; the workload generates too few");
            }
            run(subject, CrashOps.random(w, r, 1 + r.nextInt(w.maxOps())), stats);
        }
    }

    private static void runOnce(CrashTestSubject subject, List<CrashOp> ops, CrashStats stats) {
        new CrashModelRunner(subject, stats).execute(ops);
    }

    /** Runs {@code ops} on a fresh target and returns the counters. */
    public static CrashStats run(CrashTestSubject subject, List<CrashOp> ops) {
        CrashStats stats = new CrashStats();
        run(subject, ops, stats);
        return stats;
    }

    /**
     * Crashes inside {@code op} after each of its lower requests in turn (DESIGN §14: "fail write N
     * for N = 0, 1, 2, … until the operation completes"): for n = 0, 1, 2, … runs {@code prefix}
     * then {@code PowerCut(op, n, mode)} on a fresh target, until {@code op} completes before the
     * cut. Each run is checked as usual. Returns the counters; {@code crashes()} is the number of
     * power cuts, i.e. the lower requests of {@code op} plus one.
     *
     * @throws CrashCheckFailure at the first run that loses or corrupts data
     */
    public static CrashStats atEveryStep(CrashTestSubject subject, List<CrashOp> prefix, CrashOp op, CrashMode mode) {
        CrashStats stats = new CrashStats();
        for (int n = 0; stats.powerCutsAfterCompletion() == 0; n++) {
            if (n > 100_000) {
                throw new CrashCheckFailure(subject.name() + ": '" + op + "' did not complete within 100000 lower requests");
            }
            List<CrashOp> ops = new ArrayList<>(prefix);
            ops.add(new CrashOp.PowerCut(op, n, mode, n));
            stats.sequence();
            runOnce(subject, ops, stats); // exhaustive already: not multiplied by the soak factor
        }
        return stats;
    }

    private void execute(List<CrashOp> ops) {
        model = new ReferenceModel(sectors);
        logModel = subject.logStructured() ? new LogModel(sectors) : null;
        int index = -1;
        CrashOp op = null;
        try {
            devices = new ArrayList<>();
            for (CrashTestSubject.DeviceSpec spec : subject.devices()) {
                devices.add(new CrashableDevice(spec.name(), spec.size(), spec.blockSize()));
            }
            target = subject.create(List.<BlockDevice>copyOf(devices));
            if (target.size() < workload.bytes()) {
                throw new IllegalStateException(subject.name() + ": target size " + target.size()
                        + " is smaller than the workload's " + workload.bytes() + " bytes");
            }
            for (index = 0; index < ops.size(); index++) {
                op = ops.get(index);
                trace.add(op.toString());
                stats.operation();
                apply(op);
            }
            if (workload.restarts()) {
                op = new CrashOp.Restart();
                trace.add("(final restart)");
                apply(op);
            } else {
                checkReadable(0, sectors, "at the end");
            }
            target.close();
            target = null;
        } catch (CrashCheckFailure e) {
            throw new CrashCheckFailure(e.getMessage() + describe(ops, index), e.getCause());
        } catch (IOException | RuntimeException e) {
            throw new CrashCheckFailure(subject.name() + ": " + (op == null ? "create" : "'" + op + "'")
                    + " threw " + e + describe(ops, index), e);
        } finally {
            if (target != null) {
                subject.abandon(target);
            }
        }
    }

    private void apply(CrashOp op) throws IOException {
        int spu = workload.sectorsPerUnit();
        IssuedOp issued = IssuedOp.of(op, workload, op instanceof CrashOp.Write ? ++writeIds : 0);
        if (issued != null) {
            issued.issueTo(target, workload);
            issued.acknowledge(model, logModel);
        } else if (op instanceof CrashOp.Read r) {
            checkReadable(r.unit() * spu, r.count() * spu, "read");
        } else if (op instanceof CrashOp.Background) {
            subject.background(target);
        } else if (op instanceof CrashOp.Restart) {
            stats.restart();
            target.close();
            target = null;
            target = subject.reopen(List.<BlockDevice>copyOf(devices));
            model.cleanRestart();
            if (logModel != null) {
                logModel.cleanRestart();
            }
            checkReadable(0, sectors, "after clean restart");
        } else if (op instanceof CrashOp.Crash c) {
            crash(c);
        } else if (op instanceof CrashOp.PowerCut pc) {
            powerCut(pc);
        } else {
            throw new IllegalArgumentException("unknown op " + op);
        }
    }

    private static Random random(long seed) {
        return new Random(seed * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L); // scrambled: small seeds give correlated first draws
    }

    private void crash(CrashOp.Crash c) throws IOException {
        stats.crash(c.mode());
        Random random = random(c.seed());
        for (CrashableDevice d : devices) {
            d.crash(c.mode(), random);
        }
        recover(c, -1, null);
    }

    private void powerCut(CrashOp.PowerCut pc) throws IOException {
        stats.crash(pc.mode());
        stats.powerCut();
        PowerSwitch power = new PowerSwitch(devices, pc.afterRequests(), pc.mode(), random(pc.seed())).arm();
        CrashOp op = pc.op();
        int first = -1;
        long[] tokens = null;
        boolean completed;
        try {
            IssuedOp issued = IssuedOp.of(op, workload, op instanceof CrashOp.Write ? ++writeIds : 0);
            if (issued != null) {
                tokens = issued.tokens();
                first = tokens == null ? -1 : issued.firstSector(); // a flush changes no sector
                issued.issueTo(target, workload);
            } else if (op instanceof CrashOp.Restart) {
                target.close();
                target = null;
            } else {
                throw new IllegalArgumentException("a power cut during '" + op + "' is not supported");
            }
            completed = true;
        } catch (IOException e) {
            if (!power.tripped()) {
                throw e;
            }
            completed = false;
        }
        if (!power.tripped()) {
            stats.powerCutAfterCompletion();
        }
        power.trip();
        if (completed) {
            IssuedOp.acknowledge(op, first, tokens, model, logModel);
            recover(pc, -1, null);
        } else {
            if (tokens != null) {
                model.inFlight(first, tokens);
            }
            recover(pc, first, tokens);
        }
    }

    /** After the power loss: drop the target, power the devices on, check offline, reopen, compare. */
    private void recover(CrashOp c, int inFlightFirst, long[] inFlight) throws IOException {
        if (target != null) {
            BlockDevice dead = target;
            target = null;
            withDeadline("abandoning the target after the crash", () -> subject.abandon(dead));
        }
        List<CrashableDevice> restarted = new ArrayList<>();
        lastCrashStats.clear();
        for (CrashableDevice d : devices) {
            lastCrashStats.add(d.stats());
            restarted.add(d.restart());
        }
        devices = restarted;
        try {
            subject.checkOffline(List.<BlockDevice>copyOf(devices));
        } catch (CrashCheckFailure e) {
            throw e;
        } catch (AssertionError e) {
            stats.mismatches(1);
            throw new CrashCheckFailure(subject.name() + ": after '" + c + "' the target's offline checker failed: " + e.getMessage(), e);
        }
        target = subject.reopen(List.<BlockDevice>copyOf(devices));
        long[] observed = Patterns.read(target, 0, sectors);
        stats.sectorsChecked(sectors);
        StringBuilder bad = new StringBuilder();
        int mismatches = 0;
        for (int s = 0; s < sectors; s++) {
            if (!model.survivable(s, observed[s])) {
                if (mismatches++ < 8) {
                    bad.append("\n  sector ").append(s).append(" (offset ").append((long) s * BlockDevice.SECTOR)
                            .append(") holds ").append(SectorPattern.describe(observed[s])).append(", allowed ")
                            .append(model.describeSurvivable(s));
                }
            }
        }
        if (mismatches > 0) {
            stats.mismatches(mismatches);
            throw new CrashCheckFailure(subject.name() + ": after '" + c + "' " + mismatches
                    + " sector(s) hold neither their durable value nor one acknowledged since:" + bad);
        }
        if (logModel != null) {
            stats.logCheck();
            String violation = logModel.check(observed, inFlightFirst, inFlight);
            if (violation != null) {
                stats.mismatches(1);
                throw new CrashCheckFailure(subject.name() + ": after '" + c + "' " + violation);
            }
            logModel.rebase(observed);
        }
        for (int s = 0; s < sectors; s++) {
            model.settle(s, observed[s]);
        }
    }

    private void checkReadable(int first, int count, String what) throws IOException {
        long[] observed = Patterns.read(target, first, count);
        stats.sectorsChecked(count);
        StringBuilder bad = new StringBuilder();
        int mismatches = 0;
        for (int i = 0; i < count; i++) {
            int s = first + i;
            if (!model.readable(s, observed[i])) {
                if (mismatches++ < 8) {
                    bad.append("\n  sector ").append(s).append(" (offset ").append((long) s * BlockDevice.SECTOR)
                            .append(") reads ").append(SectorPattern.describe(observed[i])).append(", expected ")
                            .append(model.describeCurrent(s));
                }
            }
        }
        if (mismatches > 0) {
            stats.mismatches(mismatches);
            throw new CrashCheckFailure(subject.name() + ": " + what + ": " + mismatches
                    + " sector(s) do not return the newest acknowledged value:" + bad);
        }
    }

    private String describe(List<CrashOp> ops, int failedAt) {
        StringBuilder sb = new StringBuilder("\n  sequence (").append(ops.size()).append(" ops, failed at ");
        sb.append(failedAt < 0 ? "create" : failedAt >= ops.size() ? "the final restart" : "#" + failedAt).append("):");
        for (int i = 0; i < ops.size(); i++) {
            sb.append("\n    ").append(i == failedAt ? ">> " : "   ").append('#').append(i).append(' ').append(ops.get(i));
        }
        sb.append("\n  writes are numbered w1, w2, … in order; 'wN@sS' is write N's data for sector S");
        for (String st : lastCrashStats) {
            sb.append("\n  at the last crash: ").append(st);
        }
        if (devices != null) {
            for (CrashableDevice d : devices) {
                sb.append("\n  now: ").append(d.stats());
            }
        }
        return sb.toString();
    }

    /**
     * Runs {@code task} on its own thread and fails if it does not finish within the deadline,
     * or if it threw (a FutureTask keeps the throw for this thread, which would otherwise only
     * see it printed).
     */
    static void withDeadline(String what, Runnable task) {
        java.util.concurrent.FutureTask<Void> f = new java.util.concurrent.FutureTask<>(task, null);
        Thread t = new Thread(f, "crash-harness: " + what);
        t.setDaemon(true);
        t.start();
        try {
            f.get(DEADLINE_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CrashCheckFailure("interrupted while " + what);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new CrashCheckFailure(what + " did not finish within " + DEADLINE_SECONDS + " s (hang)");
        } catch (java.util.concurrent.ExecutionException e) {
            throw new CrashCheckFailure(what + " failed: " + e.getCause(), e.getCause());
        }
    }
}
