import dev.strata.api.BlockDevice;
import dev.strata.cache.writecache.internal.format.Layout;
import dev.strata.cache.writecache.internal.index.SlotIndex;
import dev.strata.cache.writecache.internal.io.Options;
import dev.strata.cache.writecache.internal.io.Tunables;
import dev.strata.cache.writecache.internal.io.WritecacheTarget;
import dev.strata.cache.writecache.internal.recovery.Recovery;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;

/**
 * Performance 1's floor (not a test): what a 4 KiB overwrite (-Dbench.floor.bs=16384 etc.) through writecache costs next to
 * the {@code memory} cache device alone and next to the one index walk it cannot skip, as the
 * CPU time of the writing threads per request (ThreadMXBean: the JIT, GC and other processes
 * are not counted, which makes it the least load-sensitive figure). Steady state, unlike the
 * seed table: every block of the region is written once first, so each measured write is an
 * in-place overwrite (the path with no state monitor). The walk: a {@link SlotIndex} of the same
 * size filled the same way (runs of bs / 512 slots for the region's chunks in random order),
 * random finds from as many threads, independent ones (the CPU overlaps their cache misses) and
 * finds one after another (each key depends on the previous result, as in a write path, where
 * nothing overlaps the one find of a request). device + walk is the floor of a design that looks
 * each request up in a sorted index; everything above it is registration and bookkeeping. Last,
 * one loop of find-then-device-write per request (the two together, nothing else of writecache):
 * what the walk and the copy cost each other when they share the cores' caches.
 */
final class Floor {
    private Floor() {
    }

    static void run(boolean quick) throws Exception {
        int threads = WritecacheBench.THREADS;
        int bs = Integer.getInteger("bench.floor.bs", 4096); // ≥ 4096: a request covers whole hint groups, whatever the fill order
        long region = 64L * WritecacheBench.MIB;
        long millis = quick ? 1000 : 3000;
        int rounds = quick ? 2 : 3;
        long slots = region / 512 + 1024;
        long cacheBytes = Layout.dataOffset(512, slots) + slots * 512;
        if (cacheBytes % 4096 == 0) {
            cacheBytes += 512;
        }
        BlockDevice backing = WritecacheBench.memory(region + 512);
        BlockDevice cache = WritecacheBench.memory(cacheBytes);
        WritecacheBench.prefill(backing);
        WritecacheBench.prefill(cache);
        cache.write(0, ByteBuffer.allocate(Layout.SUPERBLOCK_BYTES), BlockDevice.FUA);
        System.out.printf(Locale.ROOT, "%n## Performance 1: the floor at " + bs / 1024 + " KiB (steady state, %d threads, region %d MiB, block_size=512, thread CPU per request)%n%n",
                threads, region / WritecacheBench.MIB);
        System.out.println("| round | memory device µs/req | writecache µs/req | index walk alone µs/find | device + walk | writecache − (device + walk)"
                + " | walk, finds one after another µs/find | writecache − (device + that walk)"
                + " | find then device write, one loop µs/req | writecache − that | writecache / device, MiB/s |");
        System.out.println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        SlotIndex index = filledIndex((int) slots, region, bs);
        try (WritecacheTarget wc = Recovery.open("wcfloor", backing, cache, null, 512, true, Tunables.DEFAULTS,
                Options.defaults().manual())) {
            ByteBuffer b = ByteBuffer.allocateDirect(bs);
            // in backing order (slot order = block order), or with -Dbench.floor.shuffle=true in a random
            // order, as the seed table's fresh cache is filled: neighbouring chunks in unrelated slots
            long[] offs = new long[(int) (region / bs)];
            for (int i = 0; i < offs.length; i++) {
                offs[i] = (long) i * bs;
            }
            if (Boolean.getBoolean("bench.floor.shuffle")) {
                java.util.Random rnd = new java.util.Random(11);
                for (int i = offs.length - 1; i > 0; i--) {
                    int j = rnd.nextInt(i + 1);
                    long t = offs[i];
                    offs[i] = offs[j];
                    offs[j] = t;
                }
            }
            for (long off : offs) {
                wc.write(off, b.clear(), 0);
            }
            cell(cache, region, bs, threads, 300); // JIT
            cell(wc, region, bs, threads, 300);
            for (int r = 1; r <= rounds; r++) {
                double[] dev = cell(cache, region, bs, threads, millis);
                double[] w = cell(wc, region, bs, threads, millis);
                double walk = walk(index, region, bs, threads, millis, false);
                double chain = walk(index, region, bs, threads, millis, true);
                double both = interleaved(index, cache, Layout.dataOffset(512, slots), (int) slots, region, bs, threads, millis);
                System.out.printf(Locale.ROOT, "| %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |%n", r, dev[1], w[1], walk, dev[1] + walk,
                        w[1] - dev[1] - walk, chain, w[1] - dev[1] - chain, both, w[1] - both, w[0] / dev[0]);
            }
        }
        cache.close();
        backing.close();
    }

