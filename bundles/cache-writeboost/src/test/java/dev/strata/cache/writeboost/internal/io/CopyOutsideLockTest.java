package dev.strata.cache.writeboost.internal.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.cache.writeboost.internal.testing.MemDevice;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Full-block writes copy their data into the log buffer after releasing the cache's lock. A
 * reader, a partial write, the flusher and a reopen must never see a slot whose copy is still in
 * flight: every block read back is one that some write wrote whole (every word the same stamp),
 * and after a flush and a reopen each block holds its last write.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CopyOutsideLockTest {
    static final int MIB = 1 << 20;
    static final int WRITERS = 4;
    static final int BLOCKS_EACH = 32;
    static final int ROUNDS = 300;

    static void fill(ByteBuffer b, long stamp) {
        for (int i = 0; i < b.capacity(); i += 8) {
            b.putLong(i, stamp);
        }
    }

    /** The stamp a block holds, or fails if its words differ (a torn or half-copied block). */
    static long stampOf(ByteBuffer b, int base, String what) {
        long s = b.getLong(base);
        for (int i = 8; i < 4096; i += 8) {
            if (b.getLong(base + i) != s) {
                throw new AssertionError(what + ": block mixes stamps " + s + " and " + b.getLong(base + i) + " at byte " + i);
            }
        }
        return s;
    }

    @Test
    void concurrentReadersNeverSeeAHalfCopiedBlock() throws Exception {
        MemDevice backing = new MemDevice("backing", 64L * MIB);
        MemDevice cacheDev = new MemDevice("cache", 33L * MIB);
        Tunables t = Tunables.DEFAULTS.with(Tunables.SEQUENTIAL_CUTOFF, "0").with(Tunables.WRITEBACK_THRESHOLD, "0");
        WriteboostCache wb = WriteboostCache.open("wb", backing, cacheDev, false, t,
                WriteboostCache.Options.defaults().manual(), null);
        ExecutorService pool = Executors.newFixedThreadPool(WRITERS + 2);
        AtomicBoolean done = new AtomicBoolean();
        long[][] last = new long[WRITERS][BLOCKS_EACH];
        try {
            List<Future<?>> writers = new ArrayList<>();
            for (int w = 0; w < WRITERS; w++) {
                int id = w;
                writers.add(pool.submit(() -> {
                    // two blocks per request (one copy run), writer id's blocks interleaved with the others'
                    ByteBuffer two = ByteBuffer.allocate(8192);
                    for (int r = 1; r <= ROUNDS; r++) {
                        for (int k = 0; k < BLOCKS_EACH; k += 2) {
                            long stamp = ((long) id << 32) | ((long) r << 8) | k;
                            fill(two, stamp);
                            wb.write(blockOf(id, k) * 4096, two.clear(), 0);
                            last[id][k] = stamp;
                            last[id][k + 1] = stamp;
                        }
                    }
                    return null;
                }));
            }
            List<Future<?>> readers = new ArrayList<>();
            for (int rd = 0; rd < 2; rd++) {
                int partial = rd;
                readers.add(pool.submit(() -> {
                    ByteBuffer all = ByteBuffer.allocate(WRITERS * BLOCKS_EACH * 4096);
                    ByteBuffer sector = ByteBuffer.allocate(512);
                    while (!done.get()) {
                        if (partial == 0) {
                            wb.read(0, all.clear());
                            for (int i = 0; i < WRITERS * BLOCKS_EACH; i++) {
                                stampOf(all, i * 4096, "block " + i);
                            }
                        } else {
                            // partial writes into the same blocks merge with the buffered copy
                            long b = WRITERS * BLOCKS_EACH + (System.nanoTime() & 7);
                            wb.write(b * 4096, sector.clear(), 0);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : writers) {
                f.get(100, TimeUnit.SECONDS);
            }
            done.set(true);
            for (Future<?> f : readers) {
                f.get(30, TimeUnit.SECONDS);
            }
            wb.flush();
        } finally {
            done.set(true);
            pool.shutdownNow();
            wb.close();
        }
        WriteboostCache again = WriteboostCache.open("wb", backing, cacheDev, false, t,
                WriteboostCache.Options.defaults().manual(), null);
        try {
            assertTrue(again.recovered().dirtyRecords() > 0);
            ByteBuffer got = ByteBuffer.allocate(4096);
            for (int w = 0; w < WRITERS; w++) {
                for (int k = 0; k < BLOCKS_EACH; k++) {
                    again.read(blockOf(w, k) * 4096, got.clear());
                    assertEquals(last[w][k], stampOf(got, 0, "recovered block"), "writer " + w + " block " + k);
                }
            }
        } finally {
            again.close();
        }
    }

    /**
     * The race made certain: the writer stops between its reservation and its copy; a read of
     * the block must wait for the copy (copyWaits moves) and then return the new data, never the
     * slot's old contents.
     */
    @Test
    void aReadOfABlockBeingCopiedWaitsForTheCopy() throws Exception {
        MemDevice backing = new MemDevice("backing", 64L * MIB);
        MemDevice cacheDev = new MemDevice("cache", 17L * MIB);
        WriteboostCache wb = WriteboostCache.open("wb", backing, cacheDev, false,
                Tunables.DEFAULTS.with(Tunables.SEQUENTIAL_CUTOFF, "0"), WriteboostCache.Options.defaults().manual(), null);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        java.util.concurrent.CountDownLatch reserved = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        try {
            ByteBuffer first = ByteBuffer.allocate(4096);
            fill(first, 1);
            wb.write(0, first, 0);
            wb.flush(); // block 0 no longer in the open record
            wb.beforeCopy(() -> {
                reserved.countDown();
                try {
                    go.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            ByteBuffer second = ByteBuffer.allocate(4096);
            fill(second, 2);
            Future<?> writer = pool.submit(() -> {
                wb.write(0, second, 0);
                return null;
            });
            assertTrue(reserved.await(60, TimeUnit.SECONDS));
            wb.beforeCopy(null);
            long waitsBefore = wb.copyWaits();
            ByteBuffer got = ByteBuffer.allocate(4096);
            Future<?> reader = pool.submit(() -> {
                wb.read(0, got);
                return null;
            });
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!reader.isDone() && wb.copyWaits() == waitsBefore) {
                assertTrue(System.nanoTime() < deadline, "the reader neither finished nor waited");
                Thread.onSpinWait();
            }
            go.countDown();
            reader.get(60, TimeUnit.SECONDS);
            writer.get(60, TimeUnit.SECONDS);
            assertEquals(2, stampOf(got, 0, "block 0"), "the read returned the slot before the copy");
        } finally {
            go.countDown();
            pool.shutdownNow();
            wb.close();
        }
    }

    static long blockOf(int writer, int k) {
        return (long) (k / 2) * WRITERS * 2 + writer * 2 + (k % 2);
    }
}
