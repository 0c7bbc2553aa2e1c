package dev.strata.cache.commands.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceInfo;
import dev.strata.core.internal.DeviceDefinition;
import dev.strata.testsupport.load.VerifiedIo;

/**
 * {@code cache:attach} on the real device manager with a real writeboost over crashable disks:
 * under verified I/O through an open handle (an export), a power cut at every step of the attach
 * then a restart (the disk rule holds), bad input.
 */
class AttachCommandTest {
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
    void attachUnderVerifiedIo() throws Exception {
        DeviceHandle h = s.manager.open("slow", "nbd:t");
        String id = s.manager.info("slow").orElseThrow().id();
        VerifiedIo io = new VerifiedIo(List.of(h), 4, 64).start(pool);
        io.awaitOps(500);
        long before = io.resetLongest();
        String r = s.run("cache:attach slow writeboost cache=ssd");
        long during = io.resetLongest();
        io.awaitOps(500);
        io.stop();
        System.out.println(r + " — clients: " + io.summary() + "; longest request before the attach "
                + before / 1000 + " µs, during it " + during / 1000 + " µs, after it " + io.longestNanos.get() / 1000 + " µs");
        assertEquals(0, io.errors.get(), io.summary());
        assertEquals(0, io.mismatches.get(), io.summary());
        assertTrue(r.matches("slow: writeboost attached \\(cache ssd\\); its crash target is now device slow\\.crash; "
                + "I/O paused [0-9.]+ (µs|ms)"), r);
        assertTrue(s.run("cache:stats slow").startsWith("slow: writeback, "), "slow is a cache now");
        DeviceInfo slow = s.manager.info("slow").orElseThrow();
        assertEquals("writeboost", slow.type());
        assertEquals(id, slow.id());
        assertEquals(List.of("slow.crash", "ssd"), slow.lower());
        assertEquals(List.of("nbd:t"), slow.holders());
        assertEquals(0, io.verifyAll(h));
        h.close();

        s.restart(s.store.snapshot()); // a clean restart: the same stack, every block
        assertEquals("writeboost", s.manager.info("slow").orElseThrow().type());
        try (DeviceHandle again = s.manager.open("slow", "nbd:t")) {
            assertEquals(0, io.verifyAll(again));
        }
    }

    /** The stack an attach made comes apart again with cache:detach, under I/O, without losing a block (more in DetachCommandTest). */
    @Test
    void anAttachedCacheDetachesUnderIo() throws Exception {
        DeviceHandle h = s.manager.open("slow", "nbd:t");
        VerifiedIo io = new VerifiedIo(List.of(h), 4, 64).start(pool);
        io.awaitOps(300);
        s.run("cache:attach slow writeboost cache=ssd writeback_threshold=0"); // dirty data stays in the cache
        io.awaitOps(600);
        String detached = s.run("cache:detach slow");
        io.awaitOps(300);
        io.stop();
        System.out.println(detached + " — clients: " + io.summary());
        assertEquals(0, io.errors.get(), io.summary());
        assertEquals(0, io.mismatches.get(), io.summary());
        assertTrue(detached.startsWith("slow: detached; its crash target is back (slow.crash is gone)"), detached);
        assertEquals("crash", s.manager.info("slow").orElseThrow().type());
        assertEquals(0, io.verifyAll(h));
        h.close();
        s.restart(s.store.snapshot());
        try (DeviceHandle again = s.manager.open("slow", "nbd:t")) {
            assertEquals(0, io.verifyAll(again));
        }
    }

