import dev.strata.api.BlockDevice;
import dev.strata.cache.writecache.internal.format.Layout;
import dev.strata.cache.writecache.internal.format.MetadataSector;
import dev.strata.cache.writecache.internal.format.Superblock;
import dev.strata.cache.writecache.internal.index.FreeSlots;
import dev.strata.cache.writecache.internal.index.SlotIndex;
import dev.strata.cache.writecache.internal.io.Options;
import dev.strata.cache.writecache.internal.io.Tunables;
import dev.strata.cache.writecache.internal.io.WritecacheTarget;
import dev.strata.cache.writecache.internal.recovery.Recovery;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.Locale;

/**
 * Performance 4 of issue 11: heap per slot of the index and the free map (goal ≤ 24 B), measured
 * as the heap in use before and after building them for 1 Mi slots (smallest of three), and the
 * open of a full 4 GiB cache of 4 KiB blocks (every slot committed; goal ≤ 2 s): recovery reads
 * the whole metadata array and builds the index; the first open of the JVM apart from the next
 * ones (median). Both devices are {@code memory} devices; only
 * the cache's superblock and metadata are written (the data area is never read by recovery).
 */
final class Footprint {
    private Footprint() {
    }

    static long usedHeap() {
        var m = ManagementFactory.getMemoryMXBean();
        long last = Long.MAX_VALUE;
        for (int i = 0; i < 10; i++) {
            System.gc();
            long used = m.getHeapMemoryUsage().getUsed();
            if (used >= last) {
                return used;
            }
            last = used;
        }
        return last;
    }

    static void run(boolean quick) throws Exception {
        System.out.printf(Locale.ROOT, "%n## Performance 4: heap per slot, open of a full 4 GiB cache%n%n");
        int n = 1 << 20;
        double index = Double.MAX_VALUE;
        double free = Double.MAX_VALUE;
        for (int round = 0; round < 3; round++) {
            long before = usedHeap();
            SlotIndex ix = new SlotIndex(n);
            long mid = usedHeap();
            FreeSlots f = new FreeSlots(n);
            for (int i = 0; i < n; i++) {
                f.release(i);
            }
            long after = usedHeap();
            index = Math.min(index, (mid - before) / (double) n);
            free = Math.min(free, (after - mid) / (double) n);
            if (ix.slots() != n || f.count() != n) {
                throw new IllegalStateException("index or free map lost slots");
            }
        }
        System.out.printf(Locale.ROOT, "| figure | measured | goal |%n|---|---:|---|%n");
        System.out.printf(Locale.ROOT, "| heap per slot, index (1 Mi slots) | %.2f B | |%n", index);
        System.out.printf(Locale.ROOT, "| heap per slot, free map | %.2f B | |%n", free);
        System.out.printf(Locale.ROOT, "| heap per slot, both | %.2f B | ≤ 24 B |%n", index + free);

        long cacheBytes = 4L << 30;
        Layout layout = Layout.fit(4096, cacheBytes);
        BlockDevice cache = WritecacheBench.memory(cacheBytes);
        BlockDevice backing = WritecacheBench.memory(64L << 30);
        Superblock sb = Superblock.create(layout, backing.size(), "id", System.currentTimeMillis()).withSeqCount(2);
        ByteBuffer sectors = ByteBuffer.allocate(256 * Layout.SECTOR);
        long blocks = backing.size() / 4096;
        for (long first = 0; first < layout.metadataSectors(); first += 256) {
            int count = (int) Math.min(256, layout.metadataSectors() - first);
            for (int j = 0; j < count; j++) {
                long sec = first + j;
                for (int k = 0; k < Layout.ENTRIES_PER_SECTOR; k++) {
                    long slot = sec * Layout.ENTRIES_PER_SECTOR + k;
                    // every slot a committed block, spread over the backing device in a scrambled order
                    long block = slot < layout.slots() ? (slot * 0x9E3779B97F4A7C15L >>> 1) % blocks : MetadataSector.FREE;
                    MetadataSector.putEntry(sectors, j * Layout.SECTOR, k, block, 1);
                }
                MetadataSector.seal(sectors, j * Layout.SECTOR, sec);
            }
            cache.write(Layout.sectorOffset(first), sectors.clear().limit(count * Layout.SECTOR), 0);
        }
        cache.write(0, sb.encode(), BlockDevice.FUA);
        // the first open of the JVM (class loading, interpreter and JIT: a restart's open) apart
        // from the later ones; wall and the opening thread's CPU of each (CPU: what the open
        // costs on an idle core, whatever the load)
        int reps = quick ? 3 : 8;
        double[] wall = new double[reps];
        double[] cpu = new double[reps];
        double[] proc = new double[reps]; // with the JIT's and the collector's threads
        var threads = ManagementFactory.getThreadMXBean();
        for (int rep = 0; rep < reps; rep++) {
            usedHeap(); // no collection of the previous open's garbage inside this one
            long c0 = threads.getCurrentThreadCpuTime();
            long p0 = WritecacheBench.processCpuNanos();
            long t0 = System.nanoTime();
            WritecacheTarget t = Recovery.open("wc", backing, cache, "id", 0, false, Tunables.DEFAULTS, Options.defaults().manual());
            wall[rep] = (System.nanoTime() - t0) / 1e9;
            cpu[rep] = (threads.getCurrentThreadCpuTime() - c0) / 1e9;
            proc[rep] = (WritecacheBench.processCpuNanos() - p0) / 1e9;
            long dirty = t.dirtyBlocks();
            t.close();
            if (dirty != layout.slots()) {
                throw new IllegalStateException("open recovered " + dirty + " of " + layout.slots() + " slots");
            }
        }
        String what = String.format(Locale.ROOT, "open of a full 4 GiB cache (%,d slots, %.1f MiB of metadata)",
                layout.slots(), layout.metadataSectors() * Layout.SECTOR / 1048576.0);
        System.out.printf(Locale.ROOT, "| %s, first of the JVM: wall, CPU of the thread, of the process | %.2f s, %.2f s, %.2f s | ≤ 2 s |%n",
                what, wall[0], cpu[0], proc[0]);
        double[] w = java.util.Arrays.copyOfRange(wall, 1, reps);
        double[] c = java.util.Arrays.copyOfRange(cpu, 1, reps);
        double[] p = java.util.Arrays.copyOfRange(proc, 1, reps);
        java.util.Arrays.sort(w);
        java.util.Arrays.sort(c);
        java.util.Arrays.sort(p);
        System.out.printf(Locale.ROOT, "| the same, the next %d opens: wall median (min–max) | %.2f s (%.2f–%.2f) | ≤ 2 s |%n",
                reps - 1, median(w), w[0], w[w.length - 1]);
        System.out.printf(Locale.ROOT, "| the same, CPU time of the opening thread, median (min–max) | %.2f s (%.2f–%.2f) | |%n",
                median(c), c[0], c[c.length - 1]);
        System.out.printf(Locale.ROOT, "| the same, CPU time of the process (JIT, collector), median (min–max) | %.2f s (%.2f–%.2f) | |%n",
                median(p), p[0], p[p.length - 1]);
    }

    private static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
