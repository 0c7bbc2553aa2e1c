package dev.strata.cache.writecache.internal.io;

import dev.strata.cache.support.stats.BusyMeter;
import dev.strata.cache.support.stats.Counters;
import dev.strata.cache.support.stats.LatencyRecorder;
import dev.strata.cache.support.time.Clock;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Locale;
import java.util.concurrent.locks.StampedLock;

/**
 * Performance 1's floor, part by part (not a test): what each piece of an in-place write's
 * per-request bookkeeping costs alone, as the writing threads' CPU ns per operation, with one
 * thread and with as many as the seed table's writers. In writecache's package so that it can
 * drive the in-flight registry as the write path does (with a data write that does nothing).
 * HdrHistogram's {@code ConcurrentHistogram} is the latency recorder before the striped one, for
 * comparison within one run.
 */
public final class Bookkeeping {
    private Bookkeeping() {
    }

    interface Op {
        void run() throws Exception;
    }

    /** Thread CPU ns per op of {@code threads} threads running {@code op} {@code n} times each (after one unmeasured pass). */
    static double time(int threads, long n, Op op) throws Exception {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        double result = 0;
        for (int pass = 0; pass < 2; pass++) {
            long[] cpu = new long[1];
            Exception[] failure = new Exception[1];
            Thread[] ts = new Thread[threads];
            for (int t = 0; t < threads; t++) {
                ts[t] = new Thread(() -> {
                    try {
                        long c0 = mx.getCurrentThreadCpuTime();
                        for (long i = 0; i < n; i++) {
                            op.run();
                        }
                        long c = mx.getCurrentThreadCpuTime() - c0;
                        synchronized (cpu) {
                            cpu[0] += c;
                        }
                    } catch (Exception e) {
                        synchronized (cpu) {
                            failure[0] = e;
                        }
                    }
                });
                ts[t].start();
            }
            for (Thread t : ts) {
                t.join();
            }
            if (failure[0] != null) {
                throw failure[0];
            }
            result = cpu[0] / (double) (n * threads);
        }
        return result;
    }

    public static void run(boolean quick, int threads) throws Exception {
        long n = quick ? 1_000_000 : 3_000_000;
        Clock clock = Clock.SYSTEM;
        LatencyRecorder striped = new LatencyRecorder("write", clock);
        org.HdrHistogram.ConcurrentHistogram shared = new org.HdrHistogram.ConcurrentHistogram(3_600_000_000L, 2);
        BusyMeter busy = new BusyMeter(clock);
        Counters.Counter counter = new Counters().counter("writes");
        StampedLock gate = new StampedLock();
        InFlight inFlight = new InFlight();
        InFlight.Body nothing = e -> {
        };
        String[] names = {"clock read (System.nanoTime)", "latency record, striped (LatencyRecorder)",
            "latency record, one ConcurrentHistogram (before)", "BusyMeter.op(now)", "counter add (LongAdder)",
            "gate: read lock + unlock (StampedLock)", "in-flight registry: take, register, await (runs it), release"};
        Op[] ops = {clock::nanoTime, () -> striped.recordMicros(3), () -> shared.recordValue(3), () -> busy.op(12345),
            () -> counter.add(8), () -> gate.unlockRead(gate.readLock()), () -> {
                InFlight.Entry e = inFlight.take(nothing);
                e.addPiece(1, 1, 1, 0);
                inFlight.register(e, 1, 1);
                inFlight.await(e);
                inFlight.release(e);
            }};
        System.out.printf(Locale.ROOT, "%n## Performance 1's floor, part by part (thread CPU ns per operation, %,d operations per thread)%n%n", n);
        System.out.printf(Locale.ROOT, "| piece | 1 thread ns/op | %d threads ns/op |%n|---|---:|---:|%n", threads);
        for (int i = 0; i < ops.length; i++) {
            double one = time(1, n, ops[i]);
            double many = time(threads, n / 4, ops[i]);
            System.out.printf(Locale.ROOT, "| %s | %.1f | %.1f |%n", names[i], one, many);
        }
    }
}
