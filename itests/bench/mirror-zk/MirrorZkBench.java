import dev.strata.api.BlockDevice;
import dev.strata.mirror.internal.io.MirrorTarget;
import dev.strata.mirror.internal.log.CoreLog;
import dev.strata.mirror.internal.log.RegionLog;
import dev.strata.mirror.internal.log.zk.ZkLogConfig;
import dev.strata.mirror.internal.log.zk.ZooKeeperLog;
import dev.strata.testsupport.zk.ZooKeeperServer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

/**
 * The zookeeper: log's figures of issue 15, in process with the mirror bundle's own classes (not a
 * test), against Debian's real ZooKeeper server (its transaction log on BENCH_TMPDIR, synced per
 * request as in production), legs in memory so the log is what is measured:
 * <ol>
 * <li>round trips per flush, integrated flush vs the naive mark-then-flush-then-clear log
 * ({@code integrated_flush=false}: the seed's dm-log-userspace requests, mark, flush and clear,
 * each a round trip of its own — three per interval), on 4 KiB writes with a flush every N writes (N writes into a
 * new region per flush interval, as RoundTripTest);</li>
 * <li>writes/s of that workload both ways (goal ≥ 2×);</li>
 * <li>writes/s into hot (already marked) regions, zookeeper log vs core log (goal ≥ 0.9×).</li>
 * </ol>
 * After a warm-up, each figure is the median of REPS runs, the order of the two sides alternating.
 *
 * <p>Usage: MirrorZkBench OUTDIR TMPDIR [--quick]
 */
