import dev.strata.api.BlockDevice;
import dev.strata.cache.writecache.internal.format.Layout;
import dev.strata.cache.writecache.internal.index.FreeSlots;
import dev.strata.cache.writecache.internal.io.WritecacheTarget;
import dev.strata.nbd.internal.server.Export;
import dev.strata.nbd.internal.server.NbdServer;
import dev.strata.testsupport.target.ForwardingBlockDevice;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The seed's table of issue 11 in the form the issue states it (not a test): fio {@code
 * --ioengine=nbd --rw=randwrite --iodepth=32 --direct=1} for bs = 512 B … 64 KiB, against Strata's
 * NBD server in this JVM on 127.0.0.1 at a free port, exporting in turn the plain {@code memory}
 * cache device, writecache (block_size=512: every bs above 512 B is a multi-block write) over
 * that device with contiguous allocation, and the same with the bench-only one I/O per block.
 * A fresh cache is formatted for each writecache cell, no commits (fio sends no flush without
 * fsync options), the region fits in the cache: as the in-process table, over a socket.
 */
final class SeedNbd {
    private SeedNbd() {
    }

    private static final Pattern WRITE_BW = Pattern.compile("\"write\"\\s*:\\s*\\{[^}]*?\"bw_bytes\"\\s*:\\s*(\\d+)", Pattern.DOTALL);
    private static final Pattern WRITE_IOPS = Pattern.compile("\"write\"\\s*:\\s*\\{[^}]*?\"iops\"\\s*:\\s*([0-9.]+)", Pattern.DOTALL);

    /** {MiB/s, IOPS, JVM CPU ms per MiB} of one fio run over NBD against {@code d}. */
    static double[] fio(BlockDevice d, int bs, long region, int seconds, int ramp) throws Exception {
        NbdServer server = new NbdServer();
        try {
            Export e = server.addExport("seed", "writecache seed bench", d, new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), false);
            List<String> cmd = List.of("fio", "--name=seed-" + bs, "--ioengine=nbd",
                    "--uri=nbd://127.0.0.1:" + e.port() + "/seed", "--rw=randwrite", "--bs=" + bs, "--iodepth=32", "--direct=1",
                    "--size=" + region, "--time_based", "--runtime=" + seconds, "--ramp_time=" + ramp, "--output-format=json");
            long cpu0 = WritecacheBench.processCpuNanos();
            Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            if (!p.waitFor(seconds + ramp + 60L, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                throw new IOException("fio failed: " + out);
            }
            long cpu = WritecacheBench.processCpuNanos() - cpu0;
            Matcher m = WRITE_BW.matcher(out);
            Matcher q = WRITE_IOPS.matcher(out);
            if (!m.find() || !q.find()) {
                throw new IOException("no write bandwidth in fio's output");
            }
            double mibs = Long.parseLong(m.group(1)) / 1048576.0;
            // the JVM's CPU over the whole fio run (ramp included) per MiB at the measured rate
            return new double[] {mibs, Double.parseDouble(q.group(1)), cpu / 1e6 / Math.max(1e-9, mibs * (seconds + ramp))};
        } finally {
            server.close();
        }
    }

    /** Each column's median over the runs (by MiB/s; its CPU figure comes along). */
    static double[] median(double[][] runs) {
        double[][] c = runs.clone();
        java.util.Arrays.sort(c, (a, b) -> Double.compare(a[0], b[0]));
        return c[c.length / 2];
    }

    /** Seconds of unmeasured ramp before each run: {@code -Dbench.ramp}, 1 by default. */
    private static int ramp() {
        int ramp = Integer.getInteger("bench.ramp", 1);
        if (ramp < 0) {
            System.err.println("bench.ramp is " + ramp + ": give the seconds of ramp, 0 or more");
            System.exit(2);
        }
        return ramp;
    }

    /** Whether fio is there; if not, says so in the table's place. */
    private static boolean fioFound() throws Exception {
        if (new ProcessBuilder("fio", "--version").start().waitFor() == 0) {
            return true;
        }
        System.out.println("\n(fio not found: the seed table over NBD is left out)");
        return false;
    }

