import dev.strata.api.BlockDevice;
import dev.strata.api.Target;
import dev.strata.api.WritebackController;
import dev.strata.daemons.internal.idle.IdleController;
import dev.strata.daemons.internal.modulator.ModulatorController;
import dev.strata.daemons.internal.pi.PiController;
import dev.strata.testkit.internal.spindle.DiskModel;
import dev.strata.testkit.internal.spindle.SpindleTarget;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import javax.imageio.ImageIO;

/**
 * bcache's writeback scenario (Michael Lyle's 2017 review), in process, with the real bundles'
 * classes (not a test): backing = the test kit's {@code spindle} model over a sparse file, cache =
 * a file on the local disk; writeboost and writecache each. A front-end random-write load of
 * 8 KiB writes at a fixed rate (open loop: each write has a due time, its latency counts from
 * then, so a stall shows in full) for LOAD seconds, then a writeback-only tail until clean (or
 * TAIL seconds). Controllers: the daemons bundle's modulator, pi and idle, "unthrottled" (every
 * decision a full batch) and "paused" (no background writeback during the load: the baseline of
 * pi's 0.97× goal; its tail is unthrottled, the reference drain rate of idle's 0.9× goal, from a
 * cache as dirty as idle's).
 *
 * <p>Usage: DaemonsBench OUTDIR TMPDIR [--quick] [--caches=writeboost,writecache]
 * [--controllers=paused,unthrottled,modulator,pi,idle]
 */
public final class DaemonsBench {
    static final int MIB = 1 << 20;
    static final int IO = 8192;
    static final int THREADS = 8;
    static final long SAMPLE_NANOS = 250_000_000L;
    static final List<String> ALL_CONTROLLERS = List.of("paused", "unthrottled", "modulator", "pi", "idle");
    static final Map<String, Color> COLORS = Map.of("paused", new Color(0x7f7f7f), "unthrottled", new Color(0xd62728),
            "modulator", new Color(0x1f77b4), "pi", new Color(0x2ca02c), "idle", new Color(0xff7f0e));
    /**
     * pi's tunables scaled to this cache: bcache's defaults (p_term_inverse 40, update 5 s,
     * i_term_inverse 10000) are for caches of hundreds of GiB; on a cache of a few hundred MiB P
     * alone would need an error of 40 × the front-end rate (≈ 18 points here) and I hours to take
     * over. The arithmetic is bcache's, only the time constants are shorter.
     */
    static final Map<String, String> PI_TUNABLES = Map.of("writeback_percent", "10", "p_term_inverse", "2",
            "update_seconds", "1", "i_term_inverse", "100");
    /** idle's switch after 0.5 s (dm-writecache's pause is 3 s): the tails here last ten to twenty seconds. */
    static final Map<String, String> IDLE_TUNABLES = Map.of("idle_ms", "500");

    // ---- the bench's own controllers

    /** Every decision a full batch. */
    static final WritebackController UNTHROTTLED = (cache, tunables) -> new WritebackController.Session() {
        public WritebackController.Decision decide(WritebackController.CacheLoad load) {
            return WritebackController.Decision.fullSpeed(load.maxBatch());
        }

        public Map<String, String> status() { return Map.of("controller", "unthrottled"); }
    };

    /** Never: background writeback paused (the caches' own urgency triggers still apply). */
    static final WritebackController PAUSED = (cache, tunables) -> new WritebackController.Session() {
        public WritebackController.Decision decide(WritebackController.CacheLoad load) {
            return WritebackController.Decision.waitFor(100_000_000L);
        }

        public Map<String, String> status() { return Map.of("controller", "paused"); }
    };

    /**
     * Sets pi's and idle's tunables on the cache as a user does ({@code cache:set DEV
     * writeback.<key>=<value>}): the cache's binding passes them to whichever controller it binds
     * (each ignores the other's keys).
     */
    static void setControllerTunables(Target t) throws IOException {
        for (Map<String, String> m : List.of(PI_TUNABLES, IDLE_TUNABLES)) {
            for (Map.Entry<String, String> e : m.entrySet()) {
                t.message("writeback." + e.getKey(), e.getValue());
            }
        }
    }

    // ---- one run

    record Params(boolean quick, long cacheBytes, long backingBytes, int iops, long loadNanos, long tailNanos) {
    }

    record Sample(double t, double dirtyPercent, double dirtyMiB, double maxLatencyMs) {
    }

