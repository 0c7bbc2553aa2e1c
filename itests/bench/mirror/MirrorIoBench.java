import dev.strata.api.BlockDevice;
import dev.strata.api.Requests;
import dev.strata.mirror.internal.io.MirrorTarget;
import dev.strata.mirror.internal.io.ReadPolicy;
import dev.strata.mirror.internal.log.DiskLog;
import dev.strata.testkit.internal.spindle.DiskModel;
import dev.strata.testkit.internal.spindle.SpindleTarget;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * In-process benchmark of the mirror's I/O path (not a test; run by run.sh, {@code --only io}):
 * the mirror over two legs against one leg alone, without NBD and fio, so the mirror's own cost
 * shows: throughput, CPU seconds per GiB (or per million reads) of this whole JVM, and bytes the
 * JVM allocated per request. Leg kinds: {@code file} (FileChannel, page cache, as the file
 * target), {@code direct} (O_DIRECT, as the direct target: each request goes to the disk) and
 * {@code spindle} (the test kit's disk model over a file: one request at a time, like a disk of
 * its own). Sequential 1 MiB writes from 4 threads sharing one advancing offset (fio's iodepth 4),
 * 4 KiB random reads from 16 threads. The systems alternate within each repetition.
 *
 * <p>Usage: {@code MirrorIoBench DIR [--quick] [--reps N] [--kinds file,direct,spindle]}
 */
public final class MirrorIoBench {
    static final int KIB = 1024;
    static final int MIB = 1 << 20;

    /** A FileChannel device, buffered or O_DIRECT. */
    static final class FileDevice implements BlockDevice {
        final FileChannel ch;
        final long size;

        FileDevice(Path p, long size, boolean direct) throws IOException {
            try (FileChannel c = FileChannel.open(p, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                if (c.size() < size) {
                    c.write(ByteBuffer.allocate(1), size - 1);
                }
            }
            List<OpenOption> o = new ArrayList<>(List.of(StandardOpenOption.READ, StandardOpenOption.WRITE));
            if (direct) {
                o.add(com.sun.nio.file.ExtendedOpenOption.DIRECT);
            }
            ch = FileChannel.open(p, o.toArray(new OpenOption[0]));
            this.size = size;
        }

        public long size() { return size; }
        public int blockSize() { return 4096; }

        public void read(long off, ByteBuffer dst) throws IOException {
            Requests.check(size, off, dst.remaining());
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
            while (src.hasRemaining()) {
                off += ch.write(src, off);
            }
            if ((flags & FUA) != 0) {
                ch.force(false);
            }
        }

        public void flush() throws IOException { ch.force(false); }
        public void discard(long o, long l) { }
        public void writeZeroes(long o, long l, int f) throws IOException {
            write(o, ByteBuffer.allocateDirect((int) l).alignedSlice(4096), f);
        }
        public void close() throws IOException { ch.close(); }
    }

    interface Work {
        /** One request by thread {@code t}; returns the bytes it moved. */
        long run(BlockDevice d, ByteBuffer buf) throws IOException;
    }

    record Result(double perSecond, double mibs, double cpuSeconds, long requests, long bytes, double allocPerRequest) { }

    final Path dir;
    final boolean quick;
    final long legSize;
    final double seconds;
    final List<AutoCloseable> open = new ArrayList<>();

    MirrorIoBench(Path dir, boolean quick) {
        this.dir = dir;
        this.quick = quick;
        this.legSize = (quick ? 256L : 1024L) * MIB;
        this.seconds = quick ? 2 : 5;
    }

    public static void main(String[] args) throws Exception {
        Path dir = Files.createTempDirectory(Path.of(args.length > 0 ? args[0] : "/var/tmp"), "mirror-io");
        boolean quick = false;
        int reps = 3;
        String kinds = "file,direct,spindle";
        for (int i = 1; i < args.length; i++) {
            switch (args[i]) {
                case "--quick" -> quick = true;
                case "--reps" -> reps = Integer.parseInt(args[++i]);
                case "--kinds" -> kinds = args[++i];
                default -> throw new IllegalArgumentException("MirrorIoBench: unknown option " + args[i]);
            }
        }
        MirrorIoBench b = new MirrorIoBench(dir, quick);
        try {
            System.out.println("## the mirror's I/O path in process (no NBD): mirror over two legs vs one leg, " + reps + " repetitions");
            System.out.println();
            System.out.println("CPU: seconds of this JVM (every thread) per GiB written, or per million reads; alloc: bytes the JVM allocated per request.");
            System.out.println();
            System.out.println("| legs | workload | system | rep | rate | CPU | alloc/request |");
            System.out.println("|---|---|---|---|---|---|---|");
            List<String> summary = new ArrayList<>();
            for (String kind : kinds.split(",")) {
                summary.addAll(b.kind(kind.trim(), reps));
            }
            System.out.println();
            System.out.println("| legs | workload | mirror / leg per repetition | median | CPU mirror / leg (median) |");
            System.out.println("|---|---|---|---|---|");
            summary.forEach(System.out::println);
            System.out.println();
        } finally {
            for (AutoCloseable c : b.open) {
                c.close();
            }
            try (var s = Files.list(dir)) {
                for (Path p : s.toList()) {
                    Files.deleteIfExists(p);
                }
            }
            Files.deleteIfExists(dir);
        }
    }

    BlockDevice leg(String kind, String name, int seed) throws IOException {
        FileDevice f = new FileDevice(dir.resolve(kind + "-" + name + ".img"), legSize, kind.equals("direct"));
        open.add(f);
        if (kind.equals("spindle")) {
            DiskModel.Params p = DiskModel.Params.defaults(legSize);
            return new SpindleTarget(name, f, new DiskModel(new DiskModel.Params(p.rpm(), p.seekNanos(), p.trackToTrackNanos(),
                    p.bytesPerSecond(), p.capacity(), seed)), dev.strata.testkit.internal.common.Sleeper.SYSTEM);
        }
        return f;
    }

    List<String> kind(String kind, int reps) throws Exception {
        BlockDevice alone = leg(kind, "x", 1);
        BlockDevice a = leg(kind, "a", 1);
        BlockDevice b = leg(kind, "b", 2);
        FileDevice logDev = new FileDevice(dir.resolve(kind + "-log.img"), MIB, false);
        open.add(logDev);
        MirrorTarget m = MirrorTarget.open("bench", List.of("a", "b"), List.of(a, b), new DiskLog("log", logDev, 0), 512 * KIB,
                MirrorTarget.Options.defaults().withNosync(true).withReadPolicy(ReadPolicy.ROUND_ROBIN));
        open.add(m);
        // spindle: a short region keeps random reads at the model's IOPS without minutes of filling
        long region = kind.equals("spindle") ? 64L * MIB : legSize;
        fill(alone, region);
        fill(m, region);
        List<String> out = new ArrayList<>();
        double[][] w = new double[2][reps];
        double[][] wc = new double[2][reps];
        double[][] r = new double[2][reps];
        double[][] rc = new double[2][reps];
        for (int rep = 0; rep < reps; rep++) {
            // reads first: right after writes the kernel's writeback of them would slow the reads
            int i = 0;
            for (BlockDevice d : List.of(alone, m)) {
                Result rr = randRead(d, region);
                r[i][rep] = rr.perSecond;
                rc[i][rep] = rr.cpuSeconds / (rr.requests / 1e6);
                row(kind, "rand. reads 4 KiB, 16 threads", d == m ? "mirror" : "leg alone", rep + 1,
                        String.format(Locale.ROOT, "%.0f IOPS", rr.perSecond), String.format(Locale.ROOT, "%.1f s/M reads", rc[i][rep]),
                        rr.allocPerRequest);
                i++;
            }
            i = 0;
            for (BlockDevice d : List.of(alone, m)) {
                Result sw = seqWrite(d, region);
                w[i][rep] = sw.mibs;
                wc[i][rep] = sw.cpuSeconds / (sw.bytes / (double) (1L << 30));
                row(kind, "seq. writes 1 MiB, 4 threads", d == m ? "mirror" : "leg alone", rep + 1,
                        String.format(Locale.ROOT, "%.0f MiB/s", sw.mibs), String.format(Locale.ROOT, "%.2f s/GiB", wc[i][rep]),
                        sw.allocPerRequest);
                i++;
            }
        }
        out.add(summary(kind, "seq. writes 1 MiB", w, wc));
        out.add(summary(kind, "rand. reads 4 KiB", r, rc));
        m.close();
        open.remove(m);
        return out;
    }

    static void row(String kind, String w, String sys, int rep, String rate, String cpu, double alloc) {
        System.out.printf(Locale.ROOT, "| %s | %s | %s | %d | %s | %s | %.0f B |%n", kind, w, sys, rep, rate, cpu, alloc);
    }

    static String summary(String kind, String w, double[][] v, double[][] cpu) {
        StringBuilder per = new StringBuilder();
        double[] ratios = new double[v[0].length];
        double[] cpuRatios = new double[v[0].length];
        for (int i = 0; i < ratios.length; i++) {
            ratios[i] = v[1][i] / v[0][i];
            cpuRatios[i] = cpu[1][i] / cpu[0][i];
            per.append(String.format(Locale.ROOT, "%s%.2f", i == 0 ? "" : ", ", ratios[i]));
        }
        return String.format(Locale.ROOT, "| %s | %s | %s | **%.2f×** | %.2f× |", kind, w, per, median(ratios), median(cpuRatios));
    }

    static double median(double[] v) {
        double[] s = v.clone();
        java.util.Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    void fill(BlockDevice d, long region) throws IOException {
        ByteBuffer buf = ByteBuffer.allocateDirect(MIB + 4096).alignedSlice(4096).limit(MIB).slice();
        for (long off = 0; off < region; off += MIB) {
            buf.clear();
            while (buf.hasRemaining()) {
                buf.put((byte) (off >>> 20));
            }
            buf.flip();
            d.write(off, buf, 0);
        }
        d.flush();
    }

    Result seqWrite(BlockDevice d, long region) throws Exception {
        AtomicLong next = new AtomicLong();
        Result r = run(d, 4, MIB, (dev, buf) -> {
            long off = (next.getAndIncrement() * MIB) % region;
            buf.clear();
            dev.write(off, buf, 0);
            return MIB;
        });
        d.flush();
        return r;
    }

    Result randRead(BlockDevice d, long region) throws Exception {
        long blocks = region / 4096;
        return run(d, 16, 4096, (dev, buf) -> {
            buf.clear();
            dev.read(ThreadLocalRandom.current().nextLong(blocks) * 4096, buf);
            return 4096;
        });
    }

    Result run(BlockDevice d, int threads, int bufSize, Work work) throws Exception {
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        var tm = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        AtomicLong requests = new AtomicLong();
        AtomicLong bytes = new AtomicLong();
        AtomicLong workerAlloc = new AtomicLong();
        long deadline = System.nanoTime() + (long) (seconds * 1e9);
        Exception[] failed = new Exception[1];
        List<Thread> ts = new ArrayList<>();
        long alloc0 = allocated(tm);
        long cpu0 = os.getProcessCpuTime();
        long t0 = System.nanoTime();
        for (int i = 0; i < threads; i++) {
            Thread t = new Thread(() -> {
                ByteBuffer buf = ByteBuffer.allocateDirect(bufSize + 4096).alignedSlice(4096).limit(bufSize).slice();
                long n = 0;
                long b = 0;
                long a0 = tm.getCurrentThreadAllocatedBytes();
                try {
                    while (System.nanoTime() < deadline) {
                        b += work.run(d, buf);
                        n++;
                    }
                } catch (Exception e) {
                    failed[0] = e;
                }
                workerAlloc.addAndGet(tm.getCurrentThreadAllocatedBytes() - a0);
                requests.addAndGet(n);
                bytes.addAndGet(b);
            });
            ts.add(t);
            t.start();
        }
        for (Thread t : ts) {
            t.join();
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        double cpu = (os.getProcessCpuTime() - cpu0) / 1e9;
        // the mirror's own threads are alive before and after; the workers count themselves
        long alloc = allocated(tm) - alloc0 + workerAlloc.get();
        if (failed[0] != null) {
            throw failed[0];
        }
        return new Result(requests.get() / secs, bytes.get() / secs / MIB, cpu, requests.get(), bytes.get(),
                (double) alloc / Math.max(1, requests.get()));
    }

    /** Bytes allocated so far by the live threads of this JVM. */
    static long allocated(com.sun.management.ThreadMXBean tm) {
        long sum = 0;
        for (long a : tm.getThreadAllocatedBytes(tm.getAllThreadIds())) {
            sum += Math.max(0, a);
        }
        return sum;
    }
}
