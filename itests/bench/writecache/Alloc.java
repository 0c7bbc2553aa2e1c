import dev.strata.api.BlockDevice;
import dev.strata.cache.writecache.internal.format.Layout;
import dev.strata.cache.writecache.internal.io.Options;
import dev.strata.cache.writecache.internal.io.Tunables;
import dev.strata.cache.writecache.internal.io.WritecacheTarget;
import dev.strata.cache.writecache.internal.recovery.Recovery;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Performance 1's miss path (not a test): what a write that allocates costs, the part of the
 * seed-nbd cells that a fresh cache per cell makes most of its time. Every chunk of the region
 * is written exactly once, in a random order shared by the threads, into a freshly formatted
 * cache (block_size=512), so every request is a miss that takes the state monitor, free slots
 * and a run insertion into the index; next to it the same writes to the {@code memory} cache
 * device alone. Thread CPU per request (ThreadMXBean: the JIT, GC and other processes not
 * counted), 1 thread and 32, and wall µs per request with 32 (where the monitor's convoy shows).
 */
final class Alloc {
    private Alloc() {
    }

    static void run(boolean quick) throws Exception {
        long region = (quick ? 64L : 256L) * WritecacheBench.MIB;
        int rounds = Integer.getInteger("bench.rounds", quick ? 3 : 5);
        long slots = region / 512 + 1024;
        long cacheBytes = Layout.dataOffset(512, slots) + slots * 512;
        if (cacheBytes % 4096 == 0) {
            cacheBytes += 512;
        }
        BlockDevice backing = WritecacheBench.memory(region + 512);
        BlockDevice cache = WritecacheBench.memory(cacheBytes);
        WritecacheBench.prefill(backing);
        WritecacheBench.prefill(cache);
        System.out.printf(Locale.ROOT, "%n## Performance 1: the miss path (every request allocates; fresh cache per round, region %d MiB, block_size=512)%n%n",
                region / WritecacheBench.MIB);
        System.out.println("| bs | threads | round | memory device CPU µs/req | writecache CPU µs/req | writecache − device | device wall µs/req | writecache wall µs/req |");
        System.out.println("|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (int bs : new int[] {1024, 4096}) {
            int[] order = order((int) (region / bs));
            for (int threads : new int[] {1, WritecacheBench.THREADS}) {
                for (int r = 0; r <= rounds; r++) { // round 0: JIT, not printed
                    double[] dev = cell(cache, Layout.dataOffset(512, slots), order, bs, threads);
                    cache.write(0, ByteBuffer.allocate(Layout.SUPERBLOCK_BYTES), BlockDevice.FUA);
                    double[] w;
                    try (WritecacheTarget wc = Recovery.open("wcalloc", backing, cache, null, 512, true, Tunables.DEFAULTS,
                            Options.defaults().manual())) {
                        w = cell(wc, 0, order, bs, threads);
                    }
                    if (r > 0) {
                        System.out.printf(Locale.ROOT, "| %s | %d | %d | %.2f | %.2f | %.2f | %.2f | %.2f |%n",
                                bs / 1024 + " KiB", threads, r, dev[0], w[0], w[0] - dev[0], dev[1], w[1]);
                    }
                }
            }
        }
        cache.close();
        backing.close();
    }

    static int[] order(int n) {
        int[] o = new int[n];
        for (int i = 0; i < n; i++) {
            o[i] = i;
        }
        Random rnd = new Random(7);
        for (int i = n - 1; i > 0; i--) {
            int j = rnd.nextInt(i + 1);
            int t = o[i];
            o[i] = o[j];
            o[j] = t;
        }
        return o;
    }

    /** {thread CPU µs per request, wall µs per request} of writing every chunk in {@code order} once. */
    static double[] cell(BlockDevice d, long base, int[] order, int bs, int threads) throws Exception {
        AtomicInteger next = new AtomicInteger();
        LongAdder cpu = new LongAdder();
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Exception[] failure = new Exception[1];
        Thread[] ts = new Thread[threads];
        long t0 = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            ts[t] = new Thread(() -> {
                ByteBuffer buf = ByteBuffer.allocateDirect(bs);
                long c0 = mx.getCurrentThreadCpuTime();
                try {
                    int i;
                    while ((i = next.getAndIncrement()) < order.length) {
                        d.write(base + (long) order[i] * bs, buf.clear(), 0);
                    }
                } catch (Exception e) {
                    synchronized (failure) {
                        failure[0] = e;
                    }
                }
                cpu.add(mx.getCurrentThreadCpuTime() - c0);
            });
            ts[t].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        long wall = System.nanoTime() - t0;
        if (failure[0] != null) {
            throw failure[0];
        }
        return new double[] {cpu.sum() / 1000.0 / order.length, wall / 1000.0 * threads / order.length};
    }
}
