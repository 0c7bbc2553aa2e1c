package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.strata.api.DeviceIOException;
import dev.strata.api.DeviceTimeoutException;

class GateTest {
    private static final long LONG = TimeUnit.SECONDS.toNanos(60);
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void stop() throws InterruptedException {
        pool.shutdownNow();
        assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS));
    }

    static void await(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.onSpinWait();
            Thread.yield();
        }
    }

    @Test
    void startsClosedAndPassesOnceOpen() throws Exception {
        Gate g = new Gate();
        assertFalse(g.isOpen());
        g.open();
        g.enter("d", 0, LONG);
        assertEquals(1, g.inFlight());
        g.exit();
        assertEquals(0, g.inFlight());
    }

    @Test
    void requestAtClosedGateProceedsOnlyAfterOpen() throws Exception {
        Gate g = new Gate();
        AtomicBoolean passed = new AtomicBoolean();
        Future<?> f = pool.submit(() -> {
            g.enter("d", 0, LONG);
            passed.set(true);
            g.exit();
            return null;
        });
        await(() -> g.waiting() == 1, "the request to wait at the gate");
        assertFalse(passed.get(), "passed a closed gate");
        g.open();
        f.get(30, TimeUnit.SECONDS);
        assertTrue(passed.get());
        assertEquals(0, g.waiting());
    }

    @Test
    void drainWaitsForRequestsInFlight() throws Exception {
        Gate g = new Gate();
        g.open();
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch leave = new CountDownLatch(1);
        Future<?> f = pool.submit(() -> {
            g.enter("d", 0, LONG);
            inside.countDown();
            leave.await(30, TimeUnit.SECONDS);
            g.exit();
            return null;
        });
        assertTrue(inside.await(30, TimeUnit.SECONDS));
        g.close();
        assertFalse(g.drain(TimeUnit.MILLISECONDS.toNanos(20)), "drained with a request in flight");
        Future<Boolean> drained = pool.submit(() -> g.drain(LONG));
        leave.countDown();
        assertTrue(drained.get(30, TimeUnit.SECONDS));
        f.get(30, TimeUnit.SECONDS);
        assertEquals(0, g.inFlight());
    }

    @Test
    void waitingIsBoundedByTheDeadline() {
        Gate g = new Gate();
        DeviceTimeoutException e = assertThrows(DeviceTimeoutException.class,
                () -> g.enter("disk0", 4096, TimeUnit.MILLISECONDS.toNanos(50)));
        assertTrue(e.getMessage().startsWith("disk0 at offset 4096"), e.getMessage());
        assertEquals(0, g.inFlight());
    }

    @Test
    void shutFailsWaitingAndLaterRequests() throws Exception {
        Gate g = new Gate();
        Future<?> f = pool.submit(() -> {
            g.enter("d", 0, LONG);
            return null;
        });
        await(() -> g.waiting() == 1, "a waiter");
        g.shut("device 'd' was removed");
        Exception e = assertThrows(Exception.class, () -> f.get(30, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof DeviceIOException, String.valueOf(e.getCause()));
        assertThrows(DeviceIOException.class, () -> g.enter("d", 0, LONG));
    }

    /** A reload finishing after the manager stopped calls open(): the shut gate must stay shut. */
    @Test
    void aShutGateCannotBeReopened() {
        Gate g = new Gate();
        g.open();
        g.shut("the device manager stopped");
        g.open();
        assertFalse(g.isOpen());
        DeviceIOException e = assertThrows(DeviceIOException.class, () -> g.enter("d", 0, LONG));
        assertTrue(e.getMessage().contains("the device manager stopped"), e.getMessage());
        assertEquals(0, g.inFlight());
    }

    /** If the gate serialised requests, the barrier inside them could never be passed by all at once. */
    @Test
    void manyRequestsAreInFlightAtOnce() throws Exception {
        Gate g = new Gate();
        g.open();
        int n = 16;
        CyclicBarrier together = new CyclicBarrier(n);
        List<Future<?>> fs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            fs.add(pool.submit(() -> {
                g.enter("d", 0, LONG);
                try {
                    together.await(30, TimeUnit.SECONDS);
                } finally {
                    g.exit();
                }
                return null;
            }));
        }
        for (Future<?> f : fs) {
            f.get(30, TimeUnit.SECONDS);
        }
        assertEquals(0, g.inFlight());
    }

    /** Requests hammer the gate while it is closed, drained and opened again: none is ever inside a drained gate. */
    @Test
    void noRequestIsInsideAClosedDrainedGate() throws Exception {
        Gate g = new Gate();
        g.open();
        AtomicInteger inside = new AtomicInteger();
        AtomicBoolean run = new AtomicBoolean(true);
        AtomicInteger violations = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        List<Future<?>> fs = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            fs.add(pool.submit(() -> {
                while (run.get()) {
                    g.enter("d", 0, LONG);
                    inside.incrementAndGet();
                    inside.decrementAndGet();
                    g.exit();
                    done.incrementAndGet();
                }
                return null;
            }));
        }
        for (int round = 0; round < 300; round++) {
            g.close();
            assertTrue(g.drain(LONG));
            for (int sample = 0; sample < 100; sample++) {
                if (inside.get() != 0) {
                    violations.incrementAndGet();
                }
                Thread.onSpinWait();
            }
            g.open();
            // Let requests through before the next close: on a loaded machine the workers could
            // otherwise never be scheduled inside an open window, and the test would check nothing.
            int before = done.get();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (done.get() == before && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
        }
        run.set(false);
        for (Future<?> f : fs) {
            f.get(30, TimeUnit.SECONDS);
        }
        assertEquals(0, violations.get());
        assertTrue(done.get() > 0);
        assertEquals(0, g.inFlight());
    }
}
