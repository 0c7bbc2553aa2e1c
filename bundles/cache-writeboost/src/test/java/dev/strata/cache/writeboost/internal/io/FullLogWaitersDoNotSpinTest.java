package dev.strata.cache.writeboost.internal.io;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.cache.writeboost.internal.testing.MemDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Writers waiting for writeback to free log space (a full log) must sleep until something
 * changes. Each of them used to signal the cache's condition every time it woke up, which woke
 * the other waiting writers (and every daemon), which signalled again: two waiting writers kept
 * each other — and all the daemons — spinning on a shared machine for as long as the log stayed
 * full, competing with the writeback they were waiting for. Here writeback does not run at all,
 * so the writers wait until io_timeout_ms; the number of signals meanwhile must not depend on
 * how long that is.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FullLogWaitersDoNotSpinTest {
    static final int MIB = 1 << 20;

    @Test
    void writersWaitingForAFullLogDoNotWakeEachOther() throws Exception {
        MemDevice backing = new MemDevice("backing", 64L * MIB);
        MemDevice cacheDev = new MemDevice("cache", 17L * MIB); // 16 segments
        Tunables t = Tunables.DEFAULTS.with(Tunables.SEQUENTIAL_CUTOFF, "0").with(Tunables.IO_TIMEOUT, "3000");
        WriteboostCache wb = WriteboostCache.open("wb", backing, cacheDev, false, t,
                WriteboostCache.Options.defaults().manual(), null);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            // fill the log with dirty blocks (nothing writes them back): the next writes wait
            ByteBuffer block = ByteBuffer.allocate(4096);
            long b = 0;
            while (true) {
                if (wb.reclaimWaiters() > 0) {
                    break; // (not reached: a write that waits does not return)
                }
                try {
                    wb.write(b * 4096, block.clear(), 0);
                } catch (IOException e) {
                    break; // the log is full: this write waited until io_timeout_ms
                }
                b++;
            }
            long first = b + 1;
            Future<?>[] writers = new Future<?>[2];
            for (int i = 0; i < 2; i++) {
                long at = (first + i) * 4096;
                writers[i] = pool.submit(() -> {
                    wb.write(at, ByteBuffer.allocate(4096), 0);
                    return null;
                });
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (wb.reclaimWaiters() < 2 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            long before = wb.events();
            for (Future<?> w : writers) {
                ExecutionException e = assertThrows(ExecutionException.class, () -> w.get(60, TimeUnit.SECONDS));
                assertTrue(e.getCause() instanceof IOException, e.getCause().toString());
            }
            long signals = wb.events() - before;
            assertTrue(signals < 50, signals + " signals while two writers waited for a full log that nothing changed");
        } finally {
            pool.shutdownNow();
            wb.close();
        }
    }
}
