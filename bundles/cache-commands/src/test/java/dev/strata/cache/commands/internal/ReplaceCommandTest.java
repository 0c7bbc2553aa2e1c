package dev.strata.cache.commands.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceInfo;
import dev.strata.core.internal.DeviceDefinition;
import dev.strata.testsupport.load.VerifiedIo;

/**
 * {@code cache:replace} on the real manager with a real writeboost over crashable disks: the
 * cache moves to another device with its dirty data and not one write to the slow device, under
 * verified I/O (writes made during the copy end up on the new device); a power cut at every
 * step, then a restart; bad input. Cancel at every phase: {@link ReplaceCancelTest}.
 */
class ReplaceCommandTest extends ReplaceFixture {
    @Test
    void replaceUnderVerifiedIoMovesTheDirtyCacheAndWritesNothingBack() throws Exception {
        attach("writeboost");
        writeDirty(7);
        long dirtyBefore = dirty();
        assertTrue(dirtyBefore >= DIRTY, "dirty before: " + dirtyBefore);
        String id = s.manager.info("slow").orElseThrow().id();
        DeviceHandle h = s.manager.open("slow", "nbd:t");
        VerifiedIo io = new VerifiedIo(List.of(h), 4, 64).start(pool);
        io.awaitOps(300);
        // hold the copy after its third chunk until the clients have written more: their writes land
        // on the old device after it was copied, and must reach the new one (recopied or in the pause)
        GatedDevice copy = s.gates.get("ssd2");
        copy.closeAfter(3);
        Future<String> r = pool.submit(() -> s.run("cache:replace slow cache=ssd2"));
        DetachCommandTest.await("the copy held", () -> copy.waiting() > 0);
        long ops = io.ops.get();
        io.awaitOps(ops + 500);
        long before = io.resetLongest();
        copy.open();
        String report = r.get(60, TimeUnit.SECONDS);
        long during = io.resetLongest();
        io.awaitOps(io.ops.get() + 300);
        io.stop();
        System.out.println(report + " — clients: " + io.summary() + "; longest request before " + before / 1000
                + " µs, during the replace " + during / 1000 + " µs, after it " + io.longestNanos.get() / 1000 + " µs");
        assertEquals(0, io.errors.get(), io.summary());
        assertEquals(0, io.mismatches.get(), io.summary());
        assertTrue(report.matches("slow: cache moved from ssd to ssd2 \\([0-9.]+ [KMG]iB copied in \\d+ pass(es)?, [0-9.]+ s, "
                + "nothing written back; ssd is blank now\\); I/O paused [0-9.]+ (µs|ms)"), report);
        assertTrue(report.matches(".* in ([2-9]|1[0-2]) passes.*"), "the writes during the copy were copied again: " + report);
        checkOn("ssd2");
        assertEquals(id, s.manager.info("slow").orElseThrow().id(), "the device keeps its identity");
        assertEquals(List.of("nbd:t"), s.manager.info("slow").orElseThrow().holders(), "the export kept its handle");
        assertTrue(blank("ssd"), "the old cache device is blank");
        assertFalse(blank("ssd2"));
        assertEquals(0, io.verifyAll(h));
        checkDirty(7);
        h.close();
        s.restart(s.store.snapshot());
        checkOn("ssd2");
        checkDirty(7);
        try (DeviceHandle again = s.manager.open("slow", "nbd:t")) {
            assertEquals(0, io.verifyAll(again));
        }
        // and on again, onto a device of the same size (the old one is smaller than the copy's device now)
        s.disk("ssd3", 32 * MIB);
        assertTrue(s.run("cache:replace slow cache=ssd3").startsWith("slow: cache moved from ssd2 to ssd3"));
        assertEquals("ssd3", s.manager.info("slow").orElseThrow().arguments().get("cache"));
        assertTrue(blank("ssd2"));
        checkDirty(7);
    }

