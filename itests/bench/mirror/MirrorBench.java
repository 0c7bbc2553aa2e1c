import dev.strata.api.BlockDevice;
import dev.strata.api.Requests;
import dev.strata.mirror.internal.io.MirrorTarget;
import dev.strata.mirror.internal.log.CoreLog;
import dev.strata.mirror.internal.log.DiskLog;
import dev.strata.mirror.internal.log.RegionLog;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

/**
 * In-process benchmarks of the mirror's region log (not tests): run by run.sh next to this file.
 * Legs and the disk: log are files on the local disk (FileChannel, flush = fdatasync), so a log
 * round trip is a write and an fdatasync of the log file, as dm-log's disk log costs.
 *
 * <ol>
 * <li>resync after a crash: writes into some regions, the process "crashes" (the mirror is
 * dropped without close, nothing cleared), the mirror is reopened over the same files; the
 * bytes it resyncs are compared with (dirty regions × region size), and the legs checked equal;</li>
 * <li>round trips per flush and writes/s, integrated flush vs naive ({@code integrated_flush=false}),
 * on small writes with a flush every 4 writes (a new region every flush interval, as the
 * round-trip test's workload), and hot-region writes with the disk: log vs the core log.</li>
 * </ol>
 */
public final class MirrorBench {
    static final int KIB = 1024;
    static final int MIB = 1 << 20;

    /** A FileChannel block device that counts the bytes read and written. */
    static final class FileDevice implements BlockDevice {
        final FileChannel ch;
        final long size;
        final AtomicLong read = new AtomicLong();
        final AtomicLong written = new AtomicLong();

        FileDevice(Path p, long size) throws IOException {
            ch = FileChannel.open(p, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
            if (ch.size() < size) {
                ch.write(ByteBuffer.allocate(1), size - 1);
            }
            this.size = size;
        }

        public long size() { return size; }
        public int blockSize() { return 4096; }

        public void read(long off, ByteBuffer dst) throws IOException {
            Requests.check(size, off, dst.remaining());
            read.addAndGet(dst.remaining());
            while (dst.hasRemaining()) {
                int n = ch.read(dst, off);
                if (n < 0) {
                    throw new IOException("eof");
                }
                off += n;
            }
        }

        public void write(long off, ByteBuffer src, int flags) throws IOException {
            Requests.check(size, off, src.remaining());
            written.addAndGet(src.remaining());
            while (src.hasRemaining()) {
                off += ch.write(src, off);
            }
            if ((flags & FUA) != 0) {
                ch.force(false);
            }
        }

        public void flush() throws IOException { ch.force(false); }
        public void discard(long o, long l) { }
        public void writeZeroes(long o, long l, int f) throws IOException { write(o, ByteBuffer.allocate((int) l), f); }
        public void close() throws IOException { ch.close(); }
    }

    final Path dir;
    final boolean quick;

    MirrorBench(Path dir, boolean quick) {
        this.dir = dir;
        this.quick = quick;
    }

    public static void main(String[] args) throws Exception {
        Path dir = Files.createTempDirectory(Path.of(args.length > 0 ? args[0] : "/var/tmp"), "mirror-bench");
        boolean quick = Arrays.asList(args).contains("--quick");
        try {
            MirrorBench b = new MirrorBench(dir, quick);
            b.resyncAfterCrash();
            b.roundTrips();
        } finally {
            try (var s = Files.list(dir)) {
                for (Path p : s.toList()) {
                    Files.deleteIfExists(p);
                }
            }
            Files.deleteIfExists(dir);
        }
    }

    static MirrorTarget.Options options(boolean manual) {
        return MirrorTarget.Options.defaults().withManual(manual).withNosync(true);
    }

