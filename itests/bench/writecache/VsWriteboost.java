import dev.strata.api.BlockDevice;
import dev.strata.cache.writeboost.internal.io.WriteboostCache;
import dev.strata.cache.writecache.internal.format.Layout;
import dev.strata.cache.writecache.internal.io.Options;
import dev.strata.cache.writecache.internal.io.Tunables;
import dev.strata.cache.writecache.internal.io.WritecacheTarget;
import dev.strata.cache.writecache.internal.recovery.Recovery;
import dev.strata.nbd.internal.server.Export;
import dev.strata.nbd.internal.server.NbdServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Performance 2 of issue 11 (a report, no goal): 4 KiB random writes, 32 in flight, over a 64 MiB
 * region that fits in either cache, into writecache (block_size=4096, default tunables but the
 * watermarks at 100/90 so that no writeback starts; autocommit every 64 blocks as dm-writecache's
 * SSD mode) and writeboost (default tunables, writeback_threshold=0) over the same kind of devices
 * (fresh {@code memory} backing and cache devices of the same sizes for each), next to the cache
 * device alone: in process (32 threads, as the seed table) and over NBD (Strata's NBD server in
 * this JVM on 127.0.0.1 at a free port, fio's nbd engine {@code --rw=randwrite --bs=4k
 * --iodepth=32 --direct=1}). Systems run alternately, in one run.
 */
final class VsWriteboost {
    private VsWriteboost() {
    }

    static final long REGION = 64L << 20;
    static final long CACHE = 256L << 20;

    interface Opened extends AutoCloseable {
        BlockDevice device();

        @Override
        void close() throws IOException;
    }

    static Opened open(String system) throws IOException {
        BlockDevice backing = WritecacheBench.memory(REGION);
        switch (system) {
            case "cache device" -> {
                BlockDevice d = WritecacheBench.memory(CACHE);
                WritecacheBench.prefill(d);
                return new Opened() {
                    public BlockDevice device() { return d; }
                    public void close() throws IOException { d.close(); backing.close(); }
                };
            }
            case "writecache" -> {
                BlockDevice cache = WritecacheBench.memory(CACHE);
                WritecacheBench.prefill(cache);
                cache.write(0, ByteBuffer.allocate(Layout.SUPERBLOCK_BYTES), BlockDevice.FUA);
                WritecacheTarget t = Recovery.open("wcbench", backing, cache, null, 4096, true,
                        Tunables.DEFAULTS.with(Tunables.HIGH_WATERMARK, "100").with(Tunables.LOW_WATERMARK, "90"),
                        Options.defaults());
                return new Opened() {
                    public BlockDevice device() { return t; }
                    public void close() throws IOException { t.close(); cache.close(); backing.close(); }
                };
            }
            case "writeboost" -> {
                BlockDevice cache = WritecacheBench.memory(CACHE);
                WritecacheBench.prefill(cache);
                WriteboostCache wb = WriteboostCache.open("wbbench", backing, cache, true,
                        dev.strata.cache.writeboost.internal.io.Tunables.DEFAULTS
                                .with(dev.strata.cache.writeboost.internal.io.Tunables.WRITEBACK_THRESHOLD, "0"),
                        WriteboostCache.Options.defaults(), null);
                return new Opened() {
                    public BlockDevice device() { return wb; }
                    public void close() throws IOException { wb.close(); cache.close(); backing.close(); }
                };
            }
            default -> throw new IllegalArgumentException(system);
        }
    }

    private static final Pattern WRITE_BW = Pattern.compile("\"write\"\\s*:\\s*\\{[^}]*?\"bw_bytes\"\\s*:\\s*(\\d+)", Pattern.DOTALL);

    /** MiB/s of fio's 4 KiB random writes over NBD to {@code d}, exported by an in-process server. */
    static double overNbd(BlockDevice d, int seconds) throws Exception {
        NbdServer server = new NbdServer();
        try {
            Export e = server.addExport("bench", "writecache bench", d, new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), false);
            List<String> cmd = List.of("fio", "--name=randwrite-4k", "--ioengine=nbd",
                    "--uri=nbd://127.0.0.1:" + e.port() + "/bench", "--rw=randwrite", "--bs=4k", "--iodepth=32", "--direct=1",
                    "--size=" + REGION, "--time_based", "--runtime=" + seconds, "--ramp_time=1", "--output-format=json");
            Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            if (!p.waitFor(seconds + 60L, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                throw new IOException("fio failed: " + out);
            }
            Matcher m = WRITE_BW.matcher(out);
            if (!m.find()) {
                throw new IOException("no write bandwidth in fio's output");
            }
            return Long.parseLong(m.group(1)) / 1048576.0;
        } finally {
            server.close();
        }
    }

    static void run(boolean quick) throws Exception {
        List<String> systems = List.of("cache device", "writecache", "writeboost");
        int reps = quick ? 1 : 3;
        long millis = quick ? 1000 : 3000;
        boolean fio = new ProcessBuilder("fio", "--version").start().waitFor() == 0;
        System.out.printf(Locale.ROOT, "%n## Performance 2: 4 KiB random writes, writecache next to writeboost%n%n"
                + "64 MiB region, 256 MiB memory cache device, 32 in flight; median of %d alternated run(s)%s%n%n",
                reps, fio ? "" : " (fio not found: NBD column left out)");
        double[][] inProc = new double[systems.size()][reps];
        double[][] nbd = new double[systems.size()][reps];
        for (int rep = 0; rep < reps; rep++) {
            for (int i = 0; i < systems.size(); i++) {
                try (Opened o = open(systems.get(i))) {
                    inProc[i][rep] = WritecacheBench.run(o.device(), REGION, 4096, 300, millis).mibs();
                }
                if (fio) {
                    try (Opened o = open(systems.get(i))) {
                        nbd[i][rep] = overNbd(o.device(), (int) (millis / 1000));
                    }
                }
            }
        }
        System.out.println("| system | in process MiB/s | / cache device | over NBD MiB/s | / cache device over NBD |");
        System.out.println("|---|---:|---:|---:|---:|");
        double devIn = median(inProc[0]);
        double devNbd = median(nbd[0]);
        for (int i = 0; i < systems.size(); i++) {
            double a = median(inProc[i]);
            double b = median(nbd[i]);
            System.out.printf(Locale.ROOT, "| %s | %,.0f | %.2f | %s | %s |%n", systems.get(i), a, a / devIn,
                    fio ? String.format(Locale.ROOT, "%,.0f", b) : "n/a", fio ? String.format(Locale.ROOT, "%.2f", b / devNbd) : "n/a");
        }
        double wc = median(inProc[1]);
        double wb = median(inProc[2]);
        System.out.printf(Locale.ROOT, "%nwritecache / writeboost: %.2f in process%s%n", wc / wb,
                fio ? String.format(Locale.ROOT, ", %.2f over NBD", median(nbd[1]) / median(nbd[2])) : "");
    }

    static double median(double[] v) {
        double[] c = v.clone();
        java.util.Arrays.sort(c);
        return c[c.length / 2];
    }
}
