import dev.strata.api.BlockDevice;
import dev.strata.cache.writecache.internal.format.Layout;
import dev.strata.cache.writecache.internal.io.Options;
import dev.strata.cache.writecache.internal.io.Tunables;
import dev.strata.cache.writecache.internal.io.WritecacheTarget;
import dev.strata.cache.writecache.internal.recovery.Recovery;
import dev.strata.driver.direct.internal.DirectTargetFactory;
import dev.strata.driver.file.internal.FileTargetFactory;
import dev.strata.driver.memory.internal.MemoryTargetFactory;
import dev.strata.testsupport.target.SimpleTargetContext;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;

/**
 * The seed's table of issue 11 (dm-writecache 5.6, "improve performance of large linear writes"),
 * in process (not a test): random writes of bs = 512 B … 64 KiB, 32 requests in flight (32
 * threads, each issuing one synchronous write at a time: the in-process equivalent of fio
 * {@code --rw=randwrite --iodepth=32 --direct=1}), over a {@code memory} cache device, MiB/s of
 * the writecache with contiguous allocation (a multi-block write is one cache-device I/O) and
 * with one I/O per block (the bench-only {@code Options.withOneIoPerBlock()}), next to the cache
 * device's own rate under the same load. block_size=512 at every bs, so that every bs above
 * 512 B is a multi-block write (with 4096-byte blocks a 4 KiB write is a single block either way).
 * No commits during a run (no flush, background off), as fio without fsync; the region fits in
 * the cache, so nothing goes around and nothing is written back.
 */
public final class WritecacheBench {
    static final int MIB = 1 << 20;
    static final int THREADS = Integer.getInteger("bench.threads", 32);

    static BlockDevice memory(long size) throws IOException {
        return new MemoryTargetFactory().create(SimpleTargetContext.of("mem", "size=" + size));
    }

    /** A {@code file} device (page cache) of {@code size} bytes at {@code path}, created. */
    static BlockDevice file(java.nio.file.Path path, long size) throws IOException {
        return new FileTargetFactory().create(SimpleTargetContext.of("file", "path=" + path + " size=" + size + " create=true"));
    }

    /**
     * A {@code direct} device (O_DIRECT, no page cache) of {@code size} bytes at {@code path},
     * created and preallocated (zeros written: O_DIRECT writes into holes allocate, a device has none).
     */
    static BlockDevice direct(java.nio.file.Path path, long size) throws IOException {
        return new DirectTargetFactory().create(
                SimpleTargetContext.of("direct", "path=" + path + " size=" + size + " create=true preallocate=true"));
    }

    /** Writes every byte once: a never-written memory device pays for chunk allocation. */
    static void prefill(BlockDevice d) throws IOException {
        ByteBuffer b = ByteBuffer.allocateDirect(MIB);
        for (long off = 0; off < d.size(); off += MIB) {
            int n = (int) Math.min(MIB, d.size() - off);
            d.write(off, b.clear().limit(n), 0);
        }
    }

    /** One cell: MiB/s, and the process's CPU time per MiB moved (less sensitive to other load on the machine). */
    record Rate(double mibs, double cpuMsPerMib) {
    }

    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /** MiB/s of random aligned bs writes over [0, region) of d, THREADS in flight, for millis. */
    static Rate run(BlockDevice d, long region, int bs, long warmMillis, long millis) throws Exception {
        LongAdder bytes = new LongAdder();
        long[] phase = new long[1];
        long start = System.nanoTime();
        long measureFrom = start + warmMillis * 1_000_000L;
        long end = measureFrom + millis * 1_000_000L;
        List<Thread> threads = new ArrayList<>();
        Exception[] failure = new Exception[1];
        long chunks = region / bs;
        for (int i = 0; i < THREADS; i++) {
            Thread t = new Thread(() -> {
                ByteBuffer buf = ByteBuffer.allocateDirect(bs);
                ThreadLocalRandom r = ThreadLocalRandom.current();
                try {
                    while (true) {
                        long now = System.nanoTime();
                        if (now >= end) {
                            return;
                        }
                        d.write(r.nextLong(chunks) * bs, buf.clear(), 0);
                        if (now >= measureFrom) {
                            bytes.add(bs);
                        }
                    }
                } catch (Exception e) {
                    synchronized (failure) {
                        failure[0] = e;
                    }
                }
            });
            threads.add(t);
            t.start();
        }
        long cpu0 = 0;
        long wall0 = 0;
        long sleep = measureFrom - System.nanoTime();
        if (sleep > 0) {
            Thread.sleep(sleep / 1_000_000L, (int) (sleep % 1_000_000L));
        }
        cpu0 = processCpuNanos();
        for (Thread t : threads) {
            t.join();
        }
        long cpu = processCpuNanos() - cpu0;
        if (failure[0] != null) {
            throw failure[0];
        }
        double mib = bytes.sum() / (double) MIB;
        return new Rate(mib / (millis / 1000.0), cpu / 1e6 / mib);
    }

    static WritecacheTarget open(BlockDevice backing, BlockDevice cache, boolean onePerBlock) throws IOException {
        return open(backing, cache, onePerBlock, 512);
    }

    static WritecacheTarget open(BlockDevice backing, BlockDevice cache, boolean onePerBlock, int blockSize) throws IOException {
        cache.write(0, ByteBuffer.allocate(Layout.SUPERBLOCK_BYTES), BlockDevice.FUA); // a fresh cache each time
        Options o = Options.defaults().manual();
        return Recovery.open("wcbench", backing, cache, null, blockSize, true, Tunables.DEFAULTS,
                onePerBlock ? o.withOneIoPerBlock() : o);
    }