    /** (a) After a crash only the dirty regions are read and written. */
    void resyncAfterCrash() throws IOException {
        long size = (quick ? 256L : 1024L) * MIB;
        long region = 64 * KIB;
        int regions = (int) (size / region);
        int touched = quick ? 200 : 800;
        FileDevice a = new FileDevice(dir.resolve("ra.img"), size);
        FileDevice b = new FileDevice(dir.resolve("rb.img"), size);
        FileDevice logDev = new FileDevice(dir.resolve("rlog.img"), 1 * MIB);
        MirrorTarget m = MirrorTarget.open("bench", List.of("a", "b"), List.of(a, b), new DiskLog("rlog", logDev, 0), region,
                options(true).withClearDelayNanos(3_600_000_000_000L));
        Random random = new Random(15);
        BitSet written = new BitSet();
        byte[] data = new byte[16 * KIB];
        for (int i = 0; i < touched; i++) {
            int r = random.nextInt(regions);
            random.nextBytes(data);
            m.write(r * region + 4096L * random.nextInt((int) (region / 4096) - 4), ByteBuffer.wrap(data), 0);
            written.set(r);
        }
        m.flush();
        // the crash: the mirror is dropped, not closed (its log keeps every mark, nothing cleared);
        // a write reached leg a only, as a power cut between the legs' writes leaves it
        byte[] torn = new byte[4096];
        random.nextBytes(torn);
        int tornRegion = written.nextSetBit(0);
        a.write(tornRegion * region, ByteBuffer.wrap(torn), 0);
        a.flush();
        long read0 = a.read.get() + b.read.get();
        long written0 = a.written.get() + b.written.get();
        long t0 = System.nanoTime();
        MirrorTarget r = MirrorTarget.open("bench", List.of("a", "b"), List.of(a, b), new DiskLog("rlog", logDev, 0), region,
                options(true));
        Map<String, String> s0 = r.status();
        long dirty = Long.parseLong(s0.get("dirty_regions"));
        r.resyncAll();
        double secs = (System.nanoTime() - t0) / 1e9;
        Map<String, String> s = r.status();
        long resynced = Long.parseLong(s.get("resync_bytes"));
        long legRead = a.read.get() + b.read.get() - read0;
        long legWritten = a.written.get() + b.written.get() - written0;
        r.flush();
        boolean equal = sameFiles(a, b, size);
        r.close();
        long bound = dirty * region;
        System.out.println("## resync after a crash (disk: log, region 64 KiB, " + size / MIB + " MiB legs)");
        System.out.println();
        System.out.println("| regions | written before the crash | dirty in the log at restart | bytes resynced | bound: dirty × region | leg bytes read / written in resync | time | legs equal |");
        System.out.println("|---|---|---|---|---|---|---|---|");
        System.out.printf(Locale.ROOT, "| %d | %d | %d | %d | %d | %d / %d | %.2f s | %s |%n", regions, written.cardinality(), dirty,
                resynced, bound, legRead, legWritten, secs, equal);
        System.out.println();
        System.out.println(resynced <= bound && legRead <= bound && legWritten <= bound && equal
                ? "resync: PASS (bytes resynced ≤ dirty regions × region size; the torn write was repaired)"
                : "resync: FAIL");
        System.out.println();
        a.close();
        b.close();
        logDev.close();
    }

    static boolean sameFiles(FileDevice a, FileDevice b, long size) throws IOException {
        ByteBuffer x = ByteBuffer.allocate(4 * MIB);
        ByteBuffer y = ByteBuffer.allocate(4 * MIB);
        for (long off = 0; off < size; off += x.capacity()) {
            x.clear();
            y.clear();
            a.ch.read(x, off);
            b.ch.read(y, off);
            if (!x.flip().equals(y.flip())) {
                return false;
            }
        }
        return true;
    }

    /** (c) Log round trips per flush and writes/s: integrated vs naive; hot regions: disk vs core log. */
    void roundTrips() throws IOException {
        long size = 256L * MIB;
        long region = 64 * KIB;
        int intervals = quick ? 150 : 1000;
        int reps = quick ? 3 : 5;
        System.out.println("## log round trips: small writes, a flush every 4 (each interval starts a new region)");
        System.out.println();
        System.out.println("| log | mode | rep | flush intervals | round trips | per flush | per write | writes/s |");
        System.out.println("|---|---|---|---|---|---|---|---|");
        double[][] rate = new double[2][reps];
        double[][] perFlush = new double[2][reps];
        for (int rep = 0; rep < reps; rep++) {
            for (int mode = 0; mode < 2; mode++) { // alternating, so drift on a shared machine hits both
                double[] r = newRegionWorkload(size, region, intervals, mode == 0, rep);
                rate[mode][rep] = r[0];
                perFlush[mode][rep] = r[1];
            }
        }
        double ri = median(rate[0]);
        double rn = median(rate[1]);
        System.out.println();
        System.out.printf(Locale.ROOT, "round trips per flush: integrated %.2f, naive %.2f; writes/s integrated / naive = %.2f×%n",
                median(perFlush[0]), median(perFlush[1]), ri / rn);
        System.out.println();
        System.out.println("## hot regions: 4 KiB writes into regions already marked, a flush every 4 (disk: log vs core log)");
        System.out.println();
        System.out.println("| log | rep | writes | round trips | writes/s |");
        System.out.println("|---|---|---|---|---|");
        double[][] hot = new double[2][reps];
        for (int rep = 0; rep < reps; rep++) {
            for (int log = 0; log < 2; log++) {
                hot[log][rep] = hotWorkload(size, region, quick ? 600 : 4000, log == 0, rep);
            }
        }
        System.out.println();
        System.out.printf(Locale.ROOT, "hot-region writes/s: disk: log / core log = %.2f×%n", median(hot[0]) / median(hot[1]));
        System.out.println();
    }

