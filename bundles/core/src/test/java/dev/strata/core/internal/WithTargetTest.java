package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.strata.api.CacheTarget;
import dev.strata.api.DeviceState;

/**
 * A call made with withTarget holds the target: nothing closes it under the call; the manager
 * interrupts the call when it must close the target, and waits for it to return.
 */
class WithTargetTest extends ManagerFixture {

    /** Starts a writeback that blocks until interrupted, and waits until it runs. */
    private Future<Object> longWriteback() throws InterruptedException {
        Future<Object> call = pool.submit(() -> m.withTarget("wb0", CacheTarget.class, c -> {
            c.writebackAll((dirty, done) -> { });
            return null;
        }));
        assertTrue(caches.callEntered.await(30, TimeUnit.SECONDS));
        return call;
    }

    private static void interrupted(Future<Object> call) throws Exception {
        ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(30, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof InterruptedException, String.valueOf(e.getCause()));
    }

    @Test
    void stopInterruptsARunningCallAndClosesAfterIt() throws Exception {
        cacheStack();
        Future<Object> call = longWriteback();
        m.stop();
        interrupted(call);
        assertEquals(1, caches.closes.get());
        assertFalse(caches.closedDuringCall.get(), "the target was closed under the running call");
    }

    @Test
    void aHotUpdateInterruptsARunningCall() throws Exception {
        cacheStack();
        Future<Object> call = longWriteback();
        FactoryEntry entry = m.devicesForTest().get("wb0").factory;
        m.removeFactory(entry);
        interrupted(call);
        assertTrue(m.awaitQuiet(30, TimeUnit.SECONDS));
        assertEquals(DeviceState.WAITING_FOR_TARGET, m.info("wb0").orElseThrow().state());
        assertFalse(caches.closedDuringCall.get());
        m.addFactory(TestTargets.entry(caches, "tcache"));
        assertTrue(m.awaitQuiet(30, TimeUnit.SECONDS));
        assertEquals(DeviceState.ACTIVE, m.info("wb0").orElseThrow().state());
    }

    @Test
    void aForcedRemovalInterruptsARunningCall() throws Exception {
        cacheStack();
        Future<Object> call = longWriteback();
        m.remove("wb0", true);
        interrupted(call);
        assertFalse(caches.closedDuringCall.get());
        assertTrue(m.info("wb0").isEmpty());
    }

    @Test
    void aPlainRemovalOrReloadWaitsForTheCallAndIsRefusedIfItGoesOn() throws Exception {
        m.stop();
        m = manager(Settings.of(1, 30));
        cacheStack();
        Future<Object> call = longWriteback();
        refused(() -> m.remove("wb0"), "device 'wb0' is in use by a running command");
        refused(() -> m.reload("wb0", "linear", args("device", "disk0")), "device 'wb0' is in use by a running command");
        assertFalse(call.isDone());
        call.cancel(true); // interrupts the call's thread, as Ctrl-C does
        GateTest.await(() -> caches.inCall.get() == 0, "the interrupted call to return");
        m.remove("wb0");
        assertFalse(caches.closedDuringCall.get());
    }

    @Test
    void aTargetOfAnotherKindIsRefusedInOneLine() throws Exception {
        disk("disk0");
        refused(() -> m.withTarget("disk0", CacheTarget.class, c -> null), "device 'disk0' is a tfile device, not a cache");
        refused(() -> m.withTarget("nope", CacheTarget.class, c -> null), "no device named 'nope'");
    }
}
