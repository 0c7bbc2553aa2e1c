package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceInfo;
import dev.strata.api.InvalidArgumentException;
import dev.strata.testsupport.load.VerifiedIo;

/**
 * {@code DeviceManager.collapse}, the reverse of attach: under verified I/O through an export
 * the device gets its old target back under its own name and identity; every refusal is one
 * line and changes nothing; a failure before the commit leaves the stack as it was.
 */
class CollapseTest extends ManagerFixture {

    @Test
    void collapseUnderVerifiedIoGivesTheDeviceItsOldTargetBack() throws Exception {
        disk("disk0");
        disk("cache0");
        DeviceHandle h = m.open("disk0", "nbd:x");
        String id = m.info("disk0").orElseThrow().id();
        Map<String, String> oldArgs = m.info("disk0").orElseThrow().arguments();
        VerifiedIo io = new VerifiedIo(List.of(h), 4, 64).start(pool);
        io.awaitOps(300);
        m.attach("disk0", "tcache", args("cache", "cache0"), null);
        assertEquals("disk0", m.status("disk0.tfile").get("lower_of"));
        io.awaitOps(300);
        DeviceInfo after = m.collapse("disk0", "disk0.tfile");
        io.awaitOps(300);
        io.stop();
        System.out.println("collapse under I/O: " + io.summary() + ", gate closed "
                + m.status("disk0").get("last_swap_pause_us") + " µs");
        assertEquals(0, io.errors.get(), io.summary());
        assertEquals(0, io.mismatches.get(), io.summary());
        assertEquals("tfile", after.type());
        assertEquals(oldArgs, after.arguments());
        assertEquals(id, after.id());
        assertEquals(List.of("nbd:x"), after.holders());
        assertTrue(m.info("disk0.tfile").isEmpty());
        assertTrue(m.info("cache0").orElseThrow().holders().isEmpty(), "the cache device is free");
        assertTrue(caches.last.closed, "the cache target was closed");
        assertEquals(0, io.verifyAll(h));
        h.close();
        restart();
        assertEquals("tfile", m.info("disk0").orElseThrow().type());
        assertTrue(m.info("disk0.tfile").isEmpty());
        try (DeviceHandle again = m.open("disk0", "nbd:x")) {
            assertEquals(0, io.verifyAll(again));
        }
    }

    @Test
    void refusalsAreOneLineAndChangeNothing() throws Exception {
        disk("disk0");
        disk("cache0");
        disk("back");
        disk("cache1");
        m.create("wb", "tcache", args("backing", "back", "cache", "cache1"));
        m.attach("disk0", "tcache", args("cache", "cache0"), null);
        List<DeviceInfo> before = m.list();
        var stored = store.snapshot();
        assertEquals("device 'back' was not made by cache:attach for wb; there is nothing to collapse back onto",
                refused(() -> m.collapse("wb", "back")));
        assertEquals("device 'back' is not under disk0; nothing to collapse onto", refused(() -> m.collapse("disk0", "back")));
        assertEquals("no device named 'nope'; see dev:list", refused(() -> m.collapse("nope", "back")));
        m.message("disk0", "dirty", "3", false);
        assertTrue(refused(() -> m.collapse("disk0", "disk0.tfile")).startsWith("disk0 holds 3 dirty blocks"));
        m.message("disk0", "dirty", "0", false);
        assertEquals(before, m.list(), "devices unchanged");
        assertEquals(stored, store.snapshot(), "store unchanged");
        assertEquals("tfile", m.collapse("disk0", "disk0.tfile").type());
    }

    @Test
    void aFailedStoreBeforeTheCommitLeavesTheStack() throws Exception {
        disk("disk0");
        disk("cache0");
        m.attach("disk0", "tcache", args("cache", "cache0"), null);
        var stored = store.snapshot();
        m.core().collapser.hook = phase -> {
            if (phase.equals("staged")) {
                throw new IOException("injected");
            }
        };
        IOException e = assertThrows(IOException.class, () -> m.collapse("disk0", "disk0.tfile"));
        assertEquals("injected", e.getMessage());
        assertEquals("tcache", m.info("disk0").orElseThrow().type());
        assertEquals(List.of("disk0.tfile", "cache0"), m.info("disk0").orElseThrow().lower());
        assertEquals(stored, store.snapshot(), "the staged mark was taken back");
        m.core().collapser.hook = phase -> { };
        try (DeviceHandle h = m.open("disk0", "nbd:x")) {
            h.write(0, java.nio.ByteBuffer.allocate(4096), 0); // the device still serves I/O
        }
    }

    private static String refused(org.junit.jupiter.api.function.Executable call) {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, call);
        assertTrue(!e.getMessage().contains("\n"), e.getMessage());
        return e.getMessage();
    }
}
