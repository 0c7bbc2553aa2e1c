package dev.strata.cache.writeboost.internal.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.cache.writeboost.internal.testing.MemDevice;
import dev.strata.testsupport.target.ForwardingBlockDevice;
import dev.strata.testsupport.target.GatedDevice;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A cancelled {@code writebackAll} (Ctrl-C of {@code cache:writeback}, {@code cache:mode … writearound},
 * {@code cache:detach}) while the writeback daemon has decided on a forced batch but not collected
 * it yet: the cancel's report ("N still dirty") must stay true, so that batch must not go back
 * after it. Seen as DetachCommandTest.aCancelCountsTheBatchInFlight failing once on a loaded
 * machine (the gate opened before the cancelled thread withdrew the force, the daemon began one
 * more batch, and the cancel found no batch in flight).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class WritebackCancelTest {
    static final int MIB = 1 << 20;

    @Test
    void aForcedBatchNotYetCollectedWhenTheCancelReportsDoesNotGoBackAfterIt() throws Exception {
        Tunables t = Tunables.DEFAULTS.with(Tunables.SEQUENTIAL_CUTOFF, "0").with(Tunables.WRITEBACK_THRESHOLD, "0")
                .with(Tunables.NR_MAX_BATCHED_WRITEBACK, "1");
        WriteboostCache wb = WriteboostCache.open("wb", new MemDevice("backing", 16L * MIB),
                new MemDevice("cache", 65L * MIB), false, t,
                WriteboostCache.Options.defaults().manual().withBackgroundWriteback(true), null);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            for (long i = 0; i < 600; i++) {
                long b = i * 37 % 4096; // scattered: nothing merges
                wb.write(b * 4096, ByteBuffer.allocate(4096).putLong(0, b + 1), 0);
            }
            wb.flush();
            long before = wb.dirtyBlocks();
            assertTrue(before > 0);
            CountDownLatch decided = new CountDownLatch(1);
            CountDownLatch go = new CountDownLatch(1);
            AtomicInteger passes = new AtomicInteger();
            wb.beforeCollect(urgent -> {
                if (urgent && decided.getCount() > 0) {
                    decided.countDown(); // the daemon has taken the force as urgency
                    awaitQuietly(go);
                } else if (decided.getCount() == 0) {
                    passes.incrementAndGet(); // a later pass: the held one has ended
                }
            });
            AtomicReference<Thread> caller = new AtomicReference<>();
            AtomicLong reported = new AtomicLong(-1);
            Future<?> run = pool.submit(() -> {
                caller.set(Thread.currentThread());
                wb.writebackAll((dirty, writtenBack) -> reported.set(dirty));
                return null;
            });
            assertTrue(decided.await(60, TimeUnit.SECONDS), "the daemon decided on a forced batch");
            caller.get().interrupt(); // the cancel: its report comes while that batch is not collected
            ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                    () -> run.get(60, TimeUnit.SECONDS));
            assertInstanceOf(InterruptedException.class, e.getCause());
            assertEquals(before, reported.get(), "nothing went back before the cancel reported");
            go.countDown();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (passes.get() == 0) { // the daemon's next pass: the held batch decision has run its course
                assertTrue(System.nanoTime() < deadline, "timed out waiting for the daemon's next pass");
                Thread.onSpinWait();
            }
            wb.beforeCollect(null);
            assertEquals(reported.get(), wb.dirtyBlocks(), "still dirty as the cancel reported");
        } finally {
            pool.shutdownNow();
            wb.close();
        }
    }

    /**
     * Ctrl-C while the forced batch's backing writes are held (a slow disk): the cancel returns
     * without waiting for them (it used to wait for the whole batch, up to io_timeout_ms) and
     * reports nothing written back; the batch is abandoned and interrupts its held writes; its
     * blocks stay dirty, a later writeback counts each block once, and a reopen (recovery) finds
     * exactly the blocks the cancel reported dirty.
     */
    @Test
    void aCancelReturnsWhileTheBatchIsHeldAndTheBatchStaysDirty() throws Exception {
        Tunables t = Tunables.DEFAULTS.with(Tunables.SEQUENTIAL_CUTOFF, "0").with(Tunables.WRITEBACK_THRESHOLD, "0");
        MemDevice backingMem = new MemDevice("backing", 16L * MIB);
        MemDevice cacheMem = new MemDevice("cache", 65L * MIB);
        GatedDevice backing = new GatedDevice(backingMem);
        WriteboostCache wb = WriteboostCache.open("wb", backing, cacheMem, false, t,
                WriteboostCache.Options.defaults().manual().withBackgroundWriteback(true), null);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        long before;
        long firstRound = -1;
        try {
            for (long i = 0; i < 600; i++) {
                long b = i * 37 % 4096; // scattered: nothing merges, a batch is many backing writes
                wb.write(b * 4096, ByteBuffer.allocate(4096).putLong(0, b + 1), 0);
            }
            wb.flush();
            before = wb.dirtyBlocks();
            assertTrue(before > 0);
            backing.hold();
            AtomicReference<Thread> caller = new AtomicReference<>();
            AtomicLong reportedDirty = new AtomicLong(-1);
            AtomicLong reportedWritten = new AtomicLong(-1);
            Future<?> run = pool.submit(() -> {
                caller.set(Thread.currentThread());
                wb.writebackAll((dirty, writtenBack) -> {
                    reportedDirty.set(dirty);
                    reportedWritten.set(writtenBack);
                });
                return null;
            });
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (backing.waiting() == 0) { // the daemon's batch is in flight, held at the gate
                assertTrue(System.nanoTime() < deadline, "timed out waiting for the batch's backing writes");
                Thread.onSpinWait();
            }
            caller.get().interrupt(); // Ctrl-C
            ExecutionException e = assertThrows(ExecutionException.class, () -> run.get(60, TimeUnit.SECONDS));
            assertInstanceOf(InterruptedException.class, e.getCause());
            // the abandoned batch gives up its held writes too (it interrupts them), rather than
            // leaving them at the gate until it opens
            deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (backing.waiting() > 0) {
                assertTrue(System.nanoTime() < deadline, "timed out waiting for the abandoned batch's writes to give up");
                Thread.onSpinWait();
            }
            assertEquals(before, reportedDirty.get(), "the held batch is reported still dirty");
            assertEquals(0, reportedWritten.get(), "nothing abandoned counts as written back");
            assertEquals(before, wb.dirtyBlocks());
            backing.release();
            // a writeback after the cancel: it starts once the abandoned batch has ended (one
            // writeback thread) and writes back every block, each counted once
            AtomicLong written = new AtomicLong(-1);
            wb.writebackAll((dirty, writtenBack) -> written.set(writtenBack));
            assertEquals(0, wb.dirtyBlocks());
            assertEquals(before, written.get(), "every block written back once, after the cancel");
            firstRound = before;
            checkData(backingMem);
            // dirty again, cancel held, close: the recovered log holds exactly what was reported dirty
            for (long i = 0; i < 600; i++) {
                long b = i * 37 % 4096;
                wb.write(b * 4096, ByteBuffer.allocate(4096).putLong(0, b + 2), 0);
            }
            wb.flush();
            before = wb.dirtyBlocks();
            backing.hold();
            Future<?> again = pool.submit(() -> {
                caller.set(Thread.currentThread());
                wb.writebackAll((dirty, writtenBack) -> reportedDirty.set(dirty));
                return null;
            });
            deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (backing.waiting() == 0) {
                assertTrue(System.nanoTime() < deadline, "timed out waiting for the batch's backing writes");
                Thread.onSpinWait();
            }
            caller.get().interrupt();
            assertInstanceOf(InterruptedException.class,
                    assertThrows(ExecutionException.class, () -> again.get(60, TimeUnit.SECONDS)).getCause());
            assertEquals(before, reportedDirty.get());
            backing.release();
        } finally {
            backing.release();
            pool.shutdownNow();
            wb.close();
        }
        // read after close: the daemon counts a batch after it has signalled its completion, so
        // only once it has stopped is the counter final. Neither abandoned batch is in it.
        assertEquals(Long.toString(firstRound), wb.status().get("written_back_blocks"),
                "the abandoned batches were not counted");
        WriteboostCache reopened = WriteboostCache.open("wb", backingMem, cacheMem, false, t,
                WriteboostCache.Options.defaults().manual(), null);
        try {
            assertEquals(before, reopened.dirtyBlocks(), "recovery finds the abandoned batch dirty, as reported");
            for (long i = 0; i < 600; i++) {
                long b = i * 37 % 4096;
                ByteBuffer r = ByteBuffer.allocate(4096);
                reopened.read(b * 4096, r);
                assertEquals(b + 2, r.getLong(0), "block " + b + " through the cache");
            }
            reopened.writebackAll((d, w) -> { });
            assertEquals(0, reopened.dirtyBlocks());
        } finally {
            reopened.close();
        }
        ByteBuffer r = ByteBuffer.allocate(4096);
        for (long i = 0; i < 600; i++) {
            long b = i * 37 % 4096;
            r.clear();
            backingMem.read(b * 4096, r);
            assertEquals(b + 2, r.getLong(0), "block " + b + " on the backing device");
        }
    }

    private static void checkData(MemDevice backing) throws IOException {
        ByteBuffer r = ByteBuffer.allocate(4096);
        for (long i = 0; i < 600; i++) {
            long b = i * 37 % 4096;
            r.clear();
            backing.read(b * 4096, r);
            assertEquals(b + 1, r.getLong(0), "block " + b + " on the backing device");
        }
    }

    /**
     * A backing device whose writes, while {@code interrupting} is set, interrupt that thread (the
     * command's, as Ctrl-C does; the batch's writes run in the batcher's threads) and fail as an
     * interrupted write does (InterruptedIOException).
     */
    static final class InterruptingDevice extends ForwardingBlockDevice {
        volatile Thread interrupting;
        volatile boolean failing;

        InterruptingDevice(MemDevice inner) {
            super(inner);
        }

        @Override
        public void write(long offset, ByteBuffer src, int flags) throws IOException {
            Thread ctrlC = interrupting;
            if (ctrlC != null) {
                ctrlC.interrupt();
                throw new InterruptedIOException("write at " + offset + " interrupted");
            }
            if (failing) {
                throw new IOException("media error at " + offset);
            }
            super.write(offset, src, flags);
        }
    }

    @Test
    void aBatchCancelledInItsIoIsNotAWritebackError() throws Exception {
        // no writeback daemon (as when it is not running): the batch runs in the caller's thread,
        // and Ctrl-C lands in its backing write
        InterruptingDevice backing = new InterruptingDevice(new MemDevice("backing", 16L * MIB));
        Tunables t = Tunables.DEFAULTS.with(Tunables.SEQUENTIAL_CUTOFF, "0").with(Tunables.WRITEBACK_THRESHOLD, "0");
        WriteboostCache wb = WriteboostCache.open("wb", backing, new MemDevice("cache", 65L * MIB), false, t,
                WriteboostCache.Options.defaults().manual(), null);
        try {
            for (long b = 0; b < 300; b++) {
                wb.write(b * 2 * 4096, ByteBuffer.allocate(4096).putLong(0, b + 1), 0);
            }
            wb.flush();
            long dirty = wb.dirtyBlocks();
            backing.interrupting = Thread.currentThread();
            assertThrows(InterruptedIOException.class, () -> wb.writebackAll((d, w) -> { }));
            assertTrue(Thread.interrupted(), "the interrupt is kept");
            backing.interrupting = null;
            assertEquals("", wb.status().get("writeback_error"), "a cancel is not a failing writeback");
            assertEquals(dirty, wb.dirtyBlocks(), "the batch stays dirty");
            backing.failing = true; // a real error still counts
            assertThrows(IOException.class, () -> wb.writebackAll((d, w) -> { }));
            assertFalse(Thread.interrupted());
            assertTrue(wb.status().get("writeback_error").contains("media error"), wb.status().toString());
        } finally {
            wb.close();
        }
    }

    private static void awaitQuietly(CountDownLatch l) {
        try {
            l.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
