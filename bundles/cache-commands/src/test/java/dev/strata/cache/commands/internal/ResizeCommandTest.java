package dev.strata.cache.commands.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.apache.felix.service.command.CommandSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import dev.strata.api.CacheTarget;
import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceInfo;
import dev.strata.core.internal.DeviceDefinition;
import dev.strata.testsupport.load.VerifiedIo;

/**
 * {@code cache:resize} on the real device manager: a writecache grown after its cache device grew,
 * a readcache shrunk before its device shrinks, under verified I/O through a handle, across a
 * restart; a power cut at every phase; cancel during the drain; writeboost and bad input refused in
 * one line with nothing changed. The cache device is a {@code linear} window of a larger crash disk,
 * so that it can grow and shrink with {@code dev:reload}.
 */
class ResizeCommandTest {
    static final long MIB = 1L << 20;
    LiveStack s;
    final ExecutorService pool = Executors.newCachedThreadPool();

    @BeforeEach
    void start() throws Exception {
        s = new LiveStack();
        s.disk("slow", 8 * MIB);
        s.disk("big", 40 * MIB);
        window(8 * MIB);
    }

    @AfterEach
    void stop() throws InterruptedException {
        s.gates.values().forEach(GatedDevice::open);
        s.close();
        pool.shutdownNow();
        pool.awaitTermination(30, TimeUnit.SECONDS);
    }

    /** The cache device {@code ssd}: the first {@code bytes} of {@code big}, made or grown/shrunk in place. */
    private void window(long bytes) throws Exception {
        Map<String, String> args = Map.of("device", "big", "length", Long.toString(bytes));
        if (s.manager.info("ssd").isPresent()) {
            s.manager.reload("ssd", "linear", args, false);
        } else {
            s.manager.create("ssd", "linear", args);
        }
    }

    private long capacity() throws Exception {
        return s.manager.withTarget("slow", CacheTarget.class, CacheTarget::capacityBlocks);
    }

    private long dirty() throws Exception {
        return s.manager.withTarget("slow", CacheTarget.class, CacheTarget::dirtyBlocks);
    }

    private DeviceDefinition stored(String name) {
        return s.store.snapshot().values().stream().filter(d -> d.name().equals(name)).findFirst().orElseThrow();
    }

    /** Writes {@code n} scattered blocks stamped {@code stamp} (they stay dirty in a write cache). */
    private void writeScattered(int n, long stamp) throws Exception {
        try (DeviceHandle h = s.manager.open("slow", "test")) {
            ByteBuffer b = ByteBuffer.allocate(VerifiedIo.BLOCK);
            for (int i = 0; i < n; i++) {
                long block = 256 + i * 37L % 1792; // clear of the blocks VerifiedIo writes and checks (0-255)
                VerifiedIo.fill(b.clear(), block, stamp);
                h.write(block * VerifiedIo.BLOCK, b, 0);
            }
            h.flush();
        }
    }