    /**
     * The slow device gets not one write from a replace (counted by its disk: writes, zeroes and
     * discards), also with writes arriving during the copy; they and the dirty data end up on the
     * new device. (With clients flushing all the time a writeboost log fills and writes back by
     * itself, replace or not; so the writes here are a bounded batch.)
     */
    @Test
    void replaceWritesNothingToTheSlowDevice() throws Exception {
        attach("writeboost");
        writeDirty(7);
        long slowWrites = writes("slow");
        GatedDevice copy = s.gates.get("ssd2");
        copy.closeAfter(3);
        Future<String> r = pool.submit(() -> s.run("cache:replace slow cache=ssd2"));
        DetachCommandTest.await("the copy held", () -> copy.waiting() > 0);
        writeDirty(8); // every dirty block again, while the copy waits
        copy.open();
        String report = r.get(60, TimeUnit.SECONDS);
        assertTrue(report.startsWith("slow: cache moved from ssd to ssd2"), report);
        assertEquals(slowWrites, writes("slow"), "not one write to the slow device during the replace");
        checkOn("ssd2");
        checkDirty(8);
        s.restart(s.store.snapshot());
        checkDirty(8);
        assertEquals(slowWrites, writes("slow"), "nor at the restart");
        assertTrue(dirty() >= DIRTY, "the dirty data is on the new device: " + dirty());
    }

    /**
     * A power cut at each step — the store's points 0 (before the journal), 1 (after it), 2 (before
     * the commit: the copy is complete), 3 (after it), 4 and 5 (around the journal's deletion), and
     * {@code copying} (after the first pass), {@code pausing} (just before the pause) — then a
     * restart: the cache runs on exactly one device (the new one from point 3 on), the other one is
     * blank, and every block holds its last durable value or one written since.
     */
    @ParameterizedTest(name = "{0}, point {1}, seed {2}")
    @MethodSource("cuts")
    void aPowerCutAtEachStepRestartsOnOneDevice(String policy, String point, int seed) throws Exception {
        attach(policy);
        writeDirty(7);
        DeviceHandle h = s.manager.open("slow", "nbd:t");
        VerifiedIo io = new VerifiedIo(List.of(h), 4, 64).start(pool);
        io.awaitOps(300);
        AtomicReference<Map<String, DeviceDefinition>> survived = new AtomicReference<>();
        Runnable cut = () -> {
            if (survived.get() == null) {
                io.crashing();
                survived.set(s.store.snapshot());
                s.powerCut(seed * 31L + point.hashCode());
            }
        };
        dev.strata.api.DeviceManager.ReplaceProgress progress = (copied, left, pass) -> { };
        if (point.equals("copying")) {
            progress = (copied, left, pass) -> {
                if (pass == 1) {
                    cut.run();
                }
            };
        } else if (point.equals("pausing")) {
            progress = (copied, left, pass) -> {
                if (pass == 0) {
                    cut.run();
                }
            };
        } else {
            s.store.armCrash(Integer.parseInt(point), cut);
        }
        boolean committed = !point.equals("copying") && !point.equals("pausing") && Integer.parseInt(point) >= 3;
        try {
            // may return normally even before the commit: at point 2 the cut comes after every
            // device I/O of the pause, and the test's process goes on (a real one would be gone)
            s.manager.replace("slow", "ssd2", progress);
        } catch (Exception e) {
            assertFalse(committed, "failed after its commit: " + e);
        }
        if (survived.get() == null) {
            fail("crash point " + point + " was never reached");
        }
        io.stop();
        assertEquals(0, io.errors.get(), "no error before the power cut: " + io.summary());
        assertEquals(0, io.mismatches.get(), io.summary());
        s.restart(survived.get());
        checkOn(committed ? "ssd2" : "ssd");
        assertTrue(blank(committed ? "ssd" : "ssd2"), "the device the cache left is blank");
        try (DeviceHandle again = s.manager.open("slow", "nbd:t")) {
            List<String> bad = io.verifyAfterCrash(again);
            assertTrue(bad.isEmpty(), "disk rule after a power cut at " + point + ": " + bad);
        }
        if (!committed) {
            assertTrue(s.run("cache:replace slow cache=ssd2").startsWith("slow: cache moved from ssd to ssd2"));
            checkOn("ssd2");
        }
    }

    /**
     * Writeboost (it moves with its in-memory state): every point with 3 seeds (which volatile writes
     * survive), 30 with {@code -Dstrata.soak=true}. Writecache and readcache (closed and reopened over
     * a copy of the whole device): the points around the copy and the commit, 1 seed (10 with the flag).
     */
    static Stream<Arguments> cuts() {
        boolean soak = Boolean.getBoolean("strata.soak");
        Stream<Arguments> wb = cuts("writeboost", soak ? 30 : 3, "0", "1", "copying", "pausing", "2", "3", "4", "5");
        Stream<Arguments> others = Stream.of("writecache", "readcache")
                .flatMap(p -> cuts(p, soak ? 10 : 1, "copying", "pausing", "2", "3", "4"));
        return Stream.concat(wb, others);
    }

