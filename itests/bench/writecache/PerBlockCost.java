import dev.strata.api.BlockDevice;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Locale;
import java.util.Random;

/**
 * What "one I/O per block" can cost at most over a {@code memory} cache device (not a test): the
 * device alone, one thread, a request of {@code bs} written as one write or as {@code bs / 512}
 * writes of 512 B to the same places, thread CPU µs per request (median of the rounds). The
 * difference is all that contiguous allocation saves a request over this device; set it next
 * to the CPU a whole writecache request costs (seed, seed-nbd, floor) to bound the speed-up.
 */
final class PerBlockCost {
    private PerBlockCost() {
    }

    static void run(boolean quick) throws Exception {
        long region = (quick ? 64L : 256L) * WritecacheBench.MIB;
        int rounds = Integer.getInteger("bench.rounds", quick ? 3 : 5);
        BlockDevice d = WritecacheBench.memory(region + 512);
        WritecacheBench.prefill(d);
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        System.out.printf(Locale.ROOT, "%n## Performance 1: what one I/O per block costs over the `memory` device alone (1 thread, region %d MiB, median of %d rounds)%n%n",
                region / WritecacheBench.MIB, rounds);
        System.out.println("| bs | one write µs/req | writes of 512 B µs/req | difference µs/req |");
        System.out.println("|---:|---:|---:|---:|");
        for (int bs = 1024; bs <= 64 * 1024; bs *= 2) {
            ByteBuffer buf = ByteBuffer.allocate(bs);
            int n = (int) Math.min(400_000, (256L * WritecacheBench.MIB) / bs);
            double[][] t = new double[2][rounds];
            for (int r = 0; r <= rounds; r++) { // round 0: JIT, not counted
                for (int mode = 0; mode < 2; mode++) {
                    Random rnd = new Random(r);
                    long t0 = mx.getCurrentThreadCpuTime();
                    for (int i = 0; i < n; i++) {
                        long off = (long) rnd.nextInt((int) (region / bs)) * bs;
                        if (mode == 0) {
                            buf.clear();
                            d.write(off, buf, 0);
                        } else {
                            for (int k = 0; k < bs / 512; k++) {
                                buf.limit(k * 512 + 512).position(k * 512);
                                d.write(off + k * 512, buf, 0);
                            }
                        }
                    }
                    if (r > 0) {
                        t[mode][r - 1] = (mx.getCurrentThreadCpuTime() - t0) / 1e3 / n;
                    }
                }
            }
            Arrays.sort(t[0]);
            Arrays.sort(t[1]);
            double one = t[0][rounds / 2];
            double per = t[1][rounds / 2];
            System.out.printf(Locale.ROOT, "| %s | %.3f | %.3f | %.3f |%n", bs / 1024 + " KiB", one, per, per - one);
        }
        d.close();
    }
}