    record Result(String cache, String controller, double iops, double p50, double p99, double max, double stallMs,
            double dirtyEndLoadMiB, double dirtyEndLoadPct, double dirtyEndTailMiB, double wbAvgKiB, long wbRequests,
            long merged, double tailDrainBlocksPerSec, double tailSeconds, double piMaxDeviation, double piReachedAt,
            List<Sample> samples, double loadSeconds) {
    }

    /** What the bench needs of either cache. */
    interface Cache extends AutoCloseable {
        Target target();

        @Override
        void close() throws IOException;
    }

    static Cache open(String kind, String name, BlockDevice backing, BlockDevice cache, String controller,
            Function<String, WritebackController> lookup) throws IOException {
        if (kind.equals("writeboost")) {
            var t = dev.strata.cache.writeboost.internal.io.Tunables.DEFAULTS
                    .with(dev.strata.cache.writeboost.internal.io.Tunables.CONTROLLER, controller);
            var wb = dev.strata.cache.writeboost.internal.io.WriteboostCache.open(name, backing, cache, true, t,
                    dev.strata.cache.writeboost.internal.io.WriteboostCache.Options.defaults(), lookup);
            setControllerTunables(wb);
            return new Cache() {
                public Target target() { return wb; }
                public void close() throws IOException { wb.close(); }
            };
        }
        // the controller paces from an empty cache (bcache has no watermark; dm-writecache's 50/45
        // would leave pi's 10 % target unreachable), batches as large as writeboost's 16 segments
        var t = dev.strata.cache.writecache.internal.io.Tunables.DEFAULTS.withAll(Map.of("high_watermark", "0",
                "low_watermark", "0", "writeback_batch", "4096", "writeback.controller", controller));
        var wc = dev.strata.cache.writecache.internal.recovery.Recovery.open(name, backing, cache, null, 4096, true, t,
                dev.strata.cache.writecache.internal.io.Options.defaults().withControllers(lookup));
        setControllerTunables(wc);
        return new Cache() {
            public Target target() { return wc; }
            public void close() throws IOException { wc.close(); }
        };
    }

    /**
     * Nothing left to write back: writecache clean; writeboost with every complete segment written
     * back (the open segment, at most 255 blocks, stays dirty until it is full, as in dm-writeboost).
     */
    static boolean drained(String kind, Map<String, String> st) {
        if (kind.equals("writeboost")) {
            return num(st, "written_back_segment") >= num(st, "head_segment") - 1;
        }
        return num(st, "dirty_blocks") == 0;
    }

    static long num(Map<String, String> m, String k) {
        String v = m.get(k);
        return v == null ? 0 : Long.parseLong(v);
    }

