package dev.strata.cache.commands.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceState;
import dev.strata.core.internal.DeviceDefinition;
import dev.strata.testsupport.load.VerifiedIo;

/**
 * {@code cache:switch DEV readcache block_size=8192} on a readcache formatted with 4096-byte blocks:
 * it adopts (same devices, no format), so nothing but the open over the cache device can see the
 * mismatch, and that open comes after the old readcache was closed. It used to commit and leave the
 * device waiting (clients hung, and a restart came back waiting); now the build is undone: one
 * line, the old readcache reopened, the clients served throughout, nothing stored.
 */
class SwitchUndoCommandTest {
    static final long MIB = 1L << 20;
    LiveStack s;
    final ExecutorService pool = Executors.newCachedThreadPool();

    @BeforeEach
    void start() throws Exception {
        s = new LiveStack();
        s.disk("slow", 8 * MIB);
        s.disk("ssd", 17 * MIB);
    }

    @AfterEach
    void stop() throws InterruptedException {
        s.close();
        pool.shutdownNow();
        pool.awaitTermination(30, TimeUnit.SECONDS);
    }

    @Test
    void aBlockSizeTheCacheDeviceWasNotFormattedWithIsRefusedAndUndoneUnderVerifiedIo() throws Exception {
        s.run("cache:attach slow readcache cache=ssd");
        DeviceInfo before = s.manager.info("slow").orElseThrow();
        Map<String, DeviceDefinition> stored = s.store.snapshot();
        DeviceHandle h = s.manager.open("slow", "nbd:t");
        VerifiedIo io = new VerifiedIo(List.of(h), 4, 64).start(pool);
        io.awaitOps(300);
        String e = s.error("cache:switch slow readcache block_size=8192");
        assertEquals("slow: switch to readcache refused: readcache: the cache device is formatted with block_size=4096, "
                + "not 8192; omit block_size, or use format=true to reformat it (its contents are lost); slow stays "
                + "readcache as it was", e);
        io.awaitOps(io.ops.get() + 300); // still served
        io.stop();
        assertEquals(0, io.errors.get(), io.summary() + " " + io.firstErrors);
        assertEquals(0, io.mismatches.get(), io.summary());
        DeviceInfo after = s.manager.info("slow").orElseThrow();
        assertEquals(DeviceState.ACTIVE, after.state());
        assertNull(after.waitingFor());
        assertEquals(before.type(), after.type());
        assertEquals(before.arguments(), after.arguments());
        assertEquals(stored, s.store.snapshot(), "nothing stored");
        assertEquals(0, io.verifyAll(h), "every block as last written");
        h.close();

        s.restart(s.store.snapshot());
        DeviceInfo again = s.manager.info("slow").orElseThrow();
        assertEquals(DeviceState.ACTIVE, again.state(), "a restart comes back on the old readcache");
        assertEquals("readcache", again.type());
        assertEquals(before.arguments(), again.arguments());
        try (DeviceHandle h2 = s.manager.open("slow", "nbd:t")) {
            assertEquals(0, io.verifyAll(h2), "every block as last written, after the restart");
        }
    }
}
