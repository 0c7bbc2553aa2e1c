import dev.strata.api.BlockDevice;
import dev.strata.api.Requests;
import dev.strata.cache.writeboost.internal.io.Tunables;
import dev.strata.cache.writeboost.internal.io.WriteboostCache;
import dev.strata.testkit.internal.spindle.DiskModel;
import dev.strata.testkit.internal.spindle.SpindleTarget;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * In-process benchmarks of the writeboost engine (not tests): run by run.sh next to this file.
 * Prints one table of ratios measured in the same run. Devices: the cache is a file on local
 * disk (FileChannel, flush = fdatasync); the backing device is the test kit's spindle model
 * (dev.strata.testkit: 7200 rpm, 4 ms average seek, 150 MB/s) over a sparse file.
 */
public final class WriteboostBench {
    static final int MIB = 1 << 20;

    /** A FileChannel block device. */
    static class FileDevice implements BlockDevice {
        final FileChannel ch;
        final long size;
        final AtomicLong bytesRead = new AtomicLong();

        FileDevice(Path p, long size) throws IOException {
            this(p, size, false);
        }

        FileDevice(Path p, long size, boolean direct) throws IOException {
            if (direct && PREALLOC && !Files.exists(p)) {
                preallocate(p, size);
            }
            try (FileChannel c = FileChannel.open(p, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
                if (c.size() < size) {
                    c.truncate(size);
                    c.write(ByteBuffer.allocate(1), size - 1);
                }
            }
            ch = direct ? FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE, com.sun.nio.file.ExtendedOpenOption.DIRECT)
                    : FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE);
            this.size = size;
        }

        /**
         * Whether the O_DIRECT files (the cache and the reference) get their blocks allocated
         * before use (default; -Dbench.prealloc=false for sparse files): a device has no holes,
         * the suite's NBD files are fallocated, and on ext4 two O_DIRECT writes in flight into a
         * sparse file's holes ran at 1,000-1,300 MiB/s together where one alone ran at 1,700.
         */
        static final boolean PREALLOC = !"false".equals(System.getProperty("bench.prealloc"));

        /** Allocates the file's blocks (fallocate(1)): a device has no holes, a sparse file's first writes allocate. */
        static void preallocate(Path p, long size) throws IOException {
            try {
                Process pr = new ProcessBuilder("fallocate", "-l", Long.toString(size), p.toString()).inheritIO().start();
                if (pr.waitFor() != 0) {
                    throw new IOException("fallocate failed for " + p);
                }
            } catch (InterruptedException e) {
                throw new IOException(e);
            }
        }

        public long size() { return size; }
        public int blockSize() { return 4096; }

        public void read(long off, ByteBuffer dst) throws IOException {
            Requests.check(size, off, dst.remaining());
            bytesRead.addAndGet(dst.remaining());
            while (dst.hasRemaining()) {
                int n = ch.read(dst, off);
                if (n < 0) { throw new IOException("eof"); }
                off += n;
            }
        }

        public void write(long off, ByteBuffer src, int flags) throws IOException {
            Requests.check(size, off, src.remaining());
            while (src.hasRemaining()) {
                off += ch.write(src, off);
            }
            if ((flags & FUA) != 0) { ch.force(false); }
        }

