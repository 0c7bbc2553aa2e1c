package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.strata.api.DeviceState;

/**
 * A device whose build failed with an I/O error at start (its file's directory not there yet, as
 * an nbd target's server not up yet) is built again by itself once the cause is gone, and the
 * devices stacked on it come up with it. Before, it stayed waiting until something else happened
 * to trigger a build: after a restart an nbd-backed stack never came back.
 */
class FailedBuildRetryTest extends ManagerFixture {

    @Test
    void aBuildThatFailedWithAnIoErrorIsTriedAgainAndTheStackAboveComesUp() throws Exception {
        Path later = Files.createDirectories(dir.resolve("later"));
        m.create("d0", "tfile", args("path", later.resolve("d0.img").toString(), "size", "1M"));
        m.create("l0", "linear", args("device", "d0"));
        m.stop();
        Files.delete(later.resolve("d0.img"));
        Files.delete(later);

        m = manager(Settings.of(60, 30));
        m.loadStored();
        assertTrue(m.awaitQuiet(30, TimeUnit.SECONDS));
        assertEquals(DeviceState.WAITING_FOR_TARGET, m.info("d0").orElseThrow().state());
        assertTrue(m.info("d0").orElseThrow().waitingFor().startsWith("waiting for a successful build"),
                m.info("d0").orElseThrow().waitingFor());
        assertEquals("waiting for device 'd0'", m.info("l0").orElseThrow().waitingFor());

        Files.createDirectories(later); // the cause is gone; nothing else happens in the manager
        m.retryFailedBuilds(System.nanoTime() + BuildRetry.MAX_NANOS);
        assertTrue(m.awaitQuiet(30, TimeUnit.SECONDS));
        assertEquals(DeviceState.ACTIVE, m.info("d0").orElseThrow().state());
        assertEquals(DeviceState.ACTIVE, m.info("l0").orElseThrow().state());
    }
}