    public static void main(String[] args) throws Exception {
        boolean quick = List.of(args).contains("--quick");
        String only = "seed,seed-nbd,seed-nbd-direct,floor,bookkeeping,alloc,per-block,vs-writeboost,writeback,footprint";
        for (String a : args) {
            if (a.startsWith("--only=")) {
                only = a.substring("--only=".length());
            }
        }
        List<String> parts = List.of(only.split(","));
        if (parts.contains("seed")) {
            seedTable(quick);
        }
        if (parts.contains("seed-nbd")) {
            SeedNbd.run(quick);
        }
        if (parts.contains("seed-nbd-direct")) {
            SeedNbd.runDirect(quick);
        }
        if (parts.contains("floor")) {
            Floor.run(quick);
        }
        if (parts.contains("bookkeeping")) {
            dev.strata.cache.writecache.internal.io.Bookkeeping.run(quick, THREADS);
        }
        if (parts.contains("alloc")) {
            Alloc.run(quick);
        }
        if (parts.contains("per-block")) {
            PerBlockCost.run(quick);
        }
        if (parts.contains("vs-writeboost")) {
            VsWriteboost.run(quick);
        }
        if (parts.contains("writeback")) {
            WritebackOrder.run(quick);
        }
        if (parts.contains("footprint")) {
            Footprint.run(quick);
        }
    }

    /** Performance 1 of issue 11: the seed's table. */
    static void seedTable(boolean quick) throws Exception {
        long region = (quick ? 64L : 256L) * MIB;
        long millis = quick ? 1000 : 3000;
        long warm = quick ? 300 : 2000; // C2 compiles the write path late on a loaded machine
        long slots = region / 512 + 1024;
        long cacheBytes = Layout.dataOffset(512, slots) + slots * 512;
        if (cacheBytes % 4096 == 0) {
            cacheBytes += 512; // a memory device whose size is a multiple of 4096 has 4096-byte blocks
        }
        BlockDevice backing = memory(region + 512);
        BlockDevice cache = memory(cacheBytes);
        prefill(backing);
        prefill(cache);
        System.out.printf(Locale.ROOT, "%n## Performance 1: the seed table, in process (the in-process equivalent of fio)%n%nwritecache seed table (in process, %d threads, %s runs, region %d MiB, block_size=512)%n%n",
                THREADS, quick ? "1 s" : "3 s", region / MIB);
        System.out.println("| bs | cache device MiB/s | contiguous MiB/s | contiguous / device | one I/O per block MiB/s"
                + " | contiguous / per block | CPU ms/MiB device, contiguous, per block | CPU device / contiguous |");
        System.out.println("|---:|---:|---:|---:|---:|---:|---:|---:|");
        table(backing, cache, region, warm, millis, true);
        cache.close();
        // the same over a cache device whose every request is a system call (pwrite into the page
        // cache): a per-request cost that a heap memory device does not have
        if (!Boolean.parseBoolean(System.getProperty("bench.file", "true"))) {
            return;
        }
        java.nio.file.Path dir = java.nio.file.Path.of(System.getProperty("bench.dir", "/var/tmp"));
        java.nio.file.Path path = java.nio.file.Files.createTempFile(dir, "wcbench-", ".cache");
        try (BlockDevice fileCache = file(path, cacheBytes)) {
            prefill(fileCache);
            System.out.printf(Locale.ROOT, "%nThe same over a `file` cache device (%s, page cache: one pwrite per request; backing still `memory`)%n%n", dir);
            System.out.println("| bs | cache device MiB/s | contiguous MiB/s | contiguous / device | one I/O per block MiB/s"
                    + " | contiguous / per block | CPU ms/MiB device, contiguous, per block |");
            System.out.println("|---:|---:|---:|---:|---:|---:|---:|");
            table(backing, fileCache, region, warm, millis, false);
        } finally {
            java.nio.file.Files.deleteIfExists(path);
        }
    }

    static void table(BlockDevice backing, BlockDevice cache, long region, long warm, long millis, boolean cpuRatio) throws Exception {
        // one unmeasured cell of each system first: otherwise the first writecache cell (512 B,
        // contiguous) also pays for the JIT compiling the whole write path, which under load took
        // longer than its warm-up (2.6x slower than the identical one-I/O-per-block cell of 1-block writes)
        run(cache, region, 4096, 0, warm);
        for (boolean onePerBlock : new boolean[] {false, true}) {
            try (WritecacheTarget t = open(backing, cache, onePerBlock)) {
                run(t, region, 4096, 0, warm);
            }
        }
        int onlyBs = Integer.getInteger("bench.bs", 0);
        for (int bs = 512; bs <= 64 * 1024; bs *= 2) {
            if (onlyBs != 0 && bs != onlyBs) {
                continue;
            }
            Rate dev = run(cache, region, bs, warm, millis);
            Rate contiguous;
            try (WritecacheTarget t = open(backing, cache, false)) {
                contiguous = run(t, region, bs, warm, millis);
            }
            Rate perBlock;
            try (WritecacheTarget t = open(backing, cache, true)) {
                perBlock = run(t, region, bs, warm, millis);
            }
            System.out.printf(Locale.ROOT, "| %s | %,.0f | %,.0f | %.2f | %,.0f | %.2f× | %.3f, %.3f, %.3f |%s%n",
                    bs < 1024 ? bs + " B" : bs / 1024 + " KiB", dev.mibs(), contiguous.mibs(), contiguous.mibs() / dev.mibs(),
                    perBlock.mibs(), contiguous.mibs() / perBlock.mibs(), dev.cpuMsPerMib(), contiguous.cpuMsPerMib(),
                    perBlock.cpuMsPerMib(), cpuRatio ? String.format(Locale.ROOT, " %.2f |", dev.cpuMsPerMib() / contiguous.cpuMsPerMib()) : "");
        }
    }
}