public final class MirrorZkBench {
    static final long REGION = 64 * 1024;
    static final long SIZE = 64L << 20; // 1024 regions; small legs keep GC out of the figures
    static final int N = 4;

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        Path tmp = Files.createTempDirectory(Path.of(args[1]), "mirror-zk-bench");
        boolean quick = List.of(args).contains("--quick");
        long seconds = quick ? 2 : 5;
        int reps = quick ? 3 : 5;
        StringBuilder report = new StringBuilder();
        try (ZooKeeperServer zk = ZooKeeperServer.start(tmp.resolve("zk"))) {
            List<double[]> flushRuns = new ArrayList<>();
            List<double[]> hotRuns = new ArrayList<>();
            int path = 0;
            // warm-up (JIT, the server's first snapshot), not counted
            flushEveryN(zkLog(zk, "/bench/warm-i"), true, 1);
            flushEveryN(zkLog(zk, "/bench/warm-n"), false, 1);
            hot(zkLog(zk, "/bench/warm-h"), 1);
            hot(new CoreLog(), 1);
            for (int rep = 0; rep < reps; rep++) {
                // alternate which side runs first, so a load change during a rep hits both alike
                boolean zkFirst = rep % 2 == 0;
                double[] integrated;
                double[] naive;
                if (zkFirst) {
                    integrated = flushEveryN(zkLog(zk, "/bench/i" + rep + "-" + path++), true, seconds);
                    naive = flushEveryN(zkLog(zk, "/bench/n" + rep + "-" + path++), false, seconds);
                } else {
                    naive = flushEveryN(zkLog(zk, "/bench/n" + rep + "-" + path++), false, seconds);
                    integrated = flushEveryN(zkLog(zk, "/bench/i" + rep + "-" + path++), true, seconds);
                }
                flushRuns.add(new double[] {integrated[0], integrated[1], naive[0], naive[1], integrated[0] / naive[0]});
                double hz;
                double hc;
                if (zkFirst) {
                    hz = hot(zkLog(zk, "/bench/h" + rep + "-" + path++), seconds);
                    hc = hot(new CoreLog(), seconds);
                } else {
                    hc = hot(new CoreLog(), seconds);
                    hz = hot(zkLog(zk, "/bench/h" + rep + "-" + path++), seconds);
                }
                hotRuns.add(new double[] {hz, hc, hz / hc});
                System.err.printf(Locale.ROOT, "rep %d: integrated %.0f w/s %.3f rt/flush, naive %.0f w/s %.3f rt/flush; hot zk %.0f w/s core %.0f w/s%n",
                        rep + 1, integrated[0], integrated[1], naive[0], naive[1], hz, hc);
            }
            double wi = median(flushRuns, 0);
            double ri = median(flushRuns, 1);
            double wn = median(flushRuns, 2);
            double rn = median(flushRuns, 3);
            double hz = median(hotRuns, 0);
            double hc = median(hotRuns, 1);
            double flushRatio = median(flushRuns, 4);
            double hotRatio = median(hotRuns, 2);
            report.append(String.format(Locale.ROOT, "| workload | zookeeper log, integrated | naive (integrated_flush=false) | ratio | goal |%n"));
            report.append(String.format(Locale.ROOT, "|---|---:|---:|---:|---|%n"));
            report.append(String.format(Locale.ROOT, "| log round trips per flush (4 KiB writes, flush every %d) | %.2f | %.2f | %.2f × fewer | the seed: 2–3 → 1 |%n", N, ri, rn, rn / ri));
            report.append(String.format(Locale.ROOT, "| writes/s, flush every %d writes | %.0f | %.0f | %.2f × (median of the runs' ratios) | ≥ 2 × %s |%n",
                    N, wi, wn, flushRatio, flushRatio >= 2 ? "PASS" : "FAIL"));
            report.append(String.format(Locale.ROOT, "%n| workload | zookeeper log | core log | ratio | goal |%n|---|---:|---:|---:|---|%n"));
            report.append(String.format(Locale.ROOT, "| writes/s into hot regions (4 KiB random, no log round trip) | %.0f | %.0f | %.2f × (median of the runs' ratios) | ≥ 0.9 × %s |%n",
                    hz, hc, hotRatio, hotRatio >= 0.9 ? "PASS" : "FAIL"));
            report.append(String.format(Locale.ROOT, "%nmedians of %d alternating runs of %d s each%n", reps, seconds));
        } finally {
            deleteTree(tmp);
        }
        Files.writeString(out.resolve("result.md"), report.toString());
        System.out.print(report);
    }

    static RegionLog zkLog(ZooKeeperServer zk, String path) {
        return new ZooKeeperLog(new ZkLogConfig(zk.connect(), path, "bench", 10_000), 0);
    }

    static MirrorTarget mirror(RegionLog log) throws IOException {
        return MirrorTarget.open("mb", List.of("a", "b"), List.of(new Ram(SIZE), new Ram(SIZE)), log, REGION,
                MirrorTarget.Options.defaults().withNosync(true));
    }

    /** N 4 KiB writes into a new region, then a flush, for {@code seconds}: {writes/s, log round trips per flush}. */
    static double[] flushEveryN(RegionLog log, boolean integrated, long seconds) throws IOException {
        MirrorTarget m = mirror(log);
        try {
            m.message("integrated_flush", Boolean.toString(integrated));
            ByteBuffer b = ByteBuffer.allocate(4096);
            long regions = SIZE / REGION;
            long rt0 = stat(m, "log_round_trips");
            long f0 = stat(m, "flushes");
            long writes = 0;
            long t0 = System.nanoTime();
            long end = t0 + seconds * 1_000_000_000L;
            for (long cycle = 0; System.nanoTime() < end; cycle++) {
                long base = (cycle % regions) * REGION;
                for (int i = 0; i < N; i++) {
                    m.write(base + i * 4096L, b.clear(), 0);
                    writes++;
                }
                m.flush();
            }
            double secs = (System.nanoTime() - t0) / 1e9;
            return new double[] {writes / secs, (double) (stat(m, "log_round_trips") - rt0) / (stat(m, "flushes") - f0)};
        } finally {
            m.close();
        }
    }

    /**
     * Random 4 KiB writes into 64 already-marked regions, no flush (a flush would make them
     * pending clears, and after clear_delay the clear-only commit and the marks again are log
     * round trips the core log does not pay): writes/s. Fails if the log saw a round trip.
     */
    static double hot(RegionLog log, long seconds) throws IOException {
        MirrorTarget m = mirror(log);
        try {
            ByteBuffer b = ByteBuffer.allocate(4096);
            int hotRegions = 64;
            for (int r = 0; r < hotRegions; r++) {
                m.write(r * REGION, b.clear(), 0);
            }
            Random rnd = new Random(1);
            long blocks = hotRegions * REGION / 4096;
            long rt0 = stat(m, "log_round_trips");
            long writes = 0;
            long t0 = System.nanoTime();
            long end = t0 + seconds * 1_000_000_000L;
            while (System.nanoTime() < end) {
                m.write((long) rnd.nextInt((int) blocks) * 4096, b.clear(), 0);
                writes++;
            }
            double rate = writes / ((System.nanoTime() - t0) / 1e9);
            if (stat(m, "log_round_trips") != rt0) {
                throw new IllegalStateException("writes into hot regions made log round trips: " + m.status());
            }
            return rate;
        } finally {
            m.close();
        }
    }

    static long stat(MirrorTarget m, String k) {
        return Long.parseLong(m.status().get(k));
    }

    static double median(List<double[]> runs, int i) {
        double[] v = runs.stream().mapToDouble(r -> r[i]).sorted().toArray();
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (var s = Files.walk(p)) {
            for (Path q : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(q);
            }
        }
    }

    /** A leg in memory: the log is what the bench measures. */
    static final class Ram implements BlockDevice {
        private final byte[] data;

        Ram(long size) {
            data = new byte[Math.toIntExact(size)];
        }

        public long size() {
            return data.length;
        }

        public int blockSize() {
            return 4096;
        }

        public void read(long offset, ByteBuffer dst) {
            dst.put(data, (int) offset, dst.remaining());
        }

        public void write(long offset, ByteBuffer src, int flags) {
            src.get(data, (int) offset, src.remaining());
        }

        public void flush() {
        }

        public void discard(long offset, long length) {
        }

        public void writeZeroes(long offset, long length, int flags) {
            java.util.Arrays.fill(data, (int) offset, (int) (offset + length), (byte) 0);
        }

        public void close() {
        }
    }
}
