package dev.strata.testsupport.crash;

import dev.strata.api.BlockDevice;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Crash replay for any {@link CrashTestSubject}: runs a workload with the target's devices
 * recorded by {@link LogWritesDevice}s into one {@link WriteLog}, then for each crash point of
 * the recording (every flush and FUA entry, every point where the target acknowledged a flush or
 * a FUA request, and the end) rebuilds the devices' images
 * ({@link LogReplay}) in each of the chosen {@link CrashMode}s, runs the target's offline
 * checker, reopens the target over them and compares every sector with the
 * {@link ReferenceModel} (and the {@link LogModel} for a log-structured target) as of that point:
 * a request whose lower I/O had all completed at the point counts as acknowledged, one partly
 * recorded as in flight (it may or may not have landed), later ones as never issued.
 *
 * <pre>{@code
 * CrashStats stats = CrashReplay.run(subject, CrashReplay.Options.DEFAULT);
 * // prints: crash replay [linear]: operations: 200, crash points replayed: 57, ... mismatches: 0
 * }</pre>
 */
public final class CrashReplay {

    /**
     * What to replay: {@code operations} random operations (no crashes) from {@code seed}; at
     * each point the images of {@code modes}; at most {@code maxPoints} points (evenly chosen).
     */
    public record Options(int operations, long seed, List<CrashMode> modes, int maxPoints) {
        /** 200 operations, seed 1, KEEP_ALL + DROP_ALL + TORN at up to 400 points. */
        public static final Options DEFAULT = new Options(200, 1, List.of(CrashMode.KEEP_ALL, CrashMode.DROP_ALL, CrashMode.TORN), 400);

        public Options withOperations(int n) {
            return new Options(n, seed, modes, maxPoints);
        }

        public Options withSeed(long s) {
            return new Options(operations, s, modes, maxPoints);
        }
    }

    private record Applied(CrashOp op, int firstSector, long[] tokens, long start, long end) {
    }

    private final CrashTestSubject subject;
    private final Options options;
    private final CrashStats stats;
    private final Workload workload;
    private final int sectors;

    private CrashReplay(CrashTestSubject subject, Options options, CrashStats stats) {
        this.subject = subject;
        this.options = options;
        this.stats = stats;
        this.workload = subject.workload();
        this.sectors = (int) (workload.bytes() / BlockDevice.SECTOR);
    }

    /**
     * Records, replays and checks; prints and returns the report. Throws {@link CrashCheckFailure} on a mismatch.
     * A soak run ({@link CrashSoak}) replays {@code factor} recordings, from seeds {@code seed},
     * {@code seed + 1_000_003}, …, into the one report.
     */
    public static CrashStats run(CrashTestSubject subject, Options options) {
        CrashStats stats = new CrashStats();
        for (int k = 0; k < CrashSoak.factor(); k++) {
            Options o = options.withSeed(options.seed() + k * 1_000_003L);
            try {
                new CrashReplay(subject, o, stats).execute();
            } catch (IOException e) {
                throw new CrashCheckFailure(subject.name() + ": crash replay (seed " + o.seed() + ") failed: " + e, e);
            } catch (CrashCheckFailure e) {
                if (k == 0) {
                    throw e;
                }
                throw new CrashCheckFailure("soak recording " + k + " (seed " + o.seed() + "): " + e.getMessage(), e.getCause());
            }
        }
        System.out.println(stats.replayReport(subject.name()));
        return stats;
    }

    private void execute() throws IOException {
        if (subject.devices().isEmpty()) {
            throw new IllegalArgumentException(subject.name() + ": crash replay needs a target over devices");
        }
        WriteLog log = new WriteLog();
        List<BlockDevice> recorded = new ArrayList<>();
        List<byte[]> initial = new ArrayList<>();
        List<Integer> blockSizes = new ArrayList<>();
        List<BlockDevice> media = new ArrayList<>();
        List<Applied> applied;
        try {
            int i = 0;
            for (CrashTestSubject.DeviceSpec spec : subject.devices()) {
                BlockDevice d = subject.recordingMedium(spec);
                media.add(d);
                byte[] image = new byte[Math.toIntExact(spec.size())];
                d.read(0, java.nio.ByteBuffer.wrap(image));
                initial.add(image);
                blockSizes.add(spec.blockSize());
                recorded.add(new LogWritesDevice(d, log, i++));
            }
            List<CrashOp> ops = CrashOps.random(workload.withoutCrashes(), new Random(options.seed()), options.operations());
            applied = record(ops, recorded, log);
        } finally {
            for (BlockDevice d : media) {
                subject.releaseMedium(d);
            }
        }
        List<LogEntry> entries = log.entries();

        LogReplay replay = new LogReplay(entries, initial, blockSizes);
        // crash points: where the log shows new durable data (flush, FUA), and where the target
        // acknowledged a FUA request or a flush (a target that drops FUA or lies about a flush
        // leaves no mark in the log: only a point right after its acknowledgement exposes it)
        java.util.TreeSet<Integer> all = new java.util.TreeSet<>(LogReplay.durabilityPoints(entries));
        for (Applied a : applied) {
            if (claimsDurability(a.op())) {
                all.add((int) a.end());
            }
        }
        List<Integer> points = new ArrayList<>(all);
        if (points.size() > options.maxPoints()) {
            List<Integer> sampled = new ArrayList<>();
            for (int k = 0; k < options.maxPoints(); k++) {
                sampled.add(points.get((int) ((long) k * points.size() / options.maxPoints())));
            }
            sampled.add(points.get(points.size() - 1));
            points = sampled.stream().distinct().toList();
        }
        Random random = new Random(options.seed() * 31 + 7);
        for (int point : points) {
            LogReplay.Point p = replay.advanceTo(point);
            stats.crashPoint();
            for (CrashMode mode : options.modes()) {
                checkImages(p, mode, replay.images(mode, random), applied, entries);
            }
        }
    }