    static void run(boolean quick) throws Exception {
        if (!fioFound()) {
            return;
        }
        long region = (quick ? 64L : 256L) * WritecacheBench.MIB;
        int seconds = quick ? 1 : 3;
        int reps = Integer.getInteger("bench.reps", quick ? 1 : 3);
        int ramp = ramp();
        long slots = region / 512 + 1024;
        long cacheBytes = Layout.dataOffset(512, slots) + slots * 512;
        if (cacheBytes % 4096 == 0) {
            cacheBytes += 512; // a memory device whose size is a multiple of 4096 has 4096-byte blocks
        }
        BlockDevice backing = WritecacheBench.memory(region + 512);
        BlockDevice cache = WritecacheBench.memory(cacheBytes);
        WritecacheBench.prefill(backing);
        WritecacheBench.prefill(cache);
        System.out.printf(Locale.ROOT, "%n## Performance 1: the seed table over NBD (fio --ioengine=nbd --rw=randwrite --iodepth=32 --direct=1, one job)%n%n"
                + "Strata's NBD server in the bench JVM on 127.0.0.1; %d s runs after %d s of ramp, median of %d alternated run(s) per cell; region %d MiB; block_size=512; "
                + "`memory` cache device; a fresh cache per writecache cell; JVM CPU ms/MiB: the server side (NBD + device or cache), ramp included%n%n",
                seconds, ramp, reps, region / WritecacheBench.MIB);
        cells(backing, cache, 512, region, seconds, ramp, reps);
        cache.close();
        backing.close();
    }

    /** The table's header and rows from bs = blockSize to 64 KiB: device, contiguous, one I/O per block, alternated. */
    static void cells(BlockDevice backing, BlockDevice cache, int blockSize, long region, int seconds, int ramp, int reps) throws Exception {
        System.out.println("| bs | cache device MiB/s | contiguous MiB/s | contiguous / device | one I/O per block MiB/s"
                + " | contiguous / per block | JVM CPU ms/MiB device, contiguous, per block |");
        System.out.println("|---:|---:|---:|---:|---:|---:|---:|");
        // unmeasured: the JIT compiles the server's and the cache's paths (small and large requests)
        for (int bs : new int[] {blockSize, 4096}) {
            fio(cache, bs, region, 1, 0);
            try (WritecacheTarget t = WritecacheBench.open(backing, cache, false, blockSize)) {
                fio(t, bs, region, 1, 0);
            }
        }
        int onlyBs = Integer.getInteger("bench.bs", 0);
        for (int bs = blockSize; bs <= 64 * 1024; bs *= 2) {
            if (onlyBs != 0 && bs != onlyBs) {
                continue;
            }
            double[][] devs = new double[reps][];
            double[][] conts = new double[reps][];
            double[][] pers = new double[reps][];
            for (int r = 0; r < reps; r++) { // the three alternate, so that a burst of load hits each
                devs[r] = fio(cache, bs, region, seconds, ramp);
                try (WritecacheTarget t = WritecacheBench.open(backing, cache, false, blockSize)) {
                    conts[r] = fio(t, bs, region, seconds, ramp);
                }
                try (WritecacheTarget t = WritecacheBench.open(backing, cache, true, blockSize)) {
                    pers[r] = fio(t, bs, region, seconds, ramp);
                }
            }
            double[] dev = median(devs);
            double[] contiguous = median(conts);
            double[] perBlock = median(pers);
            System.out.printf(Locale.ROOT, "| %s | %,.0f | %,.0f | %.2f | %,.0f | %.2f× | %.2f, %.2f, %.2f |%n",
                    bs < 1024 ? bs + " B" : bs / 1024 + " KiB", dev[0], contiguous[0], contiguous[0] / dev[0],
                    perBlock[0], contiguous[0] / perBlock[0], dev[2], contiguous[2], perBlock[2]);
        }
    }