    /** Returns {writes/s, round trips per flush}. */
    double[] newRegionWorkload(long size, long region, int intervals, boolean integrated, int rep) throws IOException {
        FileDevice a = new FileDevice(dir.resolve("ta.img"), size);
        FileDevice b = new FileDevice(dir.resolve("tb.img"), size);
        Path logPath = dir.resolve("tlog.img");
        Files.deleteIfExists(logPath);
        FileDevice logDev = new FileDevice(logPath, 1 * MIB);
        MirrorTarget m = MirrorTarget.open("bench", List.of("a", "b"), List.of(a, b), new DiskLog("tlog", logDev, 0), region,
                options(false));
        m.message("integrated_flush", Boolean.toString(integrated));
        byte[] data = new byte[4096];
        new Random(1).nextBytes(data);
        int regions = (int) (size / region);
        Map<String, String> s0 = m.status();
        long rt0 = Long.parseLong(s0.get("log_round_trips"));
        long t0 = System.nanoTime();
        for (int c = 0; c < intervals; c++) {
            long base = (c % regions) * region;
            for (int i = 0; i < 4; i++) {
                m.write(base + i * 4096L, ByteBuffer.wrap(data), 0);
            }
            m.flush();
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        long rt = Long.parseLong(m.status().get("log_round_trips")) - rt0;
        m.close();
        a.close();
        b.close();
        logDev.close();
        double perFlush = (double) rt / intervals;
        double wps = intervals * 4 / secs;
        System.out.printf(Locale.ROOT, "| disk | %s | %d | %d | %d | %.2f | %.3f | %.0f |%n", integrated ? "integrated" : "naive",
                rep + 1, intervals, rt, perFlush, (double) rt / (intervals * 4), wps);
        return new double[] {wps, perFlush};
    }

    double hotWorkload(long size, long region, int writes, boolean disk, int rep) throws IOException {
        FileDevice a = new FileDevice(dir.resolve("ha.img"), size);
        FileDevice b = new FileDevice(dir.resolve("hb.img"), size);
        Path logPath = dir.resolve("hlog.img");
        Files.deleteIfExists(logPath);
        FileDevice logDev = disk ? new FileDevice(logPath, 1 * MIB) : null;
        RegionLog log = disk ? new DiskLog("hlog", logDev, 0) : new CoreLog();
        MirrorTarget m = MirrorTarget.open("bench", List.of("a", "b"), List.of(a, b), log, region, options(false));
        byte[] data = new byte[4096];
        new Random(2).nextBytes(data);
        Random random = new Random(3);
        int hotRegions = 16;
        for (int r = 0; r < hotRegions; r++) {
            m.write(r * region, ByteBuffer.wrap(data), 0); // mark the hot set
        }
        long rt0 = Long.parseLong(m.status().get("log_round_trips"));
        long t0 = System.nanoTime();
        for (int i = 0; i < writes; i++) {
            long off = random.nextInt(hotRegions) * region + 4096L * random.nextInt((int) (region / 4096));
            m.write(off, ByteBuffer.wrap(data), 0);
            if (i % 4 == 3) {
                m.flush();
            }
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        long rt = Long.parseLong(m.status().get("log_round_trips")) - rt0;
        m.close();
        a.close();
        b.close();
        if (logDev != null) {
            logDev.close();
        }
        double wps = writes / secs;
        System.out.printf(Locale.ROOT, "| %s | %d | %d | %d | %.0f |%n", disk ? "disk" : "core", rep + 1, writes, rt, wps);
        return wps;
    }

    static double median(double[] v) {
        double[] c = v.clone();
        Arrays.sort(c);
        return c.length % 2 == 1 ? c[c.length / 2] : (c[c.length / 2 - 1] + c[c.length / 2]) / 2;
    }
}