    private static Stream<Arguments> cuts(String policy, int seeds, String... points) {
        return Stream.of(points).flatMap(p -> IntStream.rangeClosed(1, seeds).mapToObj(seed -> Arguments.of(policy, p, seed)));
    }

    /**
     * The phase after the move: the commit is stored, the cache runs on {@code ssd2} (clients write
     * to it) and the old device is not blank yet (its blanking write is held) — then a power cut. After
     * the restart the cache is on {@code ssd2} with every durable block, {@code ssd} is blank, no
     * journal is left. Were the moved target still writing to {@code ssd}, its writes would hang at the
     * held device and the clients with them.
     */
    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void aPowerCutWhileTheMovedCacheRunsOnTheNewDeviceBeforeTheOldIsBlanked(int seed) throws Exception {
        attach("writeboost");
        writeDirty(7);
        DeviceHandle h = s.manager.open("slow", "nbd:t");
        VerifiedIo io = new VerifiedIo(List.of(h), 4, 64).start(pool);
        io.awaitOps(300);
        GatedDevice old = s.gates.get("ssd");
        s.store.armCrash(3, () -> old.closeAfter(0)); // just after the commit: the blank of ssd waits
        Future<DeviceInfo> r = pool.submit(() -> s.manager.replace("slow", "ssd2", null));
        DetachCommandTest.await("the blank held", () -> old.waiting() > 0);
        long ops = io.ops.get();
        io.awaitOps(ops + 300); // served by the moved cache, on ssd2, while ssd waits
        io.crashing();
        Map<String, DeviceDefinition> survived = s.store.snapshot();
        s.powerCut(seed * 17L);
        old.open();
        r.get(60, TimeUnit.SECONDS); // the blank failed (power lost): the next start does it
        io.stop();
        assertEquals(0, io.errors.get(), "no error before the power cut: " + io.summary());
        assertEquals(0, io.mismatches.get(), io.summary());
        s.restart(survived);
        checkOn("ssd2");
        assertTrue(blank("ssd"), "blanked at the start");
        try (DeviceHandle again = s.manager.open("slow", "nbd:t")) {
            List<String> bad = io.verifyAfterCrash(again);
            assertTrue(bad.isEmpty(), "disk rule after a power cut on the moved cache: " + bad);
        }
        checkDirty(7);
    }

    static IntStream seeds() {
        return IntStream.rangeClosed(1, Boolean.getBoolean("strata.soak") ? 30 : 3);
    }

