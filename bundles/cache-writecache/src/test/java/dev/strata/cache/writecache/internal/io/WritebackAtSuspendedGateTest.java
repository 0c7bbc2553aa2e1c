package dev.strata.cache.writecache.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.cache.writecache.internal.recovery.Recovery;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.target.SuspendedGateDevice;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.ExecutionException;
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
 * backing writes wait at its closed gate, which has no timeout here. An interrupt of the thread
 * waiting for the batch ({@code cache:writeback}'s Ctrl-C, a detach or switch cancelled), of a
 * thread queued behind it, or a suspend of the cache ends the wait: the runs at the gate are
 * interrupted, the batch frees nothing and its blocks stay dirty, and after the resume a writeback
 * writes every one of them back. Without that, each of these waited until the gate opened (the
 * real gate's timeout: about two minutes); here the tests' 60 s caps report it. No bound below is
 * a claim about speed.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class WritebackAtSuspendedGateTest {
    static final int BS = 4096;
    static final int SLOTS = 64;
    static final int BLOCKS = 16;
    final CrashableDevice backingDisk = new CrashableDevice("backing", 4 << 20, 4096);
    final CrashableDevice cacheDisk = new CrashableDevice("cache", WritecacheSubject.cacheBytes(SLOTS, BS), 4096);
    final SuspendedGateDevice backing = new SuspendedGateDevice("below", backingDisk);
    final ExecutorService pool = Executors.newCachedThreadPool();
    WritecacheTarget target;

    /** The gate opens before the target closes: a failed test must not leave a batch hanging. */
    @AfterEach
    void end() throws IOException {
        backing.open();
        try {
            if (target != null) {
                target.close();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    static ByteBuffer data(int seed) {
        byte[] b = new byte[BS];
        new Random(seed).nextBytes(b);
        return ByteBuffer.wrap(b);
    }

    static byte[] read(BlockDevice d, long block) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(BS);
        d.read(block * BS, b);
        return b.array();
    }

    static long stat(WritecacheTarget t, String key) {
        return Long.parseLong(t.status().get(key));
    }

    static void await(BooleanSupplier c, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!c.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting for " + what);
            Thread.yield();
        }
    }

    /** Sixteen dirty blocks, none adjacent (one backing write each), committed. */
    WritecacheTarget dirty(Tunables tun, Options options) throws IOException {
        target = Recovery.open("wc", backing, cacheDisk, "id-1", 0, false, tun, options);
        for (int i = 0; i < BLOCKS; i++) {
            target.write(2L * i * BS, data(i), 0);
        }
        target.flush();
        return target;
    }

    /** Every block still dirty, none freed nor lost, none on the backing device, no error counted. */
    void allStillDirty(WritecacheTarget t) throws IOException {
        assertEquals(BLOCKS, t.dirtyBlocks(), "a block of the interrupted batch was marked clean");
        assertEquals(0, stat(t, "under_writeback"), "the interrupted batch's slots are still marked");
        assertEquals(SLOTS - BLOCKS, stat(t, "free_blocks"), "a slot of the interrupted batch was freed or lost");
        assertEquals(0, stat(t, "written_back_blocks"));
        assertEquals(0, stat(t, "writeback_error"), "a cancelled batch is not a writeback error");
        for (int i = 0; i < BLOCKS; i++) {
            assertFalse(Arrays.equals(data(i).array(), read(backingDisk, 2L * i)), "block " + 2 * i + " passed the gate");
        }
    }

    /** After the gate opens, a writeback writes every block back, with its data. */
    void resumedWritebackWritesEverything(WritecacheTarget t) throws Exception {
        backing.open();
        t.writebackAll((d, w) -> { });
        assertEquals(0, t.dirtyBlocks());
        for (int i = 0; i < BLOCKS; i++) {
            assertArrayEquals(data(i).array(), read(backingDisk, 2L * i), "block " + 2 * i + " on the backing device");
            assertArrayEquals(data(i).array(), read(t, 2L * i), "block " + 2 * i + " through the cache");
        }
    }

    /** Starts {@code cache:writeback}'s writebackAll and waits until its batch's runs wait at the gate. */
    Thread stuckWriteback(WritecacheTarget t, AtomicReference<Throwable> thrown) {
        backing.closeGate();
        Thread wb = new Thread(() -> {
            try {
                t.writebackAll((d, w) -> { });
            } catch (Throwable e) {
                thrown.set(e);
            }
        }, "cache-writeback");
        wb.start();
        await(() -> backing.waiting() == 4, "the batch's four runs in flight at the closed gate");
        return wb;
    }

    @Test
    void ctrlCOfAWritebackAtAClosedGateBelowEndsItAndTheBlocksStayDirty() throws Exception {
        WritecacheTarget t = dirty(Tunables.DEFAULTS, Options.defaults().manual());
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread wb = stuckWriteback(t, thrown);
        wb.interrupt(); // Ctrl-C
        wb.join(TimeUnit.SECONDS.toMillis(60));
        assertFalse(wb.isAlive(), "writebackAll still waits for runs at the closed gate after its interrupt");
        Throwable e = thrown.get();
        assertTrue(e instanceof InterruptedException || e instanceof InterruptedIOException, "cancelled, not failed: " + e);
        assertEquals(0, backing.waiting(), "a run of the cancelled batch still waits at the gate");
        allStillDirty(t);
        resumedWritebackWritesEverything(t);
    }

    @Test
    void aCallerQueuedBehindAStuckBatchIsInterruptible() throws Exception {
        WritecacheTarget t = dirty(Tunables.DEFAULTS, Options.defaults().manual());
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread wb = stuckWriteback(t, thrown);
        AtomicReference<Thread> second = new AtomicReference<>();
        // a writer that found no free slot writes back a batch itself: it waits for the batch lock
        Future<Integer> queued = pool.submit(() -> {
            second.set(Thread.currentThread());
            return t.writebackOldest(8);
        });
        await(() -> second.get() != null && second.get().getState() == Thread.State.WAITING,
                "the second caller to wait for the batch lock");
        second.get().interrupt();
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> queued.get(60, TimeUnit.SECONDS), "the queued caller returned after its interrupt");
        assertInstanceOf(InterruptedIOException.class, e.getCause());
        assertTrue(wb.isAlive(), "the first batch is still at the gate: the second caller did not wait for it to end");
        wb.interrupt();
        wb.join(TimeUnit.SECONDS.toMillis(60));
        assertFalse(wb.isAlive());
        allStillDirty(t);
        resumedWritebackWritesEverything(t);
    }

    /**
     * A suspend of the cache (cache:switch, a replace's pause) while the daemon's batch waits at
     * the closed gate below: the batch is abandoned at once, its runs given up, and the daemon has
     * ended when the suspend returns. It had waited 30 s, interrupted the daemon (which the batch
     * ignored) and returned after 5 s more with the daemon still stuck in the batch.
     */
    @Test
    void aSuspendAbandonsADaemonBatchStuckAtAClosedGateBelow() throws Exception {
        Tunables tun = Tunables.DEFAULTS.with(Tunables.LOW_WATERMARK, "0").with(Tunables.HIGH_WATERMARK, "10")
                .with(Tunables.AUTOCOMMIT_TIME, "0").with(Tunables.AUTOCOMMIT_BLOCKS, "100000")
                .with(Tunables.PAUSE_WRITEBACK, "0");
        backing.closeGate();
        WritecacheTarget t = dirty(tun, Options.defaults());
        await(() -> backing.waiting() == 4, "the daemon's batch at the closed gate");
        Future<?> suspend = pool.submit(() -> {
            t.suspend();
            return null;
        });
        suspend.get(60, TimeUnit.SECONDS);
        assertEquals(0, stat(t, "under_writeback"), "the suspend returned with the daemon's batch still in progress");
        assertEquals(0, backing.waiting(), "a run of the abandoned batch still waits at the gate");
        allStillDirty(t);
        resumedWritebackWritesEverything(t);
        t.resume();
    }
}