    static Result run(String kind, String controller, Params p, Path tmp) throws Exception {
        Path backingFile = tmp.resolve("daemons-bench-backing.img");
        Path cacheFile = tmp.resolve("daemons-bench-cache.img");
        FileDevice backingFileDev = new FileDevice(backingFile, p.backingBytes());
        SpindleTarget spindle = SpindleTarget.of("spindle", backingFileDev, DiskModel.Params.defaults(p.backingBytes()));
        Counting backing = new Counting(spindle);
        FileDevice cacheDev = new FileDevice(cacheFile, p.cacheBytes());
        Map<String, WritebackController> services = Map.of("modulator", new ModulatorController(),
                "pi", new PiController(), "idle", new IdleController(),
                "unthrottled", UNTHROTTLED);
        boolean[] tail = {false};
        Function<String, WritebackController> lookup = n -> n.equals("paused") ? (tail[0] ? UNTHROTTLED : PAUSED) : services.get(n);
        Result r;
        try (Cache c = open(kind, "bench-" + controller, backing, cacheDev, controller, lookup)) {
            Target t = c.target();
            long capacity = num(t.status(), "capacity_blocks");
            long region = p.backingBytes() / IO;
            int n = (int) (p.iops() * (p.loadNanos() / 1e9));
            long period = 1_000_000_000L / p.iops();
            long[] due = new long[n];
            long[] done = new long[n];
            AtomicLong next = new AtomicLong();
            AtomicLong intervalMax = new AtomicLong();
            Throwable[] failure = {null};
            List<Sample> samples = new ArrayList<>();
            long t0 = System.nanoTime() + 50_000_000L;
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < THREADS; i++) {
                Thread th = new Thread(() -> {
                    ByteBuffer buf = ByteBuffer.allocateDirect(IO);
                    ThreadLocalRandom rnd = ThreadLocalRandom.current();
                    while (true) {
                        int k = (int) next.getAndIncrement();
                        if (k >= n || failure[0] != null) {
                            return;
                        }
                        long d = t0 + k * period;
                        due[k] = d;
                        long w;
                        while ((w = d - System.nanoTime()) > 0) {
                            LockSupport.parkNanos(w);
                        }
                        buf.clear();
                        buf.putLong(0, rnd.nextLong());
                        try {
                            t.write(rnd.nextLong(region) * IO, buf, 0);
                        } catch (Throwable e) {
                            failure[0] = e;
                            return;
                        }
                        long now = System.nanoTime();
                        done[k] = now;
                        intervalMax.accumulateAndGet(now - d, Math::max);
                    }
                }, "front-end-" + i);
                th.start();
                threads.add(th);
            }
            long loadEnd = t0 + p.loadNanos();
            long tailStart = 0;
            long tailEnd = 0;
            long dirtyAtTailStart = 0;
            long dirtyEndLoad = 0;
            long dirtyNow = 0;
            long clean = 0;
            for (long at = t0 + SAMPLE_NANOS; ; at += SAMPLE_NANOS) {
                long w;
                while ((w = at - System.nanoTime()) > 0) {
                    LockSupport.parkNanos(w);
                }
                Map<String, String> st = t.status();
                dirtyNow = num(st, "dirty_blocks");
                double lat = intervalMax.getAndSet(0) / 1e6;
                samples.add(new Sample((at - t0) / 1e9, dirtyNow * 100.0 / capacity, dirtyNow * 4096.0 / MIB, lat));
                if (failure[0] != null) {
                    throw new IOException("front-end write failed: " + failure[0], failure[0]);
                }
                if (tailStart == 0 && at >= loadEnd && threads.stream().noneMatch(Thread::isAlive)) {
                    tailStart = at;
                    dirtyEndLoad = dirtyNow;
                    dirtyAtTailStart = dirtyNow;
                    tail[0] = true;
                } else if (tailStart != 0 && (drained(kind, st) || at - tailStart >= p.tailNanos())) {
                    tailEnd = at;
                    clean = drained(kind, st) ? at : 0;
                    break;
                }
            }
            for (Thread th : threads) {
                th.join();
            }
            long[] lat = new long[n];
            long last = 0;
            for (int k = 0; k < n; k++) {
                lat[k] = done[k] - due[k];
                last = Math.max(last, done[k]);
            }
            double stall = longestStall(due, done) / 1e6;
            Arrays.sort(lat);
            double iops = n / ((last - t0) / 1e9);
            double tailSec = (tailEnd - tailStart) / 1e9;
            double drain = tailSec > 0 ? (dirtyAtTailStart - dirtyNow) / tailSec : 0;
            long wbBlocks = backing.bytes.get() / 4096;
            long wbReq = backing.writes.get();
            double target = Double.parseDouble(PI_TUNABLES.get("writeback_percent"));
            double reachedAt = Double.NaN;
            double maxDev = Double.NaN;
            for (Sample s : samples) {
                if (s.t() > p.loadNanos() / 1e9) {
                    break;
                }
                if (Double.isNaN(reachedAt) && s.dirtyPercent() >= target) {
                    reachedAt = s.t();
                    maxDev = 0;
                }
                if (!Double.isNaN(reachedAt)) {
                    maxDev = Math.max(maxDev, Math.abs(s.dirtyPercent() - target));
                }
            }
            r = new Result(kind, controller, iops, lat[n / 2] / 1e6, lat[(int) (n * 0.99)] / 1e6, lat[n - 1] / 1e6, stall,
                    dirtyEndLoad * 4096.0 / MIB, dirtyEndLoad * 100.0 / capacity, dirtyNow * 4096.0 / MIB,
                    wbReq == 0 ? 0 : backing.bytes.get() / 1024.0 / wbReq, wbReq, Math.max(0, wbBlocks - wbReq),
                    drain, clean != 0 ? tailSec : Double.NaN, maxDev, reachedAt, samples, (tailStart - t0) / 1e9);
        } finally {
            backing.close();
            cacheDev.close();
            Files.deleteIfExists(backingFile);
            Files.deleteIfExists(cacheFile);
        }
        return r;
    }

    /**
     * The longest time no front-end write completed while at least one was due: between two
     * consecutive completions c_i and c_{i+1}, the window counts from the later of c_i and the
     * earliest due time of the writes still outstanding after c_i.
     */
    static long longestStall(long[] due, long[] done) {
        int n = due.length;
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> Long.compare(done[a], done[b]));
        long[] minDue = new long[n + 1];
        minDue[n] = Long.MAX_VALUE;
        for (int i = n - 1; i >= 0; i--) {
            minDue[i] = Math.min(minDue[i + 1], due[order[i]]);
        }
        long best = done[order[0]] - minDue[0];
        for (int i = 0; i + 1 < n; i++) {
            long start = Math.max(done[order[i]], minDue[i + 1]);
            best = Math.max(best, done[order[i + 1]] - start);
        }
        return best;
    }

    // ---- report

    static String f1(double v) {
        return Double.isNaN(v) ? "–" : String.format(Locale.ROOT, "%.1f", v);
    }

    static String f0(double v) {
        return Double.isNaN(v) ? "–" : String.format(Locale.ROOT, "%,.0f", v);
    }

    static String table(List<Result> rs) {
        StringBuilder sb = new StringBuilder();
        sb.append("| cache | controller | front-end IOPS | × paused | p50 ms | p99 ms | max ms | longest stall ms | dirty at load end MiB (%) | dirty at tail end MiB | tail drain blocks/s (s to clean) | writeback requests | avg request KiB | merged |\n");
        sb.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Result r : rs) {
            Result paused = find(rs, r.cache(), "paused");
            sb.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | %s | %s (%s) | %s | %s (%s) | %s | %s | %s |%n",
                    r.cache(), r.controller(), f1(r.iops()), paused == null ? "–" : String.format(Locale.ROOT, "%.3f", r.iops() / paused.iops()),
                    f1(r.p50()), f1(r.p99()), f1(r.max()), f1(r.stallMs()), f1(r.dirtyEndLoadMiB()), f1(r.dirtyEndLoadPct()),
                    f1(r.dirtyEndTailMiB()), f0(r.tailDrainBlocksPerSec()), f1(r.tailSeconds()), f0(r.wbRequests()),
                    f1(r.wbAvgKiB()), f0(r.merged())));
        }
        return sb.toString();
    }

    static Result find(List<Result> rs, String cache, String controller) {
        for (Result r : rs) {
            if (r.cache().equals(cache) && r.controller().equals(controller)) {
                return r;
            }
        }
        return null;
    }

    /** The goals, one line each: PASS/FAIL and the figures. */
    static List<String> goals(List<Result> rs) {
        List<String> out = new ArrayList<>();
        for (Result r : rs) {
            out.add(String.format(Locale.ROOT, "%s no stall >= 1 s: %s/%s longest stall %.1f ms", r.stallMs() < 1000 ? "PASS" : "FAIL",
                    r.cache(), r.controller(), r.stallMs()));
        }
        for (String cache : List.of("writeboost", "writecache")) {
            Result pi = find(rs, cache, "pi");
            Result paused = find(rs, cache, "paused");
            Result idle = find(rs, cache, "idle");
            if (pi != null && paused != null) {
                double x = pi.iops() / paused.iops();
                out.add(String.format(Locale.ROOT, "%s %s/pi front-end IOPS >= 0.97 x paused: %.3f x (%.1f vs %.1f)",
                        x >= 0.97 ? "PASS" : "FAIL", cache, x, pi.iops(), paused.iops()));
            }
            if (pi != null) {
                boolean ok = !Double.isNaN(pi.piReachedAt()) && pi.piMaxDeviation() <= 2.0;
                out.add(String.format(Locale.ROOT, "%s %s/pi dirty share within +-2 points of %s %% once reached: target reached at %s s, largest deviation after %s points",
                        ok ? "PASS" : "FAIL", cache, PI_TUNABLES.get("writeback_percent"), f1(pi.piReachedAt()), String.format(Locale.ROOT, "%.2f", pi.piMaxDeviation())));
            }
            if (idle != null && paused != null) {
                double ref = matchedDrain(paused, idle.dirtyEndLoadMiB());
                double x = idle.tailDrainBlocksPerSec() / ref;
                out.add(String.format(Locale.ROOT, "%s %s/idle tail drain >= 0.9 x unthrottled (the paused run's unthrottled tail from the same dirty amount): %.3f x (%.0f vs %.0f blocks/s)",
                        x >= 0.9 ? "PASS" : "FAIL", cache, x, idle.tailDrainBlocksPerSec(), ref));
            }
        }
        return out;
    }

    /**
     * The unthrottled drain rate of the paused run's tail over its last {@code mib} MiB: from the
     * first tail sample at or below that much dirty data to its last sample. Drain speed depends on
     * how dense the dirty blocks are (sorted runs with shorter seeks), so idle's tail is compared
     * with the same amount of dirty data, not with the paused run's whole, denser tail.
     */
    static double matchedDrain(Result paused, double mib) {
        List<Sample> ss = paused.samples();
        Sample from = null;
        Sample last = ss.get(ss.size() - 1);
        for (Sample s : ss) {
            if (s.t() > paused.loadSeconds() && s.dirtyMiB() <= mib) {
                from = s;
                break;
            }
        }
        if (from == null || last.t() <= from.t()) {
            return paused.tailDrainBlocksPerSec();
        }
        return (from.dirtyMiB() - last.dirtyMiB()) * MIB / 4096 / (last.t() - from.t());
    }

    interface Metric {
        double of(Sample s);
    }

    /** One line per controller over time (seconds), linear y from 0; a dashed vertical line at the load's end. */
    static void chart(Path out, String title, String axis, List<Result> rs, Metric m, double loadSeconds, double refY)
            throws IOException {
        int w = 900, h = 460, left = 70, right = 150, top = 56, bottom = 46;
        BufferedImage im = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = im.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, w, h);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
        g.setColor(Color.BLACK);
        g.drawString(title, 12, 24);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        g.setColor(Color.DARK_GRAY);
        g.drawString(axis, 12, 42);
        double maxX = 1, maxY = Double.isNaN(refY) ? 0 : refY;
        for (Result r : rs) {
            for (Sample s : r.samples()) {
                maxX = Math.max(maxX, s.t());
                maxY = Math.max(maxY, m.of(s));
            }
        }
        maxY = maxY <= 0 ? 1 : niceCeil(maxY);
        int pw = w - left - right, ph = h - top - bottom;
        for (int i = 0; i <= 5; i++) {
            int y = top + ph - ph * i / 5;
            g.setColor(new Color(0xdddddd));
            g.drawLine(left, y, left + pw, y);
            g.setColor(Color.DARK_GRAY);
            g.drawString(trim(maxY * i / 5), 8, y + 4);
        }
        for (int s = 0; s <= maxX; s += maxX > 60 ? 20 : 10) {
            int x = left + (int) Math.round(pw * s / maxX);
            g.drawString(s + " s", x - 8, top + ph + 18);
        }
        int lx = left + (int) Math.round(pw * loadSeconds / maxX);
        g.setColor(Color.GRAY);
        g.setStroke(new BasicStroke(1f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {5f, 5f}, 0f));
        g.drawLine(lx, top, lx, top + ph);
        g.drawString("load ends", lx + 4, top + 12);
        if (!Double.isNaN(refY)) {
            int y = top + ph - (int) Math.round(ph * refY / maxY);
            g.drawLine(left, y, left + pw, y);
            g.drawString("pi target", left + 4, y - 4);
        }
        int li = 0;
        for (Result r : rs) {
            Color c = COLORS.getOrDefault(r.controller(), Color.BLACK);
            g.setColor(c);
            g.setStroke(new BasicStroke(2f));
            int px = -1, py = -1;
            for (Sample s : r.samples()) {
                int x = left + (int) Math.round(pw * s.t() / maxX);
                int y = top + ph - (int) Math.round(ph * Math.min(m.of(s), maxY) / maxY);
                if (px >= 0) {
                    g.drawLine(px, py, x, y);
                }
                px = x;
                py = y;
            }
            int ly = top + 10 + li++ * 20;
            g.fillRect(left + pw + 16, ly - 8, 14, 10);
            g.setColor(Color.BLACK);
            g.drawString(r.controller(), left + pw + 36, ly + 2);
        }
        g.dispose();
        ImageIO.write(im, "png", out.toFile());
    }

    static double niceCeil(double v) {
        double p = Math.pow(10, Math.floor(Math.log10(v)));
        for (double k : new double[] {1, 2, 2.5, 5, 10}) {
            if (k * p >= v) {
                return k * p;
            }
        }
        return 10 * p;
    }

    static String trim(double v) {
        return v == Math.rint(v) ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.1f", v);
    }

    public static void main(String[] args) throws Exception {
        Path outDir = Path.of(args[0]);
        Path tmp = Path.of(args[1]);
        boolean quick = false;
        List<String> caches = List.of("writeboost", "writecache");
        List<String> controllers = ALL_CONTROLLERS;
        for (int i = 2; i < args.length; i++) {
            if (args[i].equals("--quick")) {
                quick = true;
            } else if (args[i].startsWith("--caches=")) {
                caches = List.of(args[i].substring(9).split(","));
            } else if (args[i].startsWith("--controllers=")) {
                controllers = List.of(args[i].substring(14).split(","));
            } else {
                System.err.println("unknown option " + args[i] + "; use --quick, --caches=LIST or --controllers=LIST");
                System.exit(2);
            }
        }
        Params p = quick ? new Params(true, 256L * MIB, 1024L * MIB, 150, 30_000_000_000L, 25_000_000_000L)
                : new Params(false, 256L * MIB, 1024L * MIB, 150, 45_000_000_000L, 35_000_000_000L);
        Files.createDirectories(outDir);
        String setup = String.format(Locale.ROOT, "cache %d MiB file on local disk, backing spindle (7200 rpm, 4 ms seek, 150 MB/s) over %d MiB, "
                + "front end %d × 8 KiB random writes/s (open loop, %d threads) for %d s, tail up to %d s; pi %s; idle %s",
                p.cacheBytes() / MIB, p.backingBytes() / MIB, p.iops(), THREADS, p.loadNanos() / 1_000_000_000L,
                p.tailNanos() / 1_000_000_000L, PI_TUNABLES, IDLE_TUNABLES);
        System.out.println(setup);
        List<Result> rs = new ArrayList<>();
        for (String cache : caches) {
            for (String controller : controllers) {
                Result r = run(cache, controller, p, tmp);
                rs.add(r);
                System.out.printf(Locale.ROOT, "%s/%s: %.1f IOPS, p99 %.1f ms, max %.1f ms, stall %.1f ms, dirty at load end %.1f MiB (%.1f %%), at tail end %.1f MiB, drain %.0f blocks/s%n",
                        cache, controller, r.iops(), r.p99(), r.max(), r.stallMs(), r.dirtyEndLoadMiB(), r.dirtyEndLoadPct(),
                        r.dirtyEndTailMiB(), r.tailDrainBlocksPerSec());
            }
        }
        StringBuilder md = new StringBuilder();
        md.append(setup).append("\n\n").append(table(rs)).append("\n");
        for (String g : goals(rs)) {
            md.append("- ").append(g).append("\n");
        }
        Files.writeString(outDir.resolve("result.md"), md.toString());
        StringBuilder tsv = new StringBuilder("cache\tcontroller\tt\tdirty_percent\tdirty_mib\tmax_latency_ms\n");
        for (Result r : rs) {
            for (Sample s : r.samples()) {
                tsv.append(String.format(Locale.ROOT, "%s\t%s\t%.2f\t%.3f\t%.2f\t%.2f%n", r.cache(), r.controller(), s.t(),
                        s.dirtyPercent(), s.dirtyMiB(), s.maxLatencyMs()));
            }
        }
        Files.writeString(outDir.resolve("samples.tsv"), tsv.toString());
        for (String cache : caches) {
            List<Result> mine = new ArrayList<>();
            for (Result r : rs) {
                if (r.cache().equals(cache)) {
                    mine.add(r);
                }
            }
            double load = p.loadNanos() / 1e9;
            chart(outDir.resolve("daemons-" + cache + "-dirty.png"), cache + ": dirty data over time, one line per controller",
                    "dirty share of the cache, % (pi's target dashed)", mine, Sample::dirtyPercent, load,
                    Double.parseDouble(PI_TUNABLES.get("writeback_percent")));
            chart(outDir.resolve("daemons-" + cache + "-latency.png"), cache + ": front-end write latency over time",
                    "largest latency in each 250 ms, ms (from each write's due time)", mine, Sample::maxLatencyMs, load, Double.NaN);
        }
        System.out.println();
        System.out.print(md);
    }
}
