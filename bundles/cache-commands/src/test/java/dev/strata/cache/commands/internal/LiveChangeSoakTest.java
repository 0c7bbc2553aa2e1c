package dev.strata.cache.commands.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.strata.api.DeviceHandle;
import dev.strata.testsupport.load.VerifiedIo;

/**
 * The live changes one after another, many times, under verified I/O through a handle that stays
 * open: attach → switch (another cache device) → mode → switch (the same cache device) → replace (the
 * readcache moves to a third device) → mode → switch back → replace (the writeboost, dirty, moves) →
 * mode → detach, then a restart; 3 cycles in CI, 30 with {@code -Dstrata.soak=true}.
 */
class LiveChangeSoakTest {
    static final long MIB = 1L << 20;
    static final int CYCLES = Boolean.getBoolean("strata.soak") ? 30 : 3;
    LiveStack s;
    final ExecutorService pool = Executors.newCachedThreadPool();

    @BeforeEach
    void start() throws Exception {
        s = new LiveStack();
        s.disk("slow", 8 * MIB);
        s.disk("ssd", 17 * MIB);
        s.disk("ssd2", 17 * MIB);
        s.disk("ssd3", 17 * MIB);
    }

    @AfterEach
    void stop() throws InterruptedException {
        s.close();
        pool.shutdownNow();
        pool.awaitTermination(30, TimeUnit.SECONDS);
    }

    @Test
    void attachSwitchModeReplaceDetachCycles() throws Exception {
        VerifiedIo io = null;
        long longest = 0;
        for (int cycle = 0; cycle < CYCLES; cycle++) {
            DeviceHandle h = s.manager.open("slow", "nbd:t");
            VerifiedIo run = new VerifiedIo(List.of(h), 4, 64);
            if (io != null) {
                assertEquals(0, io.verifyAll(h), "after the restart of cycle " + cycle);
                // the next cycle's clients start from zeroes (they know nothing of the last cycle's blocks)
                h.writeZeroes(0, 4L * 64 * VerifiedIo.BLOCK, 0);
                h.flush();
            }
            io = run.start(pool);
            io.awaitOps(200);
            for (String cmd : List.of(
                    "cache:attach slow writeboost cache=ssd format=true writeback_threshold=0",
                    "cache:switch slow writecache cache=ssd2 format=true", // ssd2 holds the last cycle's readcache
                    "cache:mode slow writearound",
                    "cache:mode slow writeback",
                    "cache:switch slow readcache",
                    "cache:replace slow cache=ssd3", // the readcache, warm, onto a third device
                    "cache:mode slow passthrough",
                    "cache:switch slow writeboost cache=ssd",
                    "cache:replace slow cache=ssd2", // the writeboost, with the clients' dirty blocks
                    "cache:mode slow writethrough",
                    "cache:detach slow")) {
                io.resetLongest();
                String r = s.run(cmd);
                longest = Math.max(longest, io.resetLongest());
                assertTrue(r.startsWith("slow: "), cmd + ": " + r);
                io.awaitOps(150);
            }
            io.stop();
            assertEquals(0, io.errors.get(), "cycle " + cycle + ": " + io.summary() + " " + io.firstErrors);
            assertEquals(0, io.mismatches.get(), "cycle " + cycle + ": " + io.summary());
            assertEquals("crash", s.manager.info("slow").orElseThrow().type());
            assertEquals(0, io.verifyAll(h));
            h.close();
            s.restart(s.store.snapshot());
        }
        System.out.println("live-change soak: " + CYCLES + " cycles, longest client request during a command "
                + longest / 1000 + " µs");
    }
}
