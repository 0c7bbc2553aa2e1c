package dev.strata.cache.commands.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import dev.strata.testsupport.load.VerifiedIo;

/**
 * Stacks from the shell on the real manager: two attaches build writeboost over readcache over the
 * device's own target; {@code cache:detach} of the middle layer takes the readcache out (that layer
 * collapses onto the device below it) while the writeboost above keeps serving, under verified I/O
 * through a handle; then the top comes off too.
 */
class StackCommandTest {
    static final long MIB = 1L << 20;
    LiveStack s;
    final ExecutorService pool = Executors.newCachedThreadPool();

    @BeforeEach
    void start() throws Exception {
        s = new LiveStack();
        s.disk("slow", 8 * MIB);
        s.disk("ssd", 17 * MIB);
        s.disk("ssd2", 17 * MIB);
    }

    @AfterEach
    void stop() throws InterruptedException {
        s.close();
        pool.shutdownNow();
        pool.awaitTermination(30, TimeUnit.SECONDS);
    }

    @Test
    void detachOfTheMiddleLayerUnderVerifiedIo() throws Exception {
        String id = s.manager.info("slow").orElseThrow().id();
        DeviceHandle h = s.manager.open("slow", "nbd:t");
        VerifiedIo io = new VerifiedIo(List.of(h), 4, 64).start(pool);
        io.awaitOps(300);
        s.run("cache:attach slow readcache cache=ssd2");
        io.awaitOps(400);
        s.run("cache:attach slow writeboost cache=ssd writeback_threshold=0"); // dirty data stays in the top cache
        io.awaitOps(600);
        DeviceInfo middle = s.manager.info("slow.readcache").orElseThrow();
        assertEquals("readcache", middle.type());
        assertEquals(Map.of("origin", "slow.crash", "cache", "ssd2"), middle.arguments());
        assertEquals("slow.readcache", s.manager.status("slow.crash").get("lower_of"),
                "the bottom device's mark follows the layer that took over the target");

        io.resetLongest();
        String r = s.run("cache:detach slow.readcache");
        long during = io.resetLongest();
        io.awaitOps(600);
        System.out.println(r + " — longest client request during it " + during / 1000 + " µs");
        assertTrue(r.startsWith("slow.readcache: detached; its crash target is back (slow.crash is gone)"), r);
        DeviceInfo top = s.manager.info("slow").orElseThrow();
        assertEquals("writeboost", top.type());
        assertEquals(List.of("slow.readcache", "ssd"), top.lower());
        DeviceInfo now = s.manager.info("slow.readcache").orElseThrow();
        assertEquals("crash", now.type());
        assertEquals(middle.id(), now.id(), "the middle device keeps its identity");
        assertTrue(s.manager.info("slow.crash").isEmpty());
        assertTrue(s.manager.info("ssd2").orElseThrow().holders().isEmpty(), "ssd2 is free");

        String last = s.run("cache:detach slow");
        io.stop();
        assertEquals(0, io.errors.get(), io.summary() + " " + io.firstErrors);
        assertEquals(0, io.mismatches.get(), io.summary());
        assertTrue(last.startsWith("slow: detached; its crash target is back (slow.readcache is gone)"), last);
        assertEquals("crash", s.manager.info("slow").orElseThrow().type());
        assertEquals(id, s.manager.info("slow").orElseThrow().id());
        assertEquals(0, io.verifyAll(h));
        h.close();
        s.restart(s.store.snapshot());
        assertEquals(List.of("slow", "ssd", "ssd2"), s.manager.list().stream().map(DeviceInfo::name).sorted().toList());
        try (DeviceHandle again = s.manager.open("slow", "nbd:t")) {
            assertEquals(0, io.verifyAll(again));
        }
    }
}
