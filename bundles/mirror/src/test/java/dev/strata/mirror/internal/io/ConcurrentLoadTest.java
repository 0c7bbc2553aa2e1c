package dev.strata.mirror.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.mirror.internal.log.DiskLog;
import dev.strata.testsupport.crash.CrashableDevice;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Four writers, each owning its own blocks, verify every read while the daemon runs with
 * {@code clear_delay=0} (marks and clears race) and a leg is failed and recovered under them
 * (resync races the writes). At the end both legs hold exactly what the writers last wrote.
 */
class ConcurrentLoadTest {
    static final int THREADS = 4;
    static final int BLOCKS_PER_THREAD = 256;
    static final int SIZE = THREADS * BLOCKS_PER_THREAD * 4096;

    /** Waits (with a deadline) until the writers have issued {@code n} writes, or finished. */
    static void awaitWrites(MirrorTarget m, long n) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (Long.parseLong(m.status().get("writes")) < n && System.nanoTime() < deadline) {
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000); // poll, bounded by the deadline
        }
    }

    @Test
    void writesReadsClearsAndResyncRaceWithoutLosingABlock() throws Exception {
        CrashableDevice a = new CrashableDevice("a", SIZE, 4096);
        CrashableDevice b = new CrashableDevice("b", SIZE, 4096);
        MirrorTarget m = MirrorTarget.open("m0", List.of("a", "b"), List.of(a, b),
                new DiskLog("log", new CrashableDevice("log", 64 * 1024, 4096)), 16 * 1024,
                MirrorTarget.Options.defaults().withNosync(true).withClearDelayNanos(0));
        byte[][] model = new byte[THREADS][BLOCKS_PER_THREAD * 4096];
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        List<Future<?>> writers = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int id = t;
            writers.add(pool.submit(() -> {
                Random r = new Random(id);
                byte[] got = new byte[4096];
                for (int i = 0; i < 3000; i++) {
                    // thread t owns every THREADS-th block, so blocks interleave across regions
                    int k = r.nextInt(BLOCKS_PER_THREAD);
                    long off = (long) (k * THREADS + id) * 4096;
                    if (r.nextInt(3) == 0) {
                        m.read(off, ByteBuffer.wrap(got));
                        assertArrayEquals(java.util.Arrays.copyOfRange(model[id], k * 4096, k * 4096 + 4096), got,
                                "block " + (k * THREADS + id));
                    } else {
                        byte[] data = new byte[4096];
                        r.nextBytes(data);
                        m.write(off, ByteBuffer.wrap(data), r.nextInt(8) == 0 ? BlockDevice.FUA : 0);
                        System.arraycopy(data, 0, model[id], k * 4096, 4096);
                    }
                    if (r.nextInt(50) == 0) {
                        m.flush();
                    }
                }
                return null;
            }));
        }
        awaitWrites(m, 2000);
        m.message("fail", "b");
        awaitWrites(m, 4000);
        assertEquals("out_of_sync", m.status().get("leg.b"));
        m.message("recover", "b");
        for (Future<?> f : writers) {
            f.get(120, TimeUnit.SECONDS);
        }
        pool.shutdown();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!"in_sync".equals(m.status().get("leg.b")) && System.nanoTime() < deadline) {
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000); // poll, bounded by the deadline
        }
        assertEquals("in_sync", m.status().get("leg.b"), m.status().toString());
        m.flush();
        m.close();
        byte[] expected = new byte[SIZE];
        for (int t = 0; t < THREADS; t++) {
            for (int k = 0; k < BLOCKS_PER_THREAD; k++) {
                System.arraycopy(model[t], k * 4096, expected, (k * THREADS + t) * 4096, 4096);
            }
        }
        assertArrayEquals(expected, a.currentImage());
        assertArrayEquals(expected, b.currentImage());
        assertTrue(Long.parseLong(m.status().get("log_commits")) > 0);
    }
}