    /**
     * The same cells over a {@code direct} cache device: a preallocated O_DIRECT file, where every
     * I/O is a system call into the block layer and the disk (the kernel patch's SSD), so that one
     * I/O per block costs what it cost there. The cache is sized so that the data area and every
     * allocation lane start on a 4 KiB boundary, so a fresh cache hands out 4 KiB-aligned runs: a contiguous
     * 4 KiB write is then one aligned O_DIRECT write. With {@code -Dbench.seed.blockSize=512} (the
     * default, the memory table's cells) the device is shown with 512-byte sectors (a 4 KiB-aligned
     * file has 4096-byte blocks, which writecache refuses under block_size=512): the `direct`
     * driver writes a 512 B request as a read-modify-write of its 4 KiB file block, the cost of a
     * sub-page write on a 512e disk. {@code 4096}: the device's own block size, no read-modify-write
     * anywhere, cells from 4 KiB (a 4 KiB write is then one block either way).
     */
    static void runDirect(boolean quick) throws Exception {
        if (!fioFound()) {
            return;
        }
        int bsBlock = Integer.getInteger("bench.seed.blockSize", 512);
        long region = (quick ? 64L : 256L) * WritecacheBench.MIB;
        int seconds = quick ? 1 : 3;
        int reps = Integer.getInteger("bench.reps", quick ? 1 : 3);
        int ramp = ramp();
        long slots = region / bsBlock + 1024;
        // every allocation lane must start on a 4 KiB boundary too (lane k at slots * k / LANES):
        // else most lanes hand out runs that straddle two file blocks, each a read-modify-write
        long alignedSlots = (long) FreeSlots.LANES * (4096 / Math.min(4096, bsBlock));
        while (slots % alignedSlots != 0 || Layout.dataOffset(bsBlock, slots) % 4096 != 0) {
            slots++;
        }
        long cacheBytes = Layout.dataOffset(bsBlock, slots) + slots * bsBlock;
        Layout fit = Layout.fit(bsBlock, cacheBytes);
        if (fit == null || fit.slots() != slots) {
            throw new IllegalStateException("a cache of " + cacheBytes + " bytes fits " + fit + ", not " + slots + " slots");
        }
        java.nio.file.Path dir = java.nio.file.Path.of(System.getProperty("bench.dir", "/var/tmp"));
        java.nio.file.Path path = dir.resolve("wcseed-direct-" + ProcessHandle.current().pid() + ".cache");
        BlockDevice backing = WritecacheBench.memory(region + (bsBlock < 4096 ? 512 : 0)); // sized for both block sizes
        WritecacheBench.prefill(backing);
        try (BlockDevice file = WritecacheBench.direct(path, cacheBytes)) {
            BlockDevice cache = bsBlock < file.blockSize() ? new Sectors(file, bsBlock) : file;
            System.out.printf(Locale.ROOT, "%n## Performance 1: the seed table over NBD, `direct` cache device (fio --ioengine=nbd --rw=randwrite --iodepth=32 --direct=1, one job)%n%n"
                    + "As above, but the cache device is `direct` (O_DIRECT, preallocated %d MiB file in %s, data area 4 KiB-aligned)%s; "
                    + "backing still `memory`; block_size=%d; %d s runs after %d s of ramp, median of %d alternated run(s) per cell%n%n",
                    cacheBytes / WritecacheBench.MIB, dir, cache == file ? "" : " shown with " + bsBlock + "-byte sectors (a " + bsBlock
                    + " B write is a read-modify-write of a 4 KiB file block in the driver)", bsBlock, seconds, ramp, reps);
            cells(backing, cache, bsBlock, region, seconds, ramp, reps);
        } finally {
            java.nio.file.Files.deleteIfExists(path);
            backing.close();
        }
    }

    /** A device shown with smaller blocks than its own (bench only): the `direct` driver takes any 512-aligned request. */
    private static final class Sectors extends ForwardingBlockDevice {
        private final int blockSize;

        Sectors(BlockDevice d, int blockSize) {
            super(d);
            this.blockSize = blockSize;
        }

        @Override
        public int blockSize() {
            return blockSize;
        }

        @Override
        public void close() {
            // the file under it is closed by its owner
        }
    }
}