    /**
     * A power cut at each step: 0 before anything is stored, 1 after the staged lower device, 2
     * after the cache was built (before the commit), 3 after the commit, 4 after the staged mark
     * was cleared. Before the commit the device comes back as it was, from 3 on as the new stack;
     * either way every block holds its last durable value or one written since.
     */
    @ParameterizedTest(name = "point {0}, seed {1}")
    @MethodSource("cuts")
    void aPowerCutAtEachStepRestartsConsistent(int point, int seed) throws Exception {
        PowerCuts.Cut cut = PowerCuts.run(s, pool, "slow", seed * 31L + point, () -> { },
                crash -> s.store.armCrash(point, crash),
                () -> s.manager.attach("slow", "writeboost", Map.of("cache", "ssd"), null));
        boolean committed = point >= 3;
        if (cut.failure() != null) {
            // before the commit the attach fails on the dead disks and rolls back (in memory)
            assertTrue(point < 3, "failed after its commit: " + cut.failure());
        }
        DeviceInfo slow = PowerCuts.checkDiskRule(s, "slow", cut, "at point " + point);
        assertEquals(committed ? "writeboost" : "crash", slow.type());
        assertEquals(committed, s.manager.info("slow.crash").isPresent());
        if (!committed) {
            // run again; format=true because the cut may have left a cache formatted for the rolled-back device
            assertTrue(s.run("cache:attach slow writeboost cache=ssd format=true").startsWith("slow: writeboost attached"));
        }
    }

    /** Every point with 3 seeds (which volatile writes survive), 30 with {@code -Dstrata.soak=true}. */
    static Stream<Arguments> cuts() {
        return PowerCuts.points(5);
    }

    @Test
    void badInputIsOneLineAndChangesNothing() throws Exception {
        s.disk("tiny", 64 * 1024);
        List<DeviceInfo> before = s.manager.list();
        Map<String, DeviceDefinition> stored = s.store.snapshot();
        assertTrue(error("cache:attach").startsWith("usage: cache:attach"));
        String usage = "; usage: cache:attach [--lower NAME] DEV TYPE cache=CDEV [key=value…]";
        assertEquals("cache:attach: missing TYPE" + usage, error("cache:attach slow"));
        assertEquals("cache:attach: missing TYPE before \"cache=ssd\"" + usage, error("cache:attach slow cache=ssd"));
        assertEquals("cache:attach: unexpected \"extra\"" + usage, error("cache:attach slow writeboost cache=ssd extra"));
        assertEquals("cache:attach: unknown option --bogus" + usage, error("cache:attach --bogus slow writeboost cache=ssd"));
        assertTrue(error("cache:attach nope writeboost cache=ssd").contains("no device named 'nope'"));
        assertTrue(error("cache:attach slow nope cache=ssd").contains("unknown target type 'nope'"));
        assertTrue(error("cache:attach slow crash name=x").contains("cannot be attached"));
        assertTrue(error("cache:attach slow writeboost cache=ssd backing=x").contains("leave out backing="));
        assertEquals("cache:attach: cache= is given twice" + usage, error("cache:attach slow writeboost cache=ssd cache=ssd"));
        assertTrue(error("cache:attach slow writeboost cache=ghost").contains("no device named 'ghost'"));
        assertTrue(error("cache:attach slow writeboost cache=slow").contains("cannot be stacked on itself"));
        assertTrue(error("cache:attach --lower tiny slow writeboost cache=ssd").contains("'tiny' already exists"));
        assertTrue(error("cache:attach slow writeboost cache=ssd buffers=1").contains("buffers"));
        String small = oneLine("cache:attach slow writeboost cache=tiny");
        assertTrue(small.contains("at least"), small);
        assertEquals(before, s.manager.list(), "devices unchanged");
        assertEquals(stored, s.store.snapshot(), "store unchanged");
    }

    /** The one-line message of a user mistake. */
    private String error(String line) {
        return s.error(line);
    }

    /** The one-line message of a refused command (a mistake or an I/O-level refusal). */
    private String oneLine(String line) {
        try {
            Object r = s.session.execute(line);
            fail(line + " should fail, returned " + r);
            return null;
        } catch (Exception e) {
            assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
            return e.getMessage();
        }
    }
}