        public void flush() throws IOException { ch.force(false); }
        public void discard(long o, long l) { }
        public void writeZeroes(long o, long l, int f) throws IOException { write(o, ByteBuffer.allocate((int) l), f); }
        public void close() throws IOException { ch.close(); }
    }

    /** O_DIRECT file (as the `direct` driver): aligned requests go straight through, others via a bounce buffer. */
    static final class DirectDevice extends FileDevice {
        DirectDevice(Path p, long size) throws IOException {
            super(p, size, true);
        }

        private static boolean aligned(long off, ByteBuffer b) {
            return (off & 4095) == 0 && (b.remaining() & 4095) == 0 && b.isDirect() && b.alignmentOffset(b.position(), 4096) == 0;
        }

        private static ByteBuffer bounce(long a, long e) {
            return ByteBuffer.allocateDirect((int) (e - a) + 4096).alignedSlice(4096).limit((int) (e - a));
        }

        @Override
        public void read(long off, ByteBuffer dst) throws IOException {
            if (aligned(off, dst)) {
                super.read(off, dst);
                return;
            }
            long a = off & -4096L;
            long e = (off + dst.remaining() + 4095) & -4096L;
            ByteBuffer bb = bounce(a, e);
            super.read(a, bb);
            int n = dst.remaining();
            dst.put(dst.position(), bb, (int) (off - a), n);
            dst.position(dst.position() + n);
        }

        /**
         * Timeline of this device's aligned writes (-Dbench.timeline=true): start and end
         * nanoseconds and bytes of each, into arrays allocated once, to tell a device left idle
         * (gaps between writes) from writes that are slower themselves.
         */
        final BenchTimeline timeline = Boolean.getBoolean("bench.timeline") ? new BenchTimeline(1 << 16) : null;

        @Override
        public void write(long off, ByteBuffer src, int flags) throws IOException {
            if (timeline != null && aligned(off, src)) {
                int n = src.remaining();
                long t0 = System.nanoTime();
                super.write(off, src, flags);
                timeline.add(t0, System.nanoTime(), n);
                return;
            }
            // aligned writes run concurrently, as in the `direct` driver (whose locks only order
            // overlapping requests): a monitor here held writeboost's two flushers to one log
            // write in flight, and every earlier in-process figure with it
            if (aligned(off, src)) {
                super.write(off, src, flags);
                return;
            }
            bounced(off, src, flags);
        }

        /** An unaligned write: read, merge and write its aligned cover, one at a time (a read-modify-write). */
        private synchronized void bounced(long off, ByteBuffer src, int flags) throws IOException {
            long a = off & -4096L;
            long e = (off + src.remaining() + 4095) & -4096L;
            ByteBuffer bb = bounce(a, e);
            super.read(a, bb);
            int n = src.remaining();
            bb.put((int) (off - a), src, src.position(), n);
            src.position(src.position() + n);
            super.write(a, bb.clear().limit((int) (e - a)), flags);
        }
    }

    /** The test kit's spindle (7200 rpm, 4 ms average seek, 150 MB/s) over a sparse file. */
    static BlockDevice spindle(Path p, long size) throws IOException {
        return SpindleTarget.of("slow", new FileDevice(p, size), DiskModel.Params.defaults(size));
    }

    static double seconds(long t0) { return (System.nanoTime() - t0) / 1e9; }

    static void line(String what, String a, String b, String ratio, String goal) {
        System.out.printf(Locale.ROOT, "| %-44s | %-22s | %-22s | %-6s | %-8s |%n", what, a, b, ratio, goal);
    }

    public static void main(String[] args) throws Exception {
        // args: DIR [--quick] [--only=random,sequential,writeback,cold]
        Path dir = Files.createTempDirectory(Path.of(args.length > 0 ? args[0] : "/var/tmp"), "wbbench");
        boolean quick = false;
        String only = "random,sequential,writeback,cold";
        for (int i = 1; i < args.length; i++) {
            if (args[i].equals("--quick")) {
                quick = true;
            } else if (args[i].startsWith("--only=")) {
                only = args[i].substring("--only=".length());
            }
        }
        List<String> which = List.of(only.split(","));
        try {
            System.out.println("| benchmark | writeboost | reference | ratio | goal |");
            System.out.println("|---|---|---|---|---|");
            if (which.contains("random")) {
                randomWrites(dir, quick);
            }
            if (which.contains("sequential")) {
                sequential(dir, quick);
            }
            if (which.contains("writeback")) {
                writeback(dir, quick);
            }
            if (which.contains("cold")) {
                coldStart(dir, quick);
            }
        } finally {
            try (var s = Files.list(dir)) {
                s.forEach(p -> p.toFile().delete());
            }
            Files.deleteIfExists(dir);
        }
    }

    /**
     * 4 KiB random writes, 8 threads, vs the cache device's own sequential write throughput. The
     * shared disk's speed drifts by a factor of two within seconds, so the reference is measured
     * before and after every writeboost round (ref, wb, ref, wb, ..., ref) and each round's ratio
     * uses the mean of the two references around it; the median round is reported. The device's
     * sequential rate is measured in two shapes, 1 MiB writes one at a time and the shape of
     * writeboost's own log writes (their size, as many in flight as there are flushers; on this
     * disk two 4 MiB writes in flight ran faster than one 1 MiB write at a time), and a round is
     * compared with the faster of the two: the device's rate, not one I/O pattern's. Two
     * untimed warm-up rounds first (a small one, then one of the measured size), so that the
     * JIT has compiled the write path (steady state, as a long-running service sees it). The whole JVM's CPU time per GiB of each round is printed
     * too: on a loaded machine it moves less than the rates.
     */
    static void randomWrites(Path dir, boolean quick) throws Exception {
        long cacheSize = Long.getLong("bench.cacheMiB", quick ? 256L : 1024L) * MIB;
        long total = cacheSize * 3 / 4;
        int rounds = quick ? 1 : 3;
        BlockDevice slow = spindle(dir.resolve("slow-rw.img"), 64L << 30);
        // warm-up: big enough that C2 has compiled the write path and the flusher before the
        // measured rounds (with 48 MiB the compiler threads still took a third of the CPU samples
        // of the measured rounds on 2 cores)
        randomRound(dir, slow, 256L * MIB, 192L * MIB, null);
        // and one round of the measured size (-Dbench.warmups=N for more): after the small one
        // alone the JIT still took 2.6 us per write in the first measured round (0.1-0.4 later)
        for (int w = 0; w < Integer.getInteger("bench.warmups", quick ? 0 : 1); w++) {
            randomRound(dir, slow, cacheSize, total, null);
        }
        // two references around every round, on a new file each: 1 MiB requests one at a time
        // (as until now) and the shape of writeboost's own log writes (their size and the writes
        // in flight); a round is compared with the faster of the two, so the bar never drops
        int[] shape = logWriteShape(cacheSize);
        double[] refOne = new double[rounds + 1];
        double[] refLog = new double[rounds + 1];
        double[] wb = new double[rounds];
        double[] heap = new double[1];
        refOne[0] = sequentialReference(dir, total, MIB, 1);
        refLog[0] = sequentialReference(dir, total, shape[0], shape[1]);
        double[] cpu = new double[rounds];
        for (int i = 0; i < rounds; i++) {
            long c0 = cpuNanos();
            wb[i] = randomRound(dir, slow, cacheSize, total, heap);
            cpu[i] = (cpuNanos() - c0) / 1e9 / (total / (double) (1L << 30));
            refOne[i + 1] = sequentialReference(dir, total, MIB, 1);
            refLog[i + 1] = sequentialReference(dir, total, shape[0], shape[1]);
        }
        double[] refOf = new double[rounds];
        Integer[] order = new Integer[rounds];
        StringBuilder all = new StringBuilder();
        StringBuilder allOne = new StringBuilder();
        for (int i = 0; i < rounds; i++) {
            order[i] = i;
            refOf[i] = Math.max((refOne[i] + refOne[i + 1]) / 2, (refLog[i] + refLog[i + 1]) / 2);
            all.append(i == 0 ? "" : ", ").append(fmt(wb[i] / refOf[i]));
            allOne.append(i == 0 ? "" : ", ").append(fmt(wb[i] / ((refOne[i] + refOne[i + 1]) / 2)));
        }
        java.util.Arrays.sort(order, (x, y) -> Double.compare(wb[x] / refOf[x], wb[y] / refOf[y]));
        int m = order[rounds / 2];
        double r = refOf[m];
        line("4 KiB random writes, 8 threads (MiB/s)", fmt(wb[m]), fmt(r) + " (cache O_DIRECT seq)", fmt(wb[m] / r), ">= 0.95");
        if (rounds > 1) {
            StringBuilder refs = new StringBuilder();
            for (int i = 0; i <= rounds; i++) {
                refs.append(i == 0 ? "" : " ").append(fmt(refOne[i])).append('/').append(fmt(refLog[i]));
            }
            StringBuilder wbs = new StringBuilder();
            for (int i = 0; i < rounds; i++) {
                wbs.append(i == 0 ? "" : " ").append(fmt(wb[i]));
            }
            line("  all rounds: writeboost / references / ratios", wbs.toString(), refs.toString(), all.toString(), "-");
            line("  references: 1 MiB x 1 / " + shape[0] / MIB + " MiB x " + shape[1] + " (log writes); ratios to the first alone",
                    "-", "-", allOne.toString(), "-");
        }
        line("  CPU of the whole JVM per GiB written (s)", fmt(cpu[m]), fmt(refCpu / refBytes * (1L << 30)) + " (reference)", "-", "-");
        line("heap bytes per cached 4 KiB block", fmt(heap[0]), "-", "-", "<= 20");
        slow.close();
    }

    /**
     * CPU nanoseconds so far of each live thread of this JVM, by thread (tid and name), from
     * /proc/self/task/N/schedstat (Linux; the JIT compiler and GC threads are not visible to
     * ThreadMXBean). Empty where /proc is not there.
     */
    static java.util.Map<String, Long> threadCpu() {
        java.util.Map<String, Long> m = new java.util.HashMap<>();
        try (var s = Files.list(Path.of("/proc/self/task"))) {
            for (Path t : (Iterable<Path>) s::iterator) {
                try {
                    String comm = Files.readString(t.resolve("comm")).trim();
                    String[] st = Files.readString(t.resolve("schedstat")).trim().split(" ");
                    m.put(t.getFileName() + " " + comm, Long.parseLong(st[0]));
                    // the third field: times the thread was put on a CPU (its wake-ups, roughly)
                    m.put(t.getFileName() + " " + comm + " #runs", Long.parseLong(st[2]));
                    // the second: nanoseconds it was runnable but waited for a CPU
                    m.put(t.getFileName() + " " + comm + " #wait", Long.parseLong(st[1]));
                } catch (IOException | RuntimeException gone) {
                    // the thread ended between the listing and the read
                }
            }
        } catch (IOException noProc) {
            // not Linux: no split
        }
        return m;
    }

    /** Prints the CPU of a round per 4 KiB write, split by thread kind (writers, writeboost's daemons, JIT, GC, the rest). */
    static void cpuSplit(java.util.Map<String, Long> before, java.util.Map<String, Long> after, long writes) {
        if (after.isEmpty()) {
            return;
        }
        String[] kinds = {"writers", "writeboost daemons", "JIT", "GC", "other"};
        double[] us = new double[kinds.length];
        double[] runs = new double[kinds.length];
        double[] waits = new double[kinds.length];
        for (var e : after.entrySet()) {
            boolean isRuns = e.getKey().endsWith(" #runs");
            boolean isWait = e.getKey().endsWith(" #wait");
            String name = e.getKey().substring(e.getKey().indexOf(' ') + 1);
            long d = e.getValue() - before.getOrDefault(e.getKey(), 0L);
            int k = name.startsWith("pool-") ? 0 : name.startsWith("strata-writeboo") ? 1
                    : name.startsWith("C1 Comp") || name.startsWith("C2 Comp") ? 2
                    : name.startsWith("GC ") || name.startsWith("G1 ") ? 3 : 4;
            if (isWait) {
                waits[k] += d / 1e6 * 256.0 / writes; // ms per MiB of 4 KiB writes
            } else if (isRuns) {
                runs[k] += d * 256.0 / writes; // per MiB of 4 KiB writes
            } else {
                us[k] += d / 1e3 / writes;
            }
        }
        StringBuilder b = new StringBuilder();
        for (int k = 0; k < kinds.length; k++) {
            b.append(k == 0 ? "" : ", ").append(kinds[k]).append(' ').append(String.format(Locale.ROOT, "%.2f", us[k]));
        }
        line("  CPU per 4 KiB write (us), by threads", b.toString(), "-", "-", "-");
        // (by kind only: /proc's thread names are cut at 15 characters, "strata-writeboo")
        line("  times on a CPU per MiB written, by threads", String.format(Locale.ROOT,
                "writers %.1f, writeboost daemons %.1f", runs[0], runs[1]), "-", "-", "-");
        line("  ms waiting for a CPU per MiB written, by threads", String.format(Locale.ROOT,
                "writers %.3f, writeboost daemons %.3f", waits[0], waits[1]), "-", "-", "-");
    }

    /** CPU time of this JVM so far (all threads, user and system). */
    static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /** CPU seconds and bytes of all sequential reference runs so far (for the CPU per GiB line). */
    static double refCpu;
    static double refBytes;

    /**
     * The size and depth of writeboost's log writes in the random rounds, {@code {bytes,
     * writes in flight}}: one write per flusher thread in flight, each covering at most
     * {@code buffers / (2 x flushers)} segments of 1 MiB (Flusher.maxCoalesce), with the buffers
     * chosen by the cache's size as CacheOpener.autoBuffers does (8 per flusher from 1,000
     * segments, 8 from 500, else 4) unless -Dbench.buffers says otherwise. The timeline
     * confirms the size: the rounds' log writes average 4,008-4,091 KiB at 1 GiB.
     */
    static int[] logWriteShape(long cacheSize) {
        WriteboostCache.Options o = benchOptions();
        long segments = cacheSize / MIB - 1;
        int flushers = Math.max(1, o.flushers());
        int buffers = o.buffers() > 0 ? o.buffers() : segments >= 1000 ? 8 * flushers : segments >= 500 ? 8 : 4;
        return new int[] {Math.max(1, buffers / (2 * flushers)) * MIB, flushers};
    }

    /**
     * Sequential O_DIRECT writes of {@code total} bytes in {@code io}-byte requests,
     * {@code depth} of them in flight (threads taking the next offset in order, as the flushers
     * take the next batch), to a new file on the same disk, then fdatasync (MiB/s).
     */
    static double sequentialReference(Path dir, long total, int io, int depth) throws Exception {
        long c0 = cpuNanos();
        try {
            return sequentialReference0(dir, total, io, depth);
        } finally {
            refCpu += (cpuNanos() - c0) / 1e9;
            refBytes += total;
        }
    }

    static double sequentialReference0(Path dir, long total, int io, int depth) throws Exception {
        Path p = dir.resolve("raw-seq.img");
        FileDevice raw = new DirectDevice(p, total);
        ByteBuffer[] bufs = new ByteBuffer[depth];
        for (int i = 0; i < depth; i++) {
            bufs[i] = ByteBuffer.allocateDirect(io + 4096).alignedSlice(4096).limit(io).slice();
        }
        AtomicLong next = new AtomicLong();
        ExecutorService ex = depth > 1 ? Executors.newFixedThreadPool(depth) : null;
        java.util.Map<String, Long> sched0 = threadCpu();
        long t0 = System.nanoTime();
        if (ex == null) {
            for (long o = 0; o < total; o += io) {
                raw.write(o, bufs[0].clear().limit((int) Math.min(io, total - o)), 0);
            }
        } else {
            Future<?>[] f = new Future<?>[depth];
            for (int t = 0; t < depth; t++) {
                ByteBuffer b = bufs[t];
                f[t] = ex.submit(() -> {
                    for (long o; (o = next.getAndAdd(io)) < total; ) {
                        raw.write(o, b.clear().limit((int) Math.min(io, total - o)), 0);
                    }
                    return null;
                });
            }
            for (Future<?> x : f) {
                x.get();
            }
        }
        raw.flush();
        double seq = total / seconds(t0) / MIB;
        if (ex != null) {
            ex.shutdown();
        }
        if (((DirectDevice) raw).timeline != null) {
            System.out.println("  timeline reference " + io / MIB + " MiB x " + depth + ": "
                    + ((DirectDevice) raw).timeline.summary(t0, System.nanoTime()));
            double wait = 0;
            for (var e : threadCpu().entrySet()) {
                if (e.getKey().endsWith(" #wait")) {
                    wait += e.getValue() - sched0.getOrDefault(e.getKey(), 0L);
                }
            }
            System.out.println(String.format(Locale.ROOT, "  reference waited for a CPU %.3f ms per MiB (all threads)", wait / 1e6 / (total / (double) MIB)));
        }
        raw.close();
        Files.delete(p);
        return seq;
    }

    /**
     * The cache's construction options for the random-write rounds: the defaults, or the log
     * buffers and flusher threads given by {@code -Dbench.buffers=N -Dbench.flushers=N} (to compare
     * log-write depths in one build).
     */
    static WriteboostCache.Options benchOptions() {
        WriteboostCache.Options o = WriteboostCache.Options.defaults();
        o = o.withBuffers(Integer.getInteger("bench.buffers", o.buffers()));
        return o.withFlushers(Integer.getInteger("bench.flushers", o.flushers()));
    }

    /** One round of 8 threads writing {@code total} bytes of random 4 KiB blocks into a new cache (MiB/s). */
    static double randomRound(Path dir, BlockDevice slow, long cacheSize, long total, double[] heapPerBlock) throws Exception {
        Path p = dir.resolve("cache-rw.img");
        FileDevice cacheDev = new DirectDevice(p, cacheSize);
        WriteboostCache wb = WriteboostCache.open("bench", slow, cacheDev, true,
                Tunables.DEFAULTS.with(Tunables.WRITEBACK_THRESHOLD, "0"), benchOptions(), null);
        int threads = 8;
        long perThread = total / threads / 4096;
        ExecutorService ex = Executors.newFixedThreadPool(threads);
        java.util.Map<String, Long> cpu0 = threadCpu();
        long t0 = System.nanoTime();
        Future<?>[] f = new Future<?>[threads];
        for (int t = 0; t < threads; t++) {
            int id = t;
            f[t] = ex.submit(() -> {
                Random r = new Random(id);
                ByteBuffer b = ByteBuffer.allocate(4096);
                long blocks = slow.size() / 4096;
                for (long i = 0; i < perThread; i++) {
                    b.clear();
                    b.putLong(0, i);
                    wb.write((Math.floorMod(r.nextLong(), blocks)) * 4096, b, 0);
                }
                return null;
            });
        }
        for (Future<?> x : f) {
            x.get();
        }
        wb.flush();
        double rnd = perThread * threads * 4096.0 / seconds(t0) / MIB;
        if (((DirectDevice) cacheDev).timeline != null) {
            System.out.println("  timeline writeboost (" + String.format(Locale.ROOT, "%.0f", rnd) + " MiB/s): "
                    + ((DirectDevice) cacheDev).timeline.summary(t0, System.nanoTime()));
        }
        if (heapPerBlock != null) {
            cpuSplit(cpu0, threadCpu(), perThread * threads);
        }
        ex.shutdown();
        if (heapPerBlock != null) {
            heapPerBlock[0] = (double) wb.indexHeapBytes() / Math.max(1, wb.cachedBlocks());
        }
        wb.close();
        cacheDev.close();
        Files.delete(p);
        return rnd;
    }

    /** 64 MiB sequential writes in 1 MiB requests: through writeboost vs the spindle alone. */
    static void sequential(Path dir, boolean quick) throws Exception {
        long total = 64L * MIB;
        BlockDevice alone = spindle(dir.resolve("slow-seq-a.img"), 4L << 30);
        ByteBuffer mb = ByteBuffer.allocateDirect(MIB);
        long t0 = System.nanoTime();
        for (long o = 0; o < total; o += MIB) {
            alone.write(o, mb.clear(), 0);
        }
        alone.flush();
        double ref = total / seconds(t0) / MIB;
        BlockDevice slow = spindle(dir.resolve("slow-seq-b.img"), 4L << 30);
        FileDevice cacheDev = new FileDevice(dir.resolve("cache-seq.img"), 256L * MIB);
        WriteboostCache wb = WriteboostCache.open("bench", slow, cacheDev, false, Tunables.DEFAULTS,
                WriteboostCache.Options.defaults(), null);
        t0 = System.nanoTime();
        for (long o = 0; o < total; o += MIB) {
            wb.write(o, mb.clear(), 0);
        }
        wb.flush();
        double through = total / seconds(t0) / MIB;
        wb.close();
        line("64 MiB sequential writes, 1 MiB requests (MiB/s)", fmt(through), fmt(ref) + " (spindle)", fmt(through / ref), ">= 0.95");
        alone.close();
        slow.close();
        cacheDev.close();
    }

    /** Writeback of random dirty 4 KiB blocks to the spindle: sorted and merged vs log order. */
    static void writeback(Path dir, boolean quick) throws Exception {
        long dirty = (quick ? 16L : 48L) * MIB;
        double[] time = new double[2];
        for (int sorted = 1; sorted >= 0; sorted--) {
            BlockDevice slow = spindle(dir.resolve("slow-wb-" + sorted + ".img"), 1L << 30);
            FileDevice cacheDev = new FileDevice(dir.resolve("cache-wb-" + sorted + ".img"), 128L * MIB);
            WriteboostCache.Options o = WriteboostCache.Options.defaults().manual();
            if (sorted == 0) {
                o = o.unsorted();
            }
            WriteboostCache wb = WriteboostCache.open("bench", slow, cacheDev, true,
                    Tunables.DEFAULTS.with(Tunables.WRITEBACK_THRESHOLD, "0"), o, null);
            Random r = new Random(7);
            ByteBuffer b = ByteBuffer.allocate(4096);
            // random blocks within 256 MiB of the disk: dense enough that sorting finds neighbours
            long span = 256L * MIB / 4096;
            for (long i = 0; i < dirty / 4096; i++) {
                wb.write(Math.floorMod(r.nextLong(), span) * 4096, b.clear(), 0);
            }
            wb.flush();
            long t0 = System.nanoTime();
            wb.writebackAll();
            time[sorted] = seconds(t0);
            wb.close();
            slow.close();
            cacheDev.close();
        }
        line("writeback of " + dirty / MIB + " MiB random dirty data (s)", fmt(time[1]) + " (sorted)", fmt(time[0]) + " (log order)",
                fmt(time[1] / time[0]), "<= 0.5");
    }

    /** Cold start of a full cache: time and bytes read. */
    static void coldStart(Path dir, boolean quick) throws Exception {
        long cacheSize = (quick ? 1L : 4L) << 30;
        BlockDevice slow = spindle(dir.resolve("slow-cold.img"), 64L << 30);
        FileDevice cacheDev = new DirectDevice(dir.resolve("cache-cold.img"), cacheSize);
        WriteboostCache wb = WriteboostCache.open("bench", slow, cacheDev, false,
                Tunables.DEFAULTS.with(Tunables.WRITEBACK_THRESHOLD, "0").with(Tunables.BYPASS_THRESHOLD, "0")
                        .with(Tunables.SEQUENTIAL_CUTOFF, "0"), WriteboostCache.Options.defaults(), null);
        ByteBuffer b = ByteBuffer.allocateDirect(64 * 1024);
        long capacity = (cacheSize / MIB - 1) * 255L * 4096;
        long fill = capacity - 8L * MIB; // full but for the reserve the writer keeps
        Random r = new Random(3);
        for (long o = 0; o < fill; o += b.capacity()) {
            wb.write(Math.floorMod(r.nextLong(), slow.size() / b.capacity()) * b.capacity(), b.clear(), 0);
        }
        wb.close();
        long before = cacheDev.bytesRead.get();
        long t0 = System.nanoTime();
        WriteboostCache again = WriteboostCache.open("bench", slow, cacheDev, false, Tunables.DEFAULTS,
                WriteboostCache.Options.defaults().manual(), null);
        double s = seconds(t0);
        long read = cacheDev.bytesRead.get() - before;
        long blocks = again.cachedBlocks();
        again.close();
        line("cold start of a full " + cacheSize / (1 << 30) + " GiB cache (s)", fmt(s) + " (" + blocks + " blocks)",
                "-", "-", "<= 2 s");
        line("  bytes read at start / cache size", fmt(read / (double) MIB) + " MiB", fmt(cacheSize / (double) MIB) + " MiB",
                String.format(Locale.ROOT, "%.2f%%", 100.0 * read / cacheSize), "<= 1%");
        slow.close();
        cacheDev.close();
    }

    static String fmt(double d) {
        return String.format(Locale.ROOT, d >= 100 ? "%.0f" : "%.2f", d);
    }
}