    private void checkScattered(DeviceHandle h, int n, long stamp) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(VerifiedIo.BLOCK);
        for (int i = 0; i < n; i++) {
            long block = 256 + i * 37L % 1792;
            h.read(block * VerifiedIo.BLOCK, b.clear());
            assertEquals(stamp, VerifiedIo.stampOf(b.flip(), block), "block " + block);
        }
    }

    /** Grown: the cache device grows with dev:reload, then cache:resize lays the writecache out over all of it. */
    @Test
    void aWritecacheGrowsWithItsCacheDeviceUnderVerifiedIo() throws Exception {
        s.run("cache:attach slow writecache cache=ssd high_watermark=90 low_watermark=85");
        writeScattered(300, 5);
        DeviceHandle h = s.manager.open("slow", "nbd:t");
        VerifiedIo io = new VerifiedIo(List.of(h), 4, 64).start(pool);
        io.awaitOps(300);
        long before = capacity();
        window(24 * MIB);
        io.resetLongest();
        String r = s.run("cache:resize slow");
        long during = io.resetLongest();
        io.awaitOps(300);
        io.stop();
        System.out.println(r + " — clients: " + io.summary() + "; longest request during it " + during / 1000 + " µs");
        assertEquals(0, io.errors.get(), io.summary() + " " + io.firstErrors);
        assertEquals(0, io.mismatches.get(), io.summary());
        long after = capacity();
        assertTrue(after > 2 * before, before + " → " + after);
        assertTrue(r.matches("slow: writecache on ssd resized from [\\d,]+ blocks \\(.*\\) to [\\d,]+ blocks \\(.*\\), "
                + "[\\d,]+ blocks written back first; its cached copies were dropped; I/O paused .*"), r);
        assertEquals(Long.toString(24 * MIB), stored("slow").arguments().get("cache_size"));
        assertFalse(stored("slow").arguments().containsKey("format"), "format=true was for the first build only");
        assertEquals("90", stored("slow").arguments().get("high_watermark"), "the arguments stay");
        assertEquals(0, io.verifyAll(h));
        checkScattered(h, 300, 5);
        h.close();
        s.restart(s.store.snapshot());
        assertEquals(after, capacity(), "the new layout is recovered, not formatted again");
        try (DeviceHandle again = s.manager.open("slow", "nbd:t")) {
            assertEquals(0, io.verifyAll(again));
            checkScattered(again, 300, 5);
        }
        assertEquals("slow: capacity unchanged (25,165,824 bytes): nothing to do", s.error("cache:resize slow"));
        assertEquals("slow: already laid out over 24.0 MiB of ssd; nothing to resize", s.error("cache:resize slow size=24M"));
    }

    /**
     * Without {@code size=} over a cache device whose size did not change: one line, and nothing is
     * written back, stored or laid out again (a writecache used to write every dirty block back for a
     * layout the same as the one it had). The stored {@code cache_size} is compared as a size, not as
     * the text it was given in ({@code 8M}).
     */
    @Test
    void anUnchangedCapacityIsNothingToDo() throws Exception {
        s.run("cache:attach slow writecache cache=ssd cache_size=8M high_watermark=90 low_watermark=85");
        writeScattered(300, 9);
        long dirty = dirty();
        long capacity = capacity();
        Map<String, DeviceDefinition> stored = s.store.snapshot();
        String backing = s.disks.get("slow").stats();
        assertEquals("slow: capacity unchanged (8,388,608 bytes): nothing to do", s.error("cache:resize slow"));
        assertEquals("slow: already laid out over 8.0 MiB of ssd; nothing to resize", s.error("cache:resize slow size=8M"));
        assertEquals(dirty, dirty(), "nothing was written back");
        assertEquals(backing, s.disks.get("slow").stats(), "not one write to the backing device");
        assertEquals(capacity, capacity(), "the same layout");
        assertEquals(stored, s.store.snapshot(), "nothing stored changed");
        window(16 * MIB); // grown: now it lays the cache out again
        assertTrue(s.run("cache:resize slow").startsWith("slow: writecache on ssd resized from "));
        assertTrue(capacity() > capacity, capacity + " → " + capacity());
        try (DeviceHandle h = s.manager.open("slow", "test")) {
            checkScattered(h, 300, 9);
        }
    }

    /**
     * A write that read the cache's mode before the drain set write-around lands in the cache after
     * the drain (so the swap's check refuses: one dirty block), and a client's next write of that
     * block goes around and drops the copy before the command looks again: the refusal's reason is
     * gone, and the switch is tried again, not failed. It failed ("slow holds 2 dirty blocks the new
     * target cannot adopt", ResizeCommandTest[12] once under load): it took "nothing dirty now" for a
     * refusal of another kind. The two writes run around the first swap ({@link Interleaved}).
     */
    @Test
    void aRefusalWhoseDirtyBlocksWereWrittenAroundMeanwhileIsRetried() throws Exception {
        s.run("cache:attach slow writecache cache=ssd high_watermark=90 low_watermark=85");
        writeScattered(100, 2);
        window(16 * MIB);
        long block = 7;
        Interleaved<dev.strata.api.DeviceManager> swaps = Interleaved.manager(s.manager, "switchTarget", () -> Interleaved.lateWrite(s, "slow", block, 11), () -> {
            assertEquals(1, dirty(), "the refusal saw the late block");
            Interleaved.write(s, "slow", block, 12); // around: the cached copy is dropped
            assertEquals(0, dirty());
        });
        s.commands.manager = swaps.object;
        long before = capacity();
        String r = s.run("cache:resize slow");
        assertTrue(r.startsWith("slow: writecache on ssd resized from "), r);
        assertEquals(2, swaps.calls.get(), "refused once, then done");
        assertTrue(capacity() > before, before + " → " + capacity());
        try (DeviceHandle h = s.manager.open("slow", "test")) {
            ByteBuffer b = ByteBuffer.allocate(VerifiedIo.BLOCK);
            h.read(block * VerifiedIo.BLOCK, b);
            assertEquals(12, VerifiedIo.stampOf(b.flip(), block), "the write that went around");
            checkScattered(h, 100, 2);
        }
    }

    /** Shrunk: the readcache first, then its device; the cache comes back over the smaller device. */
    @Test
    void aReadcacheShrinksBeforeItsCacheDevice() throws Exception {
        window(16 * MIB);
        s.run("cache:attach slow readcache cache=ssd");
        try (DeviceHandle h = s.manager.open("slow", "test")) {
            ByteBuffer b = ByteBuffer.allocate(VerifiedIo.BLOCK);
            for (long block = 0; block < 600; block += 2) {
                h.read(block * VerifiedIo.BLOCK, b.clear());
            }
        }
        long before = capacity();
        DeviceHandle h = s.manager.open("slow", "nbd:t");
        VerifiedIo io = new VerifiedIo(List.of(h), 4, 64).start(pool);
        io.awaitOps(300);
        String r = s.run("cache:resize slow size=6M");
        io.awaitOps(300);
        io.stop();
        assertEquals(0, io.errors.get(), io.summary() + " " + io.firstErrors);
        assertEquals(0, io.mismatches.get(), io.summary());
        assertTrue(r.startsWith("slow: readcache on ssd resized from "), r);
        assertTrue(r.contains("nothing to write back; its cached copies were dropped"), r);
        long after = capacity();
        assertTrue(after < before / 2 && after > 0, before + " → " + after);
        window(6 * MIB); // the device can shrink now: the cache uses none of what goes
        assertEquals(0, io.verifyAll(h));
        h.close();
        s.restart(s.store.snapshot());
        assertEquals("readcache", s.manager.info("slow").orElseThrow().type());
        assertEquals(after, capacity());
        try (DeviceHandle again = s.manager.open("slow", "nbd:t")) {
            assertEquals(0, io.verifyAll(again));
        }
    }

    /** A log-structured cache refuses, in one line, saying what to do instead; nothing is drained or stored. */
    @Test
    void writeboostRefusesAndNothingChanges() throws Exception {
        window(24 * MIB);
        s.run("cache:attach slow writeboost cache=ssd writeback_threshold=0");
        writeScattered(200, 3);
        long dirty = dirty();
        Map<String, DeviceDefinition> stored = s.store.snapshot();
        assertEquals("slow: a writeboost cache cannot be resized in place (its format keeps the size it was made with); "
                + "for a bigger cache use cache:switch slow writeboost cache=BIGGERDEV (it writes the dirty data back "
                + "first)", s.error("cache:resize slow"));
        assertEquals(dirty, dirty(), "nothing was written back");
        assertEquals(stored, s.store.snapshot(), "nothing stored changed");
    }

    @Test
    void badInputIsOneLineAndChangesNothing() throws Exception {
        s.run("cache:attach slow writecache cache=ssd");
        writeScattered(100, 4);
        long dirty = dirty();
        List<DeviceInfo> before = s.manager.list();
        Map<String, DeviceDefinition> stored = s.store.snapshot();
        assertTrue(s.error("cache:resize").startsWith("usage: cache:resize DEV [size=SIZE]"));
        String usage = "; usage: cache:resize DEV [size=SIZE], or cache:resize --cancel DEV";
        assertEquals("cache:resize: missing DEV before \"size=4M\"" + usage, s.error("cache:resize size=4M"));
        assertEquals("cache:resize: unexpected \"extra\"" + usage, s.error("cache:resize slow extra"));
        assertEquals("cache:resize: size= is given twice" + usage, s.error("cache:resize slow size=4M size=8M"));
        assertTrue(s.error("cache:resize nope").contains("no device named 'nope'"));
        assertEquals("device 'big' is a crash device, not a cache", s.error("cache:resize big"));
        assertEquals("slow: size=1G is larger than its cache device ssd (8.0 MiB); grow ssd first (e.g. dev:reload ssd "
                + "file path=… size=… create=true), or give a smaller size", s.error("cache:resize slow size=1G"));
        assertTrue(s.error("cache:resize slow size=lots").contains("size=lots is not a size"));
        assertEquals("cache:resize: nope= is unknown; allowed: size=" + usage, s.error("cache:resize slow nope=1"));
        assertEquals("slow: size=4k is too small for a cache; give at least 1.0 MiB", s.error("cache:resize slow size=4k"));
        assertEquals("slow: no cache:resize is running; nothing to cancel", s.error("cache:resize --cancel slow"));
        assertEquals(before, s.manager.list(), "devices unchanged");
        assertEquals(stored, s.store.snapshot(), "store unchanged");
        assertEquals(dirty, dirty(), "nothing was drained for a mistake");
    }

    @Test
    void cancelDuringTheDrainKeepsTheCacheAsItWas() throws Exception {
        s.run("cache:attach slow writecache cache=ssd high_watermark=90 low_watermark=85");
        writeScattered(300, 6);
        long before = capacity();
        GatedDevice backing = s.gates.get("slow");
        backing.closeAfter(100);
        ByteArrayOutputStream first = new ByteArrayOutputStream();
        CommandSession console1 = s.console(first);
        window(16 * MIB);
        Map<String, DeviceDefinition> grown = s.store.snapshot();
        Future<Object> rs = pool.submit(() -> console1.execute("cache:resize slow"));
        DetachCommandTest.await("the writeback held half-way", () -> backing.waiting() > 0);
        assertEquals("slow: cancelling the resize (its console prints how far it got)",
                s.elsewhere(pool, "cache:resize --cancel slow"));
        backing.open();
        try {
            Object r = rs.get(60, TimeUnit.SECONDS);
            fail("should be cancelled, returned " + r);
        } catch (java.util.concurrent.ExecutionException e) {
            assertInstanceOf(InterruptedException.class, e.getCause(), String.valueOf(e.getCause()));
        }
        String report = first.toString(StandardCharsets.UTF_8);
        assertTrue(report.matches("(?s).*slow: resize cancelled: [\\d,]+ of [\\d,]+ blocks written back, [\\d,]+ still "
                + "dirty; the cache stays attached, mode writeback\\s*"), report);
        console1.close();
        assertEquals(before, capacity(), "the old layout");
        assertEquals(grown, s.store.snapshot(), "nothing stored changed");
        try (DeviceHandle h = s.manager.open("slow", "test")) {
            checkScattered(h, 300, 6);
        }
    }

    /**
     * A power cut at every phase of a resize of a writecache with dirty blocks: after the drain, at
     * the commit (0 before, 1 after), while the format of the new layout is held and the backing
     * device serves the clients, and after the second store (3). The disk rule holds after the
     * restart, and the cache has the old layout before the commit, the new one after it.
     */
    @ParameterizedTest(name = "{0}, seed {1}")
    @MethodSource("cuts")
    void aPowerCutAtEachPhaseRestartsConsistent(String phase, int seed) throws Exception {
        window(24 * MIB);
        PowerCuts.Cut cut = PowerCuts.run(s, pool, "slow", seed * 17L + phase.hashCode(),
                () -> {
                    s.run("cache:attach slow writecache cache=ssd cache_size=8M high_watermark=90 low_watermark=85");
                    writeScattered(200, 8);
                },
                crash -> {
                    switch (phase) {
                        case "drained" -> s.commands.resizes.hook = (device, p) -> {
                            s.commands.resizes.hook = (dd, pp) -> { };
                            crash.run();
                        };
                        case "bridged" -> s.store.armCrash(1, () -> {
                            GatedDevice cacheDisk = s.gates.get("big");
                            cacheDisk.closeAfter(0);
                            pool.submit(() -> {
                                DetachCommandTest.await("the format held", () -> cacheDisk.waiting() > 0);
                                crash.run();
                                cacheDisk.open();
                                return null;
                            });
                        });
                        default -> s.store.armCrash(Integer.parseInt(phase), crash);
                    }
                },
                () -> s.run("cache:resize slow"));
        boolean committed = !phase.equals("drained") && !phase.equals("0");
        DeviceInfo slow = PowerCuts.checkDiskRule(s, "slow", cut, "resize at " + phase);
        assertEquals("writecache", slow.type());
        assertEquals(committed ? Long.toString(24 * MIB) : "8M", stored("slow").arguments().get("cache_size"));
        try (DeviceHandle h = s.manager.open("slow", "test")) {
            checkScattered(h, 200, 8);
        }
        if (!committed) {
            assertTrue(s.run("cache:resize slow").startsWith("slow: writecache on ssd resized"), "runs again");
        }
    }

    static Stream<Arguments> cuts() {
        int seeds = Boolean.getBoolean("strata.soak") ? 30 : 3;
        List<Arguments> all = new ArrayList<>();
        for (String phase : List.of("drained", "0", "1", "bridged", "3")) {
            for (int seed = 1; seed <= seeds; seed++) {
                all.add(Arguments.of(phase, seed));
            }
        }
        return all.stream();
    }
}
