package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceState;

/** A failed suspend, a message to a suspended device, status during a close; states and reasons. */
class LifecycleFixesTest extends ManagerFixture {

    @Test
    void aFailedSuspendResumesTheTargetAndTheDeviceKeepsRunning() throws Exception {
        cacheStack();
        wb0().failSuspend = true;
        IOException e = assertThrows(IOException.class, () -> m.suspend("wb0"));
        assertEquals("device 'wb0': the target could not suspend (tcache: the log could not be written); "
                + "it was resumed and the device keeps running", e.getMessage());
        assertEquals(1, wb0().resumes.get(), "the target's daemons were restarted");
        assertEquals(DeviceState.ACTIVE, m.info("wb0").orElseThrow().state());
    }

    @Test
    void aSuspendThatFailsAndCannotResumeLeavesTheDeviceSuspended() throws Exception {
        cacheStack();
        wb0().failSuspend = true;
        wb0().failResume = true;
        IOException e = assertThrows(IOException.class, () -> m.suspend("wb0"));
        assertTrue(e.getMessage().endsWith("the device stays suspended: dev:resume wb0 to retry"), e.getMessage());
        DeviceInfo wb = m.info("wb0").orElseThrow();
        assertEquals(DeviceState.SUSPENDED, wb.state());
        assertTrue(wb.waitingFor().contains("could not suspend"), wb.waitingFor());
        wb0().failResume = false;
        m.resume("wb0");
        assertEquals(DeviceState.ACTIVE, m.info("wb0").orElseThrow().state());
        assertEquals(null, m.info("wb0").orElseThrow().waitingFor());
    }

    @Test
    void aFailedSuspendDuringAReloadResumesTheOldTarget() throws Exception {
        cacheStack();
        disk("disk1");
        m.create("part", "linear", args("device", "disk1"));
        m.reload("wb0", "tcache", args("backing", "disk0", "cache", "cache0"));
        CacheTestTarget old = wb0();
        old.failSuspend = true;
        disk("disk2");
        disk("cache2");
        assertThrows(IOException.class, () -> m.reload("wb0", "tcache", args("backing", "disk2", "cache", "cache2")));
        assertEquals(1, old.resumes.get());
        assertEquals(DeviceState.ACTIVE, m.info("wb0").orElseThrow().state());
        assertEquals(old, wb0());
    }

    @Test
    void aMessageToASuspendedDeviceIsRefused() throws Exception {
        cacheStack();
        m.suspend("wb0");
        assertEquals("device 'wb0' is suspended; dev:resume wb0 first, then send threshold=50",
                refused(() -> m.message("wb0", "threshold", "50"), "suspended"));
        assertEquals("10", wb0().threshold);
        m.resume("wb0");
        m.message("wb0", "threshold", "50");
        assertEquals("50", wb0().threshold);
    }

    @Test
    void statusHoldsTheTargetAgainstAConcurrentClose() throws Exception {
        m.stop();
        m = manager(Settings.of(1, 30));
        cacheStack();
        caches.statusRelease = new CountDownLatch(1);
        caches.statusEntered = new CountDownLatch(1);
        Future<Map<String, String>> status = pool.submit(() -> m.status("wb0"));
        assertTrue(caches.statusEntered.await(30, TimeUnit.SECONDS));
        refused(() -> m.remove("wb0"), "in use by a running command");
        caches.statusRelease.countDown();
        assertEquals("0", status.get(30, TimeUnit.SECONDS).get("dirty_blocks"));
        m.remove("wb0");
        assertFalse(caches.closedDuringCall.get(), "the target was closed while status() read it");
    }

    @Test
    void oneSpellingOfEachStateAndTheReasonADeviceWaits() throws Exception {
        disk("disk0");
        String key = store.putExternal(new DeviceDefinition("up", "linear", args("device", "nodisk")));
        String key2 = store.putExternal(new DeviceDefinition("typo", "nosuchtype", args("a", "b")));
        String key3 = store.putExternal(new DeviceDefinition("bad", "linear", args("device", "disk0", "offset", "3")));
        m.definitionChanged(key).get();
        m.definitionChanged(key2).get();
        m.definitionChanged(key3).get();
        assertTrue(m.awaitQuiet(30, TimeUnit.SECONDS));
        assertEquals("waiting-for-target", m.status("up").get("state"));
        assertEquals("waiting for device 'nodisk'", m.info("up").orElseThrow().waitingFor());
        assertEquals("waiting for target type 'nosuchtype'", m.info("typo").orElseThrow().waitingFor());
        assertTrue(m.info("bad").orElseThrow().waitingFor().startsWith("waiting for a successful build: linear: offset=3"),
                m.info("bad").orElseThrow().waitingFor());
        assertEquals("active", m.status("disk0").get("state"));
        m.suspend("disk0");
        assertEquals("suspended", m.status("disk0").get("state"));
    }
}