    /**
     * Writecache and readcache take the generic path (the whole cache device copied, the target
     * closed and reopened over the copy in the pause): under verified I/O, a writecache's dirty blocks
     * stay dirty and nothing is written back; a readcache's cached blocks stay cached (it is warm on
     * the new device); both after a restart too.
     */
    @ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"writecache", "readcache"})
    void theOtherPoliciesMoveWithTheirContents(String policy) throws Exception {
        attach(policy);
        writeDirty(7);
        if (policy.equals("readcache")) {
            try (DeviceHandle r = s.manager.open("slow", "test")) { // promote: read each block a few times
                ByteBuffer b = ByteBuffer.allocate(VerifiedIo.BLOCK);
                for (int round = 0; round < 3; round++) {
                    for (int i = 0; i < DIRTY; i++) {
                        r.read((256 + i * 37L % 1792) * VerifiedIo.BLOCK, b.clear());
                    }
                }
            }
        }
        long dirtyBefore = dirty();
        long cachedBefore = cached();
        assertTrue(policy.equals("writecache") ? dirtyBefore >= DIRTY : cachedBefore > 0,
                "dirty " + dirtyBefore + ", cached " + cachedBefore);
        long slowWrites = writes("slow");
        DeviceHandle h = s.manager.open("slow", "nbd:t");
        VerifiedIo io = new VerifiedIo(List.of(h), 4, 64).start(pool);
        io.awaitOps(300);
        String report = s.run("cache:replace slow cache=ssd2");
        io.awaitOps(io.ops.get() + 300);
        io.stop();
        System.out.println(policy + ": " + report + " — clients: " + io.summary());
        assertEquals(0, io.errors.get(), io.summary());
        assertEquals(0, io.mismatches.get(), io.summary());
        assertTrue(report.startsWith("slow: cache moved from ssd to ssd2"), report);
        checkOn("ssd2");
        assertTrue(blank("ssd"), "the old cache device is blank");
        assertEquals(0, io.verifyAll(h));
        h.close();
        checkDirty(7);
        for (int round = 0; round < 2; round++) {
            if (policy.equals("writecache")) {
                assertEquals(slowWrites, writes("slow"), "nothing written back");
                assertTrue(dirty() >= dirtyBefore, "still dirty: " + dirty() + " of " + dirtyBefore);
            } else {
                // the clients' blocks (0-255) are apart from the promoted ones: those stay cached
                assertTrue(cached() >= cachedBefore, "still cached: " + cached() + " of " + cachedBefore);
            }
            s.restart(s.store.snapshot());
            checkOn("ssd2");
            checkDirty(7);
        }
    }

    // ---- bad input

    @Test
    void badInputIsOneLineAndChangesNothing() throws Exception {
        attach("writeboost");
        s.disk("tiny", 8 * MIB);
        s.disk("other", 32 * MIB);
        s.manager.create("peek", "linear", Map.of("device", "other"));
        List<DeviceInfo> before = s.manager.list();
        Map<String, DeviceDefinition> stored = s.store.snapshot();
        assertTrue(error("cache:replace").startsWith("usage: cache:replace DEV cache=NEWDEV"));
        // every mistake of the words names the word, with the short usage (Words)
        String usage = "; usage: cache:replace DEV cache=NEWDEV, or cache:replace --cancel DEV";
        assertEquals("cache:replace: missing cache=NEWDEV" + usage, error("cache:replace slow"));
        assertEquals("cache:replace: unexpected \"ssd2\"" + usage, error("cache:replace slow ssd2"));
        assertEquals("cache:replace: bogus= is unknown; allowed: cache=" + usage, error("cache:replace slow cache=tiny bogus=1"));
        assertEquals("cache:replace: cache= is given twice" + usage, error("cache:replace slow cache=tiny cache=ssd2"));
        assertEquals("cache:replace: unexpected \"extra\"" + usage, error("cache:replace slow cache=tiny extra"));
        assertEquals("cache:replace: unknown option --bogus" + usage, error("cache:replace --bogus slow cache=tiny"));
        assertEquals("cache:replace: unexpected \"extra\"" + usage, error("cache:replace --cancel slow extra"));
        assertTrue(error("cache:replace nope cache=ssd2").contains("no device named 'nope'"));
        assertEquals("device 'ssd2' is a crash device, not a cache", error("cache:replace ssd2 cache=other"));
        assertEquals("cache:replace: backing= is unknown; allowed: cache=" + usage, error("cache:replace slow backing=ssd2"));
        assertEquals("ssd is already slow's cache device; name another device", error("cache:replace slow cache=ssd"));
        assertTrue(error("cache:replace slow cache=ghost").contains("no device named 'ghost'"));
        assertTrue(error("cache:replace slow cache=slow").contains("cannot be stacked on itself"));
        assertTrue(error("cache:replace slow cache=slow.crash").contains("is already under slow"));
        assertTrue(error("cache:replace slow cache=other").contains("other is in use by peek"));
        String small = error("cache:replace slow cache=tiny");
        assertTrue(small.startsWith("tiny has 8.0 MiB, less than ssd (24.0 MiB)"), small);
        assertEquals("slow: no cache:replace is running; nothing to cancel", error("cache:replace --cancel slow"));
        assertEquals(before, s.manager.list(), "devices unchanged");
        assertEquals(stored, s.store.snapshot(), "store unchanged");
        assertFalse(blank("ssd"));
    }

    @Test
    void theBackingStorageOfAnAttachedStackIsNotACacheDevice() throws Exception {
        // vol over vol.linear over base: the refusal had advised "remove vol.linear first", which
        // would take vol's data away
        s.disk("base", 8 * MIB);
        s.disk("ssd3", 24 * MIB);
        s.manager.create("vol", "linear", Map.of("device", "base"));
        s.run("cache:attach vol writeboost cache=ssd3 writeback_threshold=0");
        List<DeviceInfo> before = s.manager.list();
        String e = error("cache:replace vol cache=base");
        assertEquals("device 'base' is already under vol (it holds vol.linear, writeboost backing device); the new "
                + "cache device must be a free device: cache:replace vol cache=<a free device of at least 24.0 MiB>", e);
        assertEquals(before, s.manager.list(), "devices unchanged");
    }

}
