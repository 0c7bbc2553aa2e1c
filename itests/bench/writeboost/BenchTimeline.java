import java.util.Locale;

/**
 * Start, end and size of a device's writes (WriteboostBench, -Dbench.timeline=true), recorded by
 * any thread into arrays allocated once: tells a device left idle between writes (busy
 * fraction, writes in flight) from writes that are slower themselves (MiB/s while busy).
 */
final class BenchTimeline {
    final long[] start;
    final long[] end;
    final int[] bytes;
    final java.util.concurrent.atomic.AtomicInteger n = new java.util.concurrent.atomic.AtomicInteger();

    BenchTimeline(int cap) {
        start = new long[cap];
        end = new long[cap];
        bytes = new int[cap];
    }

    void add(long t0, long t1, int len) {
        int i = n.getAndIncrement();
        if (i < start.length) {
            start[i] = t0;
            end[i] = t1;
            bytes[i] = len;
        }
    }

    /** One line: writes, mean size, busy fraction of [first start, last end], mean in flight, MiB/s per write and while busy. */
    String summary(long from, long to) {
        int k = Math.min(n.get(), start.length);
        if (k == 0) {
            return "no writes";
        }
        Integer[] o = new Integer[k];
        for (int i = 0; i < k; i++) {
            o[i] = i;
        }
        java.util.Arrays.sort(o, (x, y) -> Long.compare(start[x], start[y]));
        long busy = 0;
        long sumDur = 0;
        long sumBytes = 0;
        long curS = -1;
        long curE = -1;
        long[] durs = new long[k];
        for (int j = 0; j < k; j++) {
            int i = o[j];
            sumDur += end[i] - start[i];
            durs[j] = end[i] - start[i];
            sumBytes += bytes[i];
            if (start[i] > curE) {
                busy += curE - curS;
                curS = start[i];
                curE = end[i];
            } else {
                curE = Math.max(curE, end[i]);
            }
        }
        busy += curE - curS;
        java.util.Arrays.sort(durs);
        double span = to - from;
        return String.format(Locale.ROOT,
                "%d writes, mean %.0f KiB, busy %.2f, in flight %.2f (while busy %.2f), per write %.0f MiB/s, while busy %.0f MiB/s, write ms p50 %.2f p99 %.2f max %.1f",
                k, sumBytes / 1024.0 / k, busy / span, sumDur / span, sumDur / (double) busy,
                sumBytes / (sumDur / 1e9) / (1 << 20), sumBytes / (busy / 1e9) / (1 << 20),
                durs[k / 2] / 1e6, durs[(int) (k * 0.99)] / 1e6, durs[k - 1] / 1e6);
    }
}