    private List<Applied> record(List<CrashOp> ops, List<BlockDevice> devices, WriteLog log) throws IOException {
        List<Applied> applied = new ArrayList<>();
        int spu = workload.sectorsPerUnit();
        long writeIds = 0;
        BlockDevice target = subject.create(List.copyOf(devices));
        try {
            for (CrashOp op : ops) {
                stats.operation();
                long start = log.position();
                int first = 0;
                long[] tokens = null;
                IssuedOp issued = IssuedOp.of(op, workload, op instanceof CrashOp.Write ? ++writeIds : 0);
                if (issued != null) {
                    issued.issueTo(target, workload);
                    first = issued.firstSector();
                    tokens = issued.tokens();
                } else if (op instanceof CrashOp.Background) {
                    subject.background(target);
                } else if (op instanceof CrashOp.Restart) {
                    target.close();
                    target = null;
                    target = subject.reopen(List.copyOf(devices));
                } else if (op instanceof CrashOp.Read r) {
                    Patterns.read(target, r.unit() * spu, r.count() * spu); // exercises the read path; checked by the crash model
                }
                applied.add(new Applied(op, first, tokens, start, log.position()));
            }
            target.close();
            target = null;
        } finally {
            if (target != null) {
                subject.abandon(target);
            }
        }
        return applied;
    }

    private void checkImages(LogReplay.Point p, CrashMode mode, List<byte[]> images, List<Applied> applied, List<LogEntry> entries)
            throws IOException {
        stats.crash(mode);
        long at = p.entriesApplied();
        ReferenceModel model = new ReferenceModel(sectors);
        LogModel logModel = subject.logStructured() ? new LogModel(sectors) : null;
        int inFlightFirst = -1;
        long[] inFlight = null;
        String inFlightOp = "none";
        for (Applied a : applied) {
            if (a.end() <= at) {
                applyAcknowledged(a, model, logModel);
            } else if (a.start() < at) {
                if (a.tokens() != null) {
                    model.inFlight(a.firstSector(), a.tokens());
                    inFlightFirst = a.firstSector();
                    inFlight = a.tokens();
                }
                inFlightOp = a.op().toString();
                break;
            } else {
                break;
            }
        }
        List<BlockDevice> devices = new ArrayList<>();
        List<CrashTestSubject.DeviceSpec> specs = subject.devices();
        // the images become devices (the subject's replay medium), the target is reopened over them
        try {
            for (int i = 0; i < images.size(); i++) {
                devices.add(subject.replayMedium(specs.get(i), images.get(i)));
            }
            checkPoint(p, mode, model, logModel, inFlightFirst, inFlight, inFlightOp, devices, entries);
        } finally {
            for (BlockDevice d : devices) {
                subject.releaseMedium(d);
            }
        }
    }

    private void checkPoint(LogReplay.Point p, CrashMode mode, ReferenceModel model, LogModel logModel, int inFlightFirst,
            long[] inFlight, String inFlightOp, List<BlockDevice> devices, List<LogEntry> entries) throws IOException {
        long at = p.entriesApplied();
        String where = subject.name() + ": crash point " + (at == 0 ? "before the first log entry" : "after log entry " + (at - 1))
                + " of " + entries.size()
                + (p.last() == null ? "" : " (" + p.last() + ")") + ", image " + mode.label() + ", request in flight: " + inFlightOp;
        try {
            subject.checkOffline(devices);
        } catch (AssertionError e) {
            stats.mismatches(1);
            throw new CrashCheckFailure(where + ": the target's checker failed: " + e.getMessage(), e);
        }
        BlockDevice target;
        try {
            target = subject.reopen(devices);
        } catch (IOException | RuntimeException e) {
            stats.mismatches(1);
            throw new CrashCheckFailure(where + ": reopen failed: " + e, e);
        }
        try {
            long[] observed = Patterns.read(target, 0, sectors);
            stats.sectorsChecked(sectors);
            StringBuilder bad = new StringBuilder();
            int mismatches = 0;
            for (int s = 0; s < sectors; s++) {
                if (!model.survivable(s, observed[s]) && mismatches++ < 8) {
                    bad.append("\n  sector ").append(s).append(" (offset ").append((long) s * BlockDevice.SECTOR).append(") holds ")
                            .append(SectorPattern.describe(observed[s])).append(", allowed ").append(model.describeSurvivable(s));
                }
            }
            if (mismatches > 0) {
                stats.mismatches(mismatches);
                throw new CrashCheckFailure(where + ": " + mismatches + " sector(s) hold neither their durable value nor one acknowledged since:" + bad);
            }
            if (logModel != null) {
                stats.logCheck();
                String violation = logModel.check(observed, inFlightFirst, inFlight);
                if (violation != null) {
                    stats.mismatches(1);
                    throw new CrashCheckFailure(where + ": " + violation);
                }
            }
        } finally {
            subject.abandon(target);
        }
    }

    private static boolean claimsDurability(CrashOp op) {
        return op instanceof CrashOp.Flush || op instanceof CrashOp.Restart
                || op instanceof CrashOp.Write w && w.fua() || op instanceof CrashOp.Zero z && z.fua();
    }

    private static void applyAcknowledged(Applied a, ReferenceModel model, LogModel logModel) {
        IssuedOp.acknowledge(a.op(), a.firstSector(), a.tokens(), model, logModel);
    }
}
