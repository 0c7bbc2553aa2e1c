package dev.strata.cache.writeboost.internal.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.cache.writeboost.internal.testing.MemDevice;
import dev.strata.testsupport.target.SuspendedGateDevice;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The device below the backing device is suspended ({@code dev:suspend}): a writeback batch's
 * backing writes wait at its closed gate, which has no timeout here. A cancelled
 * {@code writebackAll} (Ctrl-C) or a suspend of the cache gives the batch up: its runs at the gate
 * are interrupted, nothing counts as written back, and after the gate opens a writeback writes
 * every block back. Without that, the runs (and a suspend with them) waited until the gate opened
 * (the real gate's timeout: about two minutes); here the tests' 60 s caps report it. No bound
 * below is a claim about speed.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class WritebackAtSuspendedGateTest {
    static final int MIB = 1 << 20;
    static final int WRITES = 600;
    final MemDevice backingMem = new MemDevice("backing", 16L * MIB);
    final SuspendedGateDevice backing = new SuspendedGateDevice("below", backingMem);
    final ExecutorService pool = Executors.newCachedThreadPool();
    final Tunables tunables = Tunables.DEFAULTS.with(Tunables.SEQUENTIAL_CUTOFF, "0")
            .with(Tunables.WRITEBACK_THRESHOLD, "0");
    WriteboostCache wb;

    /** The gate opens before the cache closes: a failed test must not leave a batch hanging. */
    @AfterEach
    void end() throws IOException {
        backing.open();
        try {
            if (wb != null) {
                wb.close();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    static void await(BooleanSupplier c, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!c.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting for " + what);
            Thread.onSpinWait();
        }
    }

    static long block(long i) {
        return i * 37 % 4096; // scattered: nothing merges, a batch is many backing writes
    }

    /** Dirty blocks, flushed to the cache device; returns how many. */
    long dirty(boolean daemon) throws IOException {
        wb = WriteboostCache.open("wb", backing, new MemDevice("cache", 65L * MIB), false, tunables,
                WriteboostCache.Options.defaults().manual().withBackgroundWriteback(daemon), null);
        for (long i = 0; i < WRITES; i++) {
            wb.write(block(i) * 4096, ByteBuffer.allocate(4096).putLong(0, block(i) + 1), 0);
        }
        wb.flush();
        long d = wb.dirtyBlocks();
        assertTrue(d > 0);
        return d;
    }

    /** Nothing counted as written back, nothing reached the backing device, no error recorded. */
    void stillDirty(long before) throws IOException {
        assertEquals(before, wb.dirtyBlocks(), "a block of the given-up batch was counted as written back");
        assertEquals("", wb.status().get("writeback_error"), "a cancelled batch is not a failing writeback");
        ByteBuffer r = ByteBuffer.allocate(4096);
        for (long i = 0; i < WRITES; i++) {
            r.clear();
            backingMem.read(block(i) * 4096, r);
            assertEquals(0, r.getLong(0), "block " + block(i) + " passed the closed gate");
        }
    }

    /** After the gate opens, a writeback writes every block back, with its data. */
    void resumedWritebackWritesEverything() throws Exception {
        backing.open();
        wb.writebackAll((d, w) -> { });
        assertEquals(0, wb.dirtyBlocks());
        ByteBuffer r = ByteBuffer.allocate(4096);
        for (long i = 0; i < WRITES; i++) {
            r.clear();
            backingMem.read(block(i) * 4096, r);
            assertEquals(block(i) + 1, r.getLong(0), "block " + block(i) + " on the backing device");
            r.clear();
            wb.read(block(i) * 4096, r);
            assertEquals(block(i) + 1, r.getLong(0), "block " + block(i) + " through the cache");
        }
    }

    /**
     * The cancel returns at once (it does not wait for the daemon's batch); the daemon's batch,
     * abandoned, now also interrupts its runs at the gate, instead of leaving them there for the
     * gate's timeout with every later suspend, detach or switch waiting behind them.
     */
    @Test
    void ctrlCOfAWritebackGivesUpTheDaemonsRunsAtAClosedGateBelow() throws Exception {
        long before = dirty(true);
        backing.closeGate();
        AtomicReference<Thread> caller = new AtomicReference<>();
        Future<?> run = pool.submit(() -> {
            caller.set(Thread.currentThread());
            wb.writebackAll((d, w) -> { });
            return null;
        });
        await(() -> backing.waiting() == 4, "the daemon's batch at the closed gate");
        caller.get().interrupt(); // Ctrl-C
        java.util.concurrent.ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(
                java.util.concurrent.ExecutionException.class, () -> run.get(60, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof InterruptedException, "cancelled: " + e.getCause());
        await(() -> backing.waiting() == 0, "the abandoned batch's runs to leave the gate");
        stillDirty(before);
        resumedWritebackWritesEverything();
    }

    /** No writeback daemon: the batch runs in the caller's thread, whose interrupt ends it. */
    @Test
    void ctrlCOfAWritebackRunInTheCallersThreadEndsIt() throws Exception {
        long before = dirty(false);
        backing.closeGate();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread caller = new Thread(() -> {
            try {
                wb.writebackAll((d, w) -> { });
            } catch (Throwable t) {
                thrown.set(t);
            }
        }, "cache-writeback");
        caller.start();
        await(() -> backing.waiting() == 4, "the batch at the closed gate");
        caller.interrupt(); // Ctrl-C
        caller.join(TimeUnit.SECONDS.toMillis(60));
        assertFalse(caller.isAlive(), "writebackAll still waits for runs at the closed gate after its interrupt");
        Throwable t = thrown.get();
        assertTrue(t instanceof InterruptedException || t instanceof InterruptedIOException, "cancelled, not failed: " + t);
        assertEquals(0, backing.waiting(), "a run of the cancelled batch still waits at the gate");
        stillDirty(before);
        resumedWritebackWritesEverything();
    }

    /**
     * A suspend (cache:switch, a replace's pause) while the daemon's batch waits at the closed gate
     * below: the batch is given up and the daemon has ended when the suspend returns. It had waited
     * 30 s, interrupted the daemon (which the batch ignored) and returned 5 s later with the daemon
     * still in the batch.
     */
    @Test
    void aSuspendGivesUpADaemonBatchStuckAtAClosedGateBelow() throws Exception {
        long before = dirty(true);
        backing.closeGate();
        wb.message("writeback", "all"); // the daemon starts a forced batch; its first runs wait
        await(() -> backing.waiting() == 4, "the daemon's batch at the closed gate");
        Future<?> suspend = pool.submit(() -> {
            wb.suspend();
            return null;
        });
        suspend.get(60, TimeUnit.SECONDS);
        assertEquals(0, backing.waiting(), "the suspend returned with the daemon's batch still at the gate");
        assertFalse(wb.runningDaemons().stream().anyMatch(n -> n.endsWith("-writeback")), wb.runningDaemons().toString());
        stillDirty(before);
        wb.resume();
        resumedWritebackWritesEverything();
    }
}