    /** {MiB/s, µs of the writing threads' CPU per request} of random bs writes after 300 ms unmeasured. */
    static double[] cell(BlockDevice d, long region, int bs, int threads, long millis) throws Exception {
        LongAdder reqs = new LongAdder();
        LongAdder cpu = new LongAdder();
        long from = System.nanoTime() + 300_000_000L;
        long end = from + millis * 1_000_000L;
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Exception[] failure = new Exception[1];
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            Thread t = new Thread(() -> {
                ByteBuffer buf = ByteBuffer.allocateDirect(bs);
                ThreadLocalRandom r = ThreadLocalRandom.current();
                long chunks = region / bs;
                long c0 = -1;
                long n = 0;
                try {
                    while (true) {
                        long now = System.nanoTime();
                        if (now >= end) {
                            break;
                        }
                        if (c0 < 0 && now >= from) {
                            c0 = mx.getCurrentThreadCpuTime();
                        }
                        d.write(r.nextLong(chunks) * bs, buf.clear(), 0);
                        if (c0 >= 0) {
                            n++;
                        }
                    }
                    cpu.add(c0 < 0 ? 0 : mx.getCurrentThreadCpuTime() - c0);
                    reqs.add(n);
                } catch (Exception e) {
                    synchronized (failure) {
                        failure[0] = e;
                    }
                }
            });
            ts.add(t);
            t.start();
        }
        for (Thread t : ts) {
            t.join();
        }
        if (failure[0] != null) {
            throw failure[0];
        }
        double mib = reqs.sum() * (double) bs / WritecacheBench.MIB;
        return new double[] {mib / (millis / 1000.0), cpu.sum() / 1000.0 / Math.max(1, reqs.sum())};
    }

    /**
     * µs of thread CPU per (find on {@code ix}, then a bs write to {@code d} at the slot the find
     * gave): the walk and the copy of one request one after the other, with nothing else of
     * writecache in between. Against device + walk measured apart, it shows what the two cost
     * each other (the copy's lines evicting the index's, and the other way round).
     */
    static double interleaved(SlotIndex ix, BlockDevice d, long dataOffset, int slots, long region, int bs, int threads,
            long millis) throws Exception {
        int per = bs / 512;
        long chunks = region / bs;
        LongAdder n = new LongAdder();
        LongAdder cpu = new LongAdder();
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long end = System.nanoTime() + millis * 1_000_000L;
        Exception[] failure = new Exception[1];
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread th = new Thread(() -> {
                ByteBuffer buf = ByteBuffer.allocateDirect(bs);
                ThreadLocalRandom r = ThreadLocalRandom.current();
                long c0 = mx.getCurrentThreadCpuTime();
                long k = 0;
                try {
                    while (System.nanoTime() < end) {
                        int s = ix.find(r.nextLong(chunks) * per);
                        long slot = Math.max(0, Math.min(slots - per, s)); // where writecache writes it
                        d.write(dataOffset + slot * 512, buf.clear(), 0);
                        k++;
                    }
                } catch (Exception e) {
                    synchronized (failure) {
                        failure[0] = e;
                    }
                }
                cpu.add(mx.getCurrentThreadCpuTime() - c0);
                n.add(k);
            });
            ts.add(th);
            th.start();
        }
        for (Thread th : ts) {
            th.join();
        }
        if (failure[0] != null) {
            throw failure[0];
        }
        return cpu.sum() / 1000.0 / Math.max(1, n.sum());
    }

    /** An index like the cache's after the prefill: the region's chunks in random order, each a run of bs / 512 slots. */
    static SlotIndex filledIndex(int slots, long region, int bs) {
        int per = bs / 512;
        SlotIndex ix = new SlotIndex(slots);
        int chunks = (int) (region / bs);
        long[] order = new long[chunks];
        for (int i = 0; i < chunks; i++) {
            order[i] = i;
        }
        Random rnd = new Random(1);
        for (int i = chunks - 1; i > 0; i--) {
            int j = rnd.nextInt(i + 1);
            long t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (int i = 0; i < chunks; i++) {
            ix.insertRun(i * per, order[i] * per, per, 0);
        }
        return ix;
    }

    /** µs of thread CPU per random find (read-only, so the threads share the index without a lock). */
    static double walk(SlotIndex ix, long region, int bs, int threads, long millis, boolean dependent) throws Exception {
        int per = bs / 512;
        long chunks = region / bs;
        LongAdder n = new LongAdder();
        LongAdder cpu = new LongAdder();
        LongAdder sink = new LongAdder();
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long end = System.nanoTime() + millis * 1_000_000L;
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread th = new Thread(() -> {
                ThreadLocalRandom r = ThreadLocalRandom.current();
                long c0 = mx.getCurrentThreadCpuTime();
                long k = 0;
                long acc = 0;
                while (System.nanoTime() < end) {
                    for (int q = 0; q < 64; q++) {
                        // dependent: the next key waits for this find's result (as one request's
                        // find waits for nothing but follows its own), so the CPU cannot overlap
                        // the cache misses of successive finds; independent ones it can
                        long key = dependent ? (r.nextLong(chunks) + (acc & 1)) % chunks : r.nextLong(chunks);
                        int f = ix.find(key * per);
                        acc = dependent ? f : acc + f;
                        k++;
                    }
                }
                cpu.add(mx.getCurrentThreadCpuTime() - c0);
                n.add(k);
                sink.add(acc + k); // keeps the finds from being optimized away
            });
            ts.add(th);
            th.start();
        }
        for (Thread th : ts) {
            th.join();
        }
        return cpu.sum() / 1000.0 / n.sum();
    }
}
