package dev.strata.cache.support.writeback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A batch whose backing writes hang (a closed gate below the backing device, a stalled disk) is
 * cancelled by an interrupt of the thread waiting for it, or by its abandon check: the runs in
 * flight are interrupted, and the wait ends once they have. Every bound below is a cap on a wait
 * for an event, never a claim about how fast it comes.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class WritebackBatcherCancelTest {
    static final int BS = 4096;
    static final int N = WritebackBatcherInFlightTest.N;
    /** Far longer than any wait of a test: a write that stays blocked this long means a hang. */
    static final long HANG_SECONDS = 90;

    final ExecutorService caller = Executors.newSingleThreadExecutor();

    @AfterEach
    void stop() {
        caller.shutdownNow();
    }

    /**
     * Like a mapped device's closed gate: a write waits until the gate opens, and an interrupt
     * fails it with a plain I/O error (the gate's DeviceIOException), not an
     * InterruptedIOException. Optionally deaf: it notes the interrupt and goes on waiting, as a
     * driver that finishes its request first.
     */
    static final class ClosedGate implements WritebackBatcher.Backing {
        final CountDownLatch open = new CountDownLatch(1);
        final AtomicInteger started = new AtomicInteger();
        final AtomicInteger ended = new AtomicInteger();
        final AtomicInteger written = new AtomicInteger();
        final CountDownLatch allIn;
        final CountDownLatch interruptSeen = new CountDownLatch(1);
        final boolean deaf;

        ClosedGate(int inFlight, boolean deaf) {
            this.allIn = new CountDownLatch(inFlight);
            this.deaf = deaf;
        }

        @Override
        public void write(long offset, ByteBuffer src) throws IOException {
            started.incrementAndGet();
            allIn.countDown();
            boolean ignored = false;
            try {
                while (true) {
                    try {
                        if (!open.await(HANG_SECONDS, TimeUnit.SECONDS)) {
                            throw new IOException("write at " + offset + " was never released nor interrupted");
                        }
                        break;
                    } catch (InterruptedException e) {
                        interruptSeen.countDown();
                        if (!deaf) {
                            Thread.currentThread().interrupt();
                            throw new IOException("write at " + offset + ": interrupted while waiting at the gate");
                        }
                        ignored = true;
                    }
                }
                written.incrementAndGet();
            } finally {
                ended.incrementAndGet();
                if (ignored) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    static long[] isolated(int n) {
        long[] b = new long[n];
        for (int i = 0; i < n; i++) {
            b[i] = 10L * i;
        }
        return b;
    }

    static int[] full(int n) {
        int[] v = new int[n];
        Arrays.fill(v, 0xFF);
        return v;
    }

    /** What the caller saw: the exception, its interrupt status, and the runs ended at return. */
    record Outcome(Throwable thrown, boolean interrupted, int endedAtReturn, int startedAtReturn) {
    }

    Future<Outcome> submit(WritebackBatcher wb, int n, WritebackBatcher.Backing b, java.util.function.BooleanSupplier abandon,
            AtomicReference<Thread> thread) {
        return caller.submit(() -> {
            thread.set(Thread.currentThread());
            Throwable thrown = null;
            try {
                wb.write(n, isolated(n), full(n), ByteBuffer.allocate(n * BS), b, abandon);
            } catch (Throwable t) {
                thrown = t;
            }
            boolean interrupted = Thread.interrupted();
            ClosedGate g = (ClosedGate) b;
            return new Outcome(thrown, interrupted, g.ended.get(), g.started.get());
        });
    }

    /** Ten runs, four slots: the caller waits for a free slot when it is interrupted. */
    @Test
    void anInterruptWhileWaitingForASlotEndsTheBatchAndItsBlockedRuns() throws Exception {
        interruptedBatch(10);
    }

    /** As many runs as slots: every run submitted, the caller waits for them to end. */
    @Test
    void anInterruptWhileWaitingForTheLastRunsEndsTheBatchAndItsBlockedRuns() throws Exception {
        interruptedBatch(N);
    }

    @RepeatedTest(50)
    void interruptEveryTime() throws Exception {
        interruptedBatch(10);
    }

    private void interruptedBatch(int runs) throws Exception {
        try (WritebackBatcher wb = new WritebackBatcher(BS, 256, true, N)) {
            ClosedGate gate = new ClosedGate(N, false);
            AtomicReference<Thread> thread = new AtomicReference<>();
            Future<Outcome> f = submit(wb, runs, gate, () -> false, thread);
            assertTrue(gate.allIn.await(60, TimeUnit.SECONDS), "four runs in flight at the gate");
            thread.get().interrupt();
            Outcome o = f.get(60, TimeUnit.SECONDS); // without the fix: waits out HANG_SECONDS
            assertInstanceOf(InterruptedIOException.class, o.thrown(), "a cancel, not a device failure: " + o.thrown());
            assertTrue(o.interrupted(), "the caller's interrupt status is kept");
            assertEquals(o.startedAtReturn(), o.endedAtReturn(), "returned before every run it started ended");
            assertEquals(N, o.startedAtReturn(), "no run submitted after the cancel");
            assertEquals(0, gate.written.get(), "nothing written");
            usableAfterwards(wb);
        }
    }

    @Test
    void theAbandonCheckEndsTheBatchAndItsBlockedRuns() throws Exception {
        try (WritebackBatcher wb = new WritebackBatcher(BS, 256, true, N)) {
            for (int runs : new int[] {10, N}) {
                ClosedGate gate = new ClosedGate(N, false);
                AtomicBoolean stop = new AtomicBoolean();
                AtomicReference<Thread> thread = new AtomicReference<>();
                Future<Outcome> f = submit(wb, runs, gate, stop::get, thread);
                assertTrue(gate.allIn.await(60, TimeUnit.SECONDS), "four runs in flight at the gate");
                stop.set(true); // a suspend, a cancelled drain: the batch is given up
                Outcome o = f.get(60, TimeUnit.SECONDS);
                assertInstanceOf(InterruptedIOException.class, o.thrown(), "a cancel: " + o.thrown());
                assertFalse(o.interrupted(), "nobody interrupted the caller");
                assertEquals(o.startedAtReturn(), o.endedAtReturn(), "returned before every run it started ended");
                assertEquals(N, o.startedAtReturn());
            }
            usableAfterwards(wb);
        }
    }

    /**
     * A run that does not answer the interrupt is waited for (returning before it ends would let
     * its older copy land after a newer write that went around the cache); it is interrupted all
     * the same, and once it ends the batch is reported cancelled.
     */
    @Test
    void aRunThatIgnoresTheInterruptIsWaitedFor() throws Exception {
        try (WritebackBatcher wb = new WritebackBatcher(BS, 256, true, N)) {
            ClosedGate gate = new ClosedGate(N, true);
            AtomicReference<Thread> thread = new AtomicReference<>();
            Future<Outcome> f = submit(wb, 10, gate, () -> false, thread);
            assertTrue(gate.allIn.await(60, TimeUnit.SECONDS));
            thread.get().interrupt();
            assertTrue(gate.interruptSeen.await(60, TimeUnit.SECONDS), "the runs in flight were interrupted");
            gate.open.countDown(); // the deaf writes complete
            Outcome o = f.get(60, TimeUnit.SECONDS);
            assertInstanceOf(InterruptedIOException.class, o.thrown(), "cancelled, though its runs completed: " + o.thrown());
            assertTrue(o.interrupted());
            assertEquals(N, o.startedAtReturn());
            assertEquals(N, o.endedAtReturn(), "returned before the deaf runs ended");
            usableAfterwards(wb);
        }
    }

    /** The batcher writes the next batch whole, and no pool thread carries a cancel's interrupt. */
    private static void usableAfterwards(WritebackBatcher wb) throws IOException {
        AtomicInteger interruptedRuns = new AtomicInteger();
        AtomicInteger writes = new AtomicInteger();
        assertEquals(10, wb.write(10, isolated(10), full(10), ByteBuffer.allocate(10 * BS), (offset, src) -> {
            if (Thread.currentThread().isInterrupted()) {
                interruptedRuns.incrementAndGet();
            }
            writes.incrementAndGet();
        }));
        assertEquals(10, writes.get());
        assertEquals(0, interruptedRuns.get(), "a pool thread kept a cancel's interrupt");
    }
}
