package dev.strata.cache.writeboost.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.cache.writeboost.internal.testing.MemDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Prompt stop (issue 9): suspend/close abandon a writeback batch in flight instead of finishing
 * it, so they take one backing write, not a whole batch of them, whatever the backing device's
 * speed; every flushed block is still there after a reopen.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PromptStopTest {
    static final int MIB = 1 << 20;
    static final int BLOCKS = 1500;

    /** A backing device whose writes each wait for a permit while the gate is closed (a slow disk at the test's pace). */
    static final class GatedDevice implements BlockDevice {
        final MemDevice inner;
        volatile boolean gated;
        final Semaphore permits = new Semaphore(0);
        final AtomicInteger waiting = new AtomicInteger();
        final AtomicInteger issued = new AtomicInteger();

        GatedDevice(MemDevice inner) {
            this.inner = inner;
        }

        @Override
        public long size() {
            return inner.size();
        }

        @Override
        public int blockSize() {
            return inner.blockSize();
        }

        @Override
        public void read(long offset, ByteBuffer dst) throws IOException {
            inner.read(offset, dst);
        }

        @Override
        public void write(long offset, ByteBuffer src, int flags) throws IOException {
            if (gated) {
                issued.incrementAndGet();
                waiting.incrementAndGet();
                try {
                    permits.acquire();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted");
                } finally {
                    waiting.decrementAndGet();
                }
            }
            inner.write(offset, src, flags);
        }

        @Override
        public void flush() throws IOException {
            inner.flush();
        }

        @Override
        public void discard(long offset, long length) throws IOException {
            inner.discard(offset, length);
        }

        @Override
        public void writeZeroes(long offset, long length, int flags) throws IOException {
            inner.writeZeroes(offset, length, flags);
        }

        @Override
        public void close() {
        }
    }

    static void await(BooleanSupplier c, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!c.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting for " + what);
            Thread.onSpinWait();
        }
    }

    static ByteBuffer block(long b) {
        ByteBuffer buf = ByteBuffer.allocate(4096);
        for (int i = 0; i < 4096; i += 8) {
            buf.putLong(i, b * 1_000_003L + i);
        }
        return buf;
    }

    @Test
    void closeAbandonsTheWritebackBatchInFlightAndLosesNothingFlushed() throws Exception {
        MemDevice backingMem = new MemDevice("backing", 64L * MIB);
        MemDevice cacheDev = new MemDevice("cache", 33L * MIB);
        GatedDevice backing = new GatedDevice(backingMem);
        Tunables t = Tunables.DEFAULTS.with(Tunables.SEQUENTIAL_CUTOFF, "0").with(Tunables.WRITEBACK_THRESHOLD, "0");
        WriteboostCache wb = WriteboostCache.open("wb", backing, cacheDev, false, t,
                WriteboostCache.Options.defaults().manual().withBackgroundWriteback(true), null);
        // every other block: nothing merges, so a batch is many backing writes
        for (long b = 0; b < BLOCKS; b++) {
            wb.write(b * 2 * 4096, block(b * 2), 0);
        }
        wb.flush();
        backing.gated = true;
        wb.message("writeback", "all"); // the writeback daemon starts a batch; its first runs wait
        int inFlight = dev.strata.cache.support.writeback.WritebackBatcher.IN_FLIGHT;
        await(() -> backing.waiting.get() == inFlight, "the first backing writes of the batch");
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<?> close = pool.submit(() -> {
                wb.close();
                return null;
            });
            await(wb::writebackStopRequested, "close to stop the daemons");
            int issuedAtStop = backing.issued.get();
            backing.permits.release(inFlight); // the writes in flight complete; nothing more may be issued
            close.get(60, TimeUnit.SECONDS);
            assertEquals(issuedAtStop, backing.issued.get(), "close waited for more of the batch than the writes in flight");
            assertTrue(issuedAtStop < BLOCKS / 2, issuedAtStop + " writes of the batch before close stopped it");
        } finally {
            backing.gated = false;
            backing.permits.release(1000);
            pool.shutdownNow();
        }
        // reopen: every flushed block is there (the abandoned batch's blocks are still dirty in the log)
        WriteboostCache again = WriteboostCache.open("wb", backingMem, cacheDev, false, t,
                WriteboostCache.Options.defaults().manual(), null);
        try {
            assertTrue(again.dirtyBlocks() > 0, "the abandoned batch counted as written back");
            for (long b = 0; b < BLOCKS; b++) {
                ByteBuffer got = ByteBuffer.allocate(4096);
                again.read(b * 2 * 4096, got);
                assertArrayEquals(block(b * 2).array(), got.array(), "block " + b * 2);
            }
            again.writebackAll();
            assertEquals(0, again.dirtyBlocks());
        } finally {
            again.close();
        }
        for (long b = 0; b < BLOCKS; b++) {
            ByteBuffer got = ByteBuffer.allocate(4096);
            backingMem.read(b * 2 * 4096, got);
            assertArrayEquals(block(b * 2).array(), got.array(), "written back block " + b * 2);
        }
    }
}
