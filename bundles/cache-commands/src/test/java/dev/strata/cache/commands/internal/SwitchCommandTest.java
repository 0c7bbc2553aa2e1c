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
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import org.apache.felix.service.command.CommandSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import dev.strata.api.CacheMode;
import dev.strata.api.CacheTarget;
import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceState;
import dev.strata.core.internal.DeviceDefinition;
import dev.strata.testsupport.load.VerifiedIo;

/**
 * {@code cache:switch} on the real device manager with real writeboost, writecache and readcache
 * targets over crashable disks: every kind of switch under verified I/O through a handle (an
 * export), with the longest client request recorded; a power cut at every phase, then a restart
 * (the disk rule); cancel at every phase; bad input.
 */
class SwitchCommandTest {
    static final long MIB = 1L << 20;
    static final int DIRTY = 600;
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
        s.gates.values().forEach(GatedDevice::open);
        s.close();
        pool.shutdownNow();
        pool.awaitTermination(30, TimeUnit.SECONDS);
    }

    /** Attaches a writeboost that keeps what is written dirty, and writes {@link #DIRTY} blocks through it. */
    private void attachDirty() throws Exception {
        attachDirty(0, 2048);
    }

    /** As {@link #attachDirty()}, in blocks {@code [from, from + span)}. */
    private void attachDirty(long from, long span) throws Exception {
        s.run("cache:attach slow writeboost cache=ssd writeback_threshold=0 nr_max_batched_writeback=1");
        try (DeviceHandle h = s.manager.open("slow", "test")) {
            ByteBuffer b = ByteBuffer.allocate(VerifiedIo.BLOCK);
            for (int i = 0; i < DIRTY; i++) {
                long block = from + i * 37L % span; // scattered: a sequential stream would bypass the cache
                VerifiedIo.fill(b.clear(), block, 7);
                h.write(block * VerifiedIo.BLOCK, b, 0);
            }
            h.flush();
        }
        assertTrue(dirty() > 0, "the cache holds dirty blocks");
    }

    private long dirty() throws Exception {
        return s.manager.withTarget("slow", CacheTarget.class, CacheTarget::dirtyBlocks);
    }

    private long cached() throws Exception {
        return s.manager.withTarget("slow", CacheTarget.class, CacheTarget::cachedBlocks);
    }

    private CacheMode mode() throws Exception {
        return s.manager.withTarget("slow", CacheTarget.class, CacheTarget::mode);
    }

    private void checkStillWriteboost() throws Exception {
        DeviceInfo slow = s.manager.info("slow").orElseThrow();
        assertEquals("writeboost", slow.type());
        assertEquals(DeviceState.ACTIVE, slow.state());
        assertEquals(List.of("slow.crash", "ssd"), slow.lower());
        assertEquals(CacheMode.WRITEBACK, mode(), "the old mode is back");
    }

    /**
     * writeboost (ssd) → writecache (ssd2, built alongside) → readcache (ssd2 again, in place) →
     * readcache with another policy (adopted: the cached blocks stay) → writeboost (ssd): under
     * verified I/O the whole time, through a handle that stays open; then a restart.
     */
    @Test
    void everyKindOfSwitchUnderVerifiedIo() throws Exception {
        String id = s.manager.info("slow").orElseThrow().id();
        DeviceHandle h = s.manager.open("slow", "nbd:t");
        VerifiedIo io = new VerifiedIo(List.of(h), 4, 64).start(pool);
        io.awaitOps(300);
        s.run("cache:attach slow writeboost cache=ssd writeback_threshold=0"); // dirty data stays in the cache
        io.awaitOps(800);
        List<String> lines = new ArrayList<>();
        long longest = 0;
        for (String cmd : List.of("cache:switch slow writecache cache=ssd2", "cache:switch slow readcache policy=lru",
                "cache:switch slow readcache policy=nhit", "cache:switch slow writeboost cache=ssd")) {
            io.resetLongest();
            String r = s.run(cmd);
            long during = io.resetLongest();
            longest = Math.max(longest, during);
            lines.add(r + " [longest client request during it " + during / 1000 + " µs]");
            io.awaitOps(400);
            if (cmd.contains("policy=lru")) {
                io.awaitOps(400); // reads promote into the readcache
            }
            if (cmd.contains("nhit")) {
                assertTrue(r.matches("slow: switched to readcache \\(cache ssd2; was readcache on ssd2\\), cached data "
                        + "kept; I/O paused [0-9.]+ (µs|ms)"), r);
            }
        }
        io.stop();
        lines.forEach(System.out::println);
        System.out.println("cache:switch clients: " + io.summary() + "; longest request during a switch " + longest / 1000
                + " µs");
        assertEquals(0, io.errors.get(), io.summary() + " " + io.firstErrors);
        assertEquals(0, io.mismatches.get(), io.summary());
        assertTrue(lines.get(0).matches("slow: switched to writecache \\(cache ssd2; was writeboost on ssd\\), ([\\d,]+ "
                + "blocks written back first|nothing to write back); I/O paused .*"), lines.get(0));
        assertTrue(lines.get(1).startsWith("slow: switched to readcache (cache ssd2; was writecache on ssd2)"), lines.get(1));
        DeviceInfo slow = s.manager.info("slow").orElseThrow();
        assertEquals("writeboost", slow.type());
        assertEquals(id, slow.id(), "the device keeps its identity");
        assertEquals(List.of("slow.crash", "ssd"), slow.lower());
        assertEquals(List.of("nbd:t"), slow.holders(), "the export kept its handle");
        assertTrue(s.manager.info("ssd2").orElseThrow().holders().isEmpty(), "ssd2 is free");
        assertFalse(stored("slow").arguments().containsKey("format"), "format=true was for the first builds only: "
                + stored("slow"));
        assertEquals(0, io.verifyAll(h));
        h.close();
        s.restart(s.store.snapshot());
        assertEquals("writeboost", s.manager.info("slow").orElseThrow().type());
        try (DeviceHandle again = s.manager.open("slow", "nbd:t")) {
            assertEquals(0, io.verifyAll(again));
        }
        // and the stack an attach made still detaches back onto its own device
        assertTrue(s.run("cache:detach slow").startsWith("slow: detached; its crash target is back"));
    }

    /** A readcache policy change keeps every cached block (the new target adopts the old one's state). */
    @Test
    void aReadcachePolicyChangeKeepsTheCachedBlocks() throws Exception {
        s.run("cache:attach slow readcache cache=ssd policy=lru");
        try (DeviceHandle h = s.manager.open("slow", "test")) {
            ByteBuffer b = ByteBuffer.allocate(VerifiedIo.BLOCK);
            for (int round = 0; round < 3; round++) {
                for (long block = 0; block < 200; block += 3) {
                    h.read(block * VerifiedIo.BLOCK, b.clear());
                }
            }
        }
        long before = cached();
        assertTrue(before > 0, "reads were promoted");
        long ssdWrites = writes("ssd");
        String r = s.run("cache:switch slow readcache policy=wtinylfu");
        assertTrue(r.contains("cached data kept"), r);
        assertEquals(before, cached(), "the cached blocks stay");
        assertEquals("wtinylfu", s.manager.status("slow").get("policy"));
        assertTrue(writes("ssd") - ssdWrites < 8, "no invalidation, no format: " + (writes("ssd") - ssdWrites));
        s.restart(s.store.snapshot());
        assertEquals(before, cached(), "kept across a restart too");
    }

    /** The same cache device: drained and released by the old target before the new one formats it, under I/O. */
    @Test
    void theSameCacheDeviceUnderVerifiedIo() throws Exception {
        attachDirty(256, 1792); // clear of the blocks VerifiedIo writes and checks (0-255)
        DeviceHandle h = s.manager.open("slow", "nbd:t");
        VerifiedIo io = new VerifiedIo(List.of(h), 4, 64).start(pool);
        io.awaitOps(500);
        io.resetLongest();
        String r = s.run("cache:switch slow writecache");
        long during = io.resetLongest();
        io.awaitOps(500);
        io.stop();
        System.out.println(r + " — clients: " + io.summary() + "; longest request during it " + during / 1000 + " µs");
        assertEquals(0, io.errors.get(), io.summary() + " " + io.firstErrors);
        assertEquals(0, io.mismatches.get(), io.summary());
        assertTrue(r.matches("slow: switched to writecache \\(cache ssd; was writeboost on ssd\\), [\\d,]+ blocks written "
                + "back first; I/O paused .*"), r);
        DeviceDefinition stored = stored("slow");
        assertEquals(Map.of("backing", "slow.crash", "cache", "ssd"), stored.arguments(), "format=true was for the first build only");
        assertEquals(0, io.verifyAll(h));
        h.close();
        s.restart(s.store.snapshot());
        assertEquals("writecache", s.manager.info("slow").orElseThrow().type());
        try (DeviceHandle again = s.manager.open("slow", "nbd:t")) {
            assertEquals(0, io.verifyAll(again));
        }
    }

    /**
     * The same cache device: the new cache's format is not inside the pause. It is held (its writes
     * wait at the cache disk) while the clients keep reading, writing and verifying through the
     * backing device; then it completes and the new cache takes over in a second short pause.
     */
    @Test
    void theSameCacheDeviceServesFromTheBackingDeviceWhileTheNewCacheFormats() throws Exception {
        attachDirty(256, 1792);
        DeviceHandle h = s.manager.open("slow", "nbd:t");
        VerifiedIo io = new VerifiedIo(List.of(h), 4, 64).start(pool);
        io.awaitOps(300);
        GatedDevice ssd = s.gates.get("ssd");
        s.store.armCrash(1, () -> ssd.closeAfter(0)); // no power cut: just after the commit, hold the format
        Future<Object> sw = pool.submit(() -> s.run("cache:switch slow readcache"));
        DetachCommandTest.await("the new cache's format held", () -> ssd.waiting() > 0);
        long slowWrites = writes("slow");
        io.awaitOps(400); // served meanwhile: without the bridge they would wait at the closed gate
        assertTrue(writes("slow") > slowWrites, "the clients' writes went to the backing device");
        assertFalse(sw.isDone(), "the switch waits for its format");
        ssd.open();
        String r = String.valueOf(sw.get(60, TimeUnit.SECONDS));
        io.awaitOps(300);
        io.stop();
        System.out.println(r + " — clients: " + io.summary());
        assertEquals(0, io.errors.get(), io.summary() + " " + io.firstErrors);
        assertEquals(0, io.mismatches.get(), io.summary());
        assertTrue(r.startsWith("slow: switched to readcache (cache ssd; was writeboost on ssd)"), r);
        assertEquals("readcache", s.manager.info("slow").orElseThrow().type());
        assertEquals(0, io.verifyAll(h));
        h.close();
        s.restart(s.store.snapshot());
        assertFalse(stored("slow").arguments().containsKey("format"), String.valueOf(stored("slow")));
        try (DeviceHandle again = s.manager.open("slow", "nbd:t")) {
            assertEquals(0, io.verifyAll(again));
        }
    }

    /**
     * {@code format=true} given for a writecache over its own devices: it is not adopted but drained
     * first (with {@code cache_size=} such a format lays the cache out anew, erasing its slots).
     */
    @Test
    void aFormatOfTheSameWritecacheDrainsItFirst() throws Exception {
        attachDirty();
        String r = s.run("cache:switch slow writecache");
        assertTrue(r.contains("blocks written back first"), r);
        try (DeviceHandle h = s.manager.open("slow", "test")) {
            ByteBuffer b = ByteBuffer.allocate(VerifiedIo.BLOCK);
            for (int i = 0; i < DIRTY; i++) {
                long block = i * 37L % 2048;
                VerifiedIo.fill(b.clear(), block, 9);
                h.write(block * VerifiedIo.BLOCK, b, 0);
            }
            h.flush();
        }
        assertTrue(dirty() > 0, "the writecache holds dirty blocks");
        r = s.run("cache:switch slow writecache format=true");
        assertTrue(r.matches("slow: switched to writecache \\(cache ssd; was writecache on ssd\\), [\\d,]+ blocks "
                + "written back first; .*"), r);
        assertEquals(0, dirty());
        try (DeviceHandle h = s.manager.open("slow", "test")) {
            ByteBuffer b = ByteBuffer.allocate(VerifiedIo.BLOCK);
            for (int i = 0; i < DIRTY; i++) {
                long block = i * 37L % 2048;
                h.read(block * VerifiedIo.BLOCK, b.clear());
                assertEquals(9, VerifiedIo.stampOf(b.flip(), block), "block " + block);
            }
        }
    }

    /**
     * WHY ({@code DeviceInfo.waitingFor}, dev:list's column) said a changed configuration was refused;
     * a later cache:switch stored the device's definition over it, and WHY still showed the refusal.
     */
    @Test
    void aSwitchClearsAnEarlierRefusedConfiguration() throws Exception {
        s.run("cache:attach slow writeboost cache=ssd");
        DeviceDefinition running = stored("slow");
        Map<String, String> bad = new java.util.LinkedHashMap<>(running.arguments());
        bad.put("cache", "ghost");
        String key = s.store.save(new DeviceDefinition("slow", running.type(), bad, running.id(), running.tunables(),
                null, running.lowerOf())); // as a cm edit or a deploy/ file would change it
        s.manager.definitionChanged(key).get(60, TimeUnit.SECONDS);
        String why = s.manager.info("slow").orElseThrow().waitingFor();
        assertTrue(String.valueOf(why).startsWith("the changed configuration could not be applied: ")
                && why.contains("ghost"), why);
        assertEquals("writeboost", s.manager.info("slow").orElseThrow().type(), "the device keeps its definition");
        assertTrue(s.run("cache:switch slow writecache cache=ssd2").startsWith("slow: switched to writecache"));
        assertEquals("ssd2", stored("slow").arguments().get("cache"), "the switch stored its definition over the refused one");
        DeviceInfo slow = s.manager.info("slow").orElseThrow();
        assertEquals(null, slow.waitingFor(), "the refusal is out of date: " + slow);
        assertFalse(s.manager.status("slow").containsKey("last_error"), String.valueOf(s.manager.status("slow")));
    }

    private DeviceDefinition stored(String name) {
        return s.store.snapshot().values().stream().filter(d -> d.name().equals(name)).findFirst().orElseThrow();
    }

    private long writes(String disk) {
        String st = s.disks.get(disk).stats(); // "NAME: writes N, fua …"
        return Long.parseLong(st.replaceAll(".*: writes (\\d+),.*", "$1"));
    }

    // ---- power cuts

    /**
     * A power cut at every phase, for a switch onto another cache device (alongside) and onto the
     * same one (in place): {@code drained} (after the drain, before the swap), then the store's
     * points: 0/1 around the commit, {@code bridged} (in place: while the new target's format is held
     * and the clients are served by the backing device), 2/3 around storing the definition without
     * {@code format=true} (in place only).
     */
    @ParameterizedTest(name = "{0} at {1}, seed {2}")
    @MethodSource("cuts")
    void aPowerCutAtEachPhaseRestartsConsistent(String target, String phase, int seed) throws Exception {
        String id = s.manager.info("slow").orElseThrow().id();
        String cmd = "cache:switch slow writecache" + (target.equals("ssd2") ? " cache=ssd2" : "");
        PowerCuts.Cut cut = PowerCuts.run(s, pool, "slow", seed * 31L + phase.hashCode(),
                () -> s.run("cache:attach slow writeboost cache=ssd writeback_threshold=0"),
                crash -> {
                    if (phase.equals("bridged")) {
                        // after the commit the new writecache formats ssd: held there, while the
                        // clients' writes reach the slow disk through the bridge, the power goes
                        s.store.armCrash(1, () -> {
                            GatedDevice ssd = s.gates.get("ssd");
                            ssd.closeAfter(0);
                            pool.submit(() -> {
                                DetachCommandTest.await("the format held", () -> ssd.waiting() > 0);
                                long before = writes("slow");
                                DetachCommandTest.await("clients served through the bridge",
                                        () -> writes("slow") > before + 20);
                                crash.run();
                                ssd.open();
                                return null;
                            });
                        });
                    } else if (phase.equals("drained")) {
                        s.commands.switches.hook = (device, p) -> {
                            s.commands.switches.hook = (dd, pp) -> { };
                            crash.run();
                        };
                    } else {
                        s.store.armCrash(Integer.parseInt(phase), crash);
                    }
                },
                () -> s.run(cmd));
        boolean committed = phase.equals("bridged") || !phase.equals("drained") && Integer.parseInt(phase) >= 1;
        // the operation may fail after the cut either way (its disks are dead): the restart decides
        DeviceInfo slow = PowerCuts.checkDiskRule(s, "slow", cut, target + " at " + phase);
        assertEquals(committed ? "writecache" : "writeboost", slow.type(), slow.toString());
        assertEquals(id, slow.id());
        assertEquals(List.of("slow.crash", committed ? target : "ssd"), slow.lower());
        if (!committed) {
            assertTrue(s.run(cmd).startsWith("slow: switched to writecache"), "the switch runs again after a rollback");
        }
        assertTrue(s.run("cache:detach slow").startsWith("slow: detached; its crash target is back"));
    }

    static Stream<Arguments> cuts() {
        int seeds = Boolean.getBoolean("strata.soak") ? 30 : 3;
        List<Arguments> all = new ArrayList<>();
        for (String target : List.of("ssd2", "ssd")) {
            List<String> phases = target.equals("ssd") ? List.of("drained", "0", "1", "bridged", "2", "3")
                    : List.of("drained", "0", "1");
            for (String phase : phases) {
                for (int seed = 1; seed <= seeds; seed++) {
                    all.add(Arguments.of(target, phase, seed));
                }
            }
        }
        return all.stream();
    }

    // ---- cancel at every phase

    @Test
    void cancelDuringTheDrainFromAnotherConsole() throws Exception {
        attachDirty();
        long before = dirty();
        Map<String, DeviceDefinition> stored = s.store.snapshot();
        GatedDevice backing = s.gates.get("slow");
        backing.closeAfter(DIRTY / 2);
        ByteArrayOutputStream first = new ByteArrayOutputStream();
        CommandSession console1 = s.console(first);
        Future<Object> sw = pool.submit(() -> console1.execute("cache:switch slow writecache cache=ssd2"));
        DetachCommandTest.await("the writeback held half-way", () -> backing.waiting() > 0);
        assertEquals(CacheMode.WRITEAROUND, mode(), "new writes stay out of the cache while it drains");
        String answer = other("cache:switch --cancel slow");
        backing.open();
        assertEquals("slow: cancelling the switch (its console prints how far it got)", answer);
        assertInstanceOf(InterruptedException.class, failure(sw));
        String report = first.toString(StandardCharsets.UTF_8);
        assertTrue(report.matches("(?s).*slow: switch cancelled: [\\d,]+ of [\\d,]+ blocks written back, [\\d,]+ still "
                + "dirty; the cache stays attached, mode writeback\\s*"), report);
        console1.close();
        checkStillWriteboost();
        assertTrue(dirty() < before, "what was written back stays so");
        assertEquals(stored, s.store.snapshot(), "nothing stored changed");
        assertTrue(s.manager.info("ssd2").orElseThrow().holders().isEmpty(), "ssd2 untouched");
    }

    @Test
    void ctrlCDuringTheDrain() throws Exception {
        attachDirty();
        GatedDevice backing = s.gates.get("slow");
        backing.closeAfter(DIRTY / 2);
        ByteArrayOutputStream first = new ByteArrayOutputStream();
        CommandSession console1 = s.console(first);
        Future<Object> sw = pool.submit(() -> console1.execute("cache:switch slow writecache"));
        DetachCommandTest.await("the writeback held half-way",
                () -> backing.waiting() > 0 && console1.foregroundJob() != null);
        console1.foregroundJob().interrupt();
        // Gogo passes the interrupt on asynchronously (Job.interrupt() cancels the job's thread, which
        // then interrupts the command's): opened before the command has taken it, the gate lets the
        // rest of the drain and the switch finish first, and the command rightly completes. The command
        // reports its cancel while the batch is still held (DetachCommandTest.aCancelCountsTheBatchInFlight
        // checks that for a drain), so the gate opens only after the report: the held writes then
        // complete, as on a slow device, not a dead one.
        DetachCommandTest.await("the report", () -> first.toString(StandardCharsets.UTF_8).contains("the cache stays attached"));
        backing.open();
        assertInstanceOf(InterruptedException.class, failure(sw));
        console1.close();
        checkStillWriteboost();
    }

    @Test
    void ctrlCWhileTheNewCacheIsBuiltKeepsTheOldOneInItsOldMode() throws Exception {
        // Ctrl-C reaches the thread in the swap too: here while the new writecache formats ssd2.
        // The restore ran with the interrupt still set, was refused, and left the writeboost in
        // writearound; the shell printed only "interrupted"
        attachDirty();
        GatedDevice ssd2 = s.gates.get("ssd2");
        s.commands.switches.hook = (device, phase) -> ssd2.closeAfter(0);
        ByteArrayOutputStream first = new ByteArrayOutputStream();
        CommandSession console1 = s.console(first);
        Future<Object> sw = pool.submit(() -> console1.execute("cache:switch slow writecache cache=ssd2"));
        DetachCommandTest.await("the new cache's format held at ssd2's gate",
                () -> ssd2.waiting() > 0 && console1.foregroundJob() != null);
        console1.foregroundJob().interrupt();
        assertInstanceOf(InterruptedException.class, failure(sw));
        DetachCommandTest.await("the report", () -> first.toString(StandardCharsets.UTF_8).contains("slow: switch cancelled: "));
        console1.close();
        ssd2.open();
        s.commands.switches.hook = (device, phase) -> { };
        checkStillWriteboost();
        assertTrue(s.run("cache:switch slow writecache cache=ssd2").startsWith("slow: switched to writecache"));
    }

    @Test
    void cancelAfterTheDrain() throws Exception {
        attachDirty();
        Map<String, DeviceDefinition> stored = s.store.snapshot();
        AtomicReference<String> answer = new AtomicReference<>();
        s.commands.switches.hook = (device, phase) -> answer.set(fromAnotherThread("cache:switch --cancel slow"));
        Exception e = null;
        try {
            s.run("cache:switch slow writecache cache=ssd2");
        } catch (Exception x) {
            e = x;
        }
        assertInstanceOf(InterruptedException.class, e, String.valueOf(e));
        assertEquals("slow: cancelling the switch (its console prints how far it got)", answer.get());
        assertTrue(s.output().contains("slow: switch cancelled: "), s.output());
        checkStillWriteboost();
        assertEquals(stored, s.store.snapshot(), "nothing stored changed");
        s.commands.switches.hook = (device, phase) -> { };
        assertFalse(Thread.currentThread().isInterrupted());
        assertTrue(s.run("cache:switch slow writecache cache=ssd2").startsWith("slow: switched to writecache"));
    }

    @Test
    void cancelDuringTheSwapIsTooLate() throws Exception {
        attachDirty();
        AtomicReference<String> answer = new AtomicReference<>();
        s.store.armCrash(0, () -> answer.set(fromAnotherThread("cache:switch --cancel slow"))); // no power cut: the moment
        String r = s.run("cache:switch slow writecache cache=ssd2");
        assertEquals("slow: too late to cancel: the switch is swapping the target (it takes one short pause)", answer.get());
        assertTrue(r.startsWith("slow: switched to writecache"), r);
    }

    // ---- bad input

    @Test
    void badInputIsOneLineAndChangesNothing() throws Exception {
        s.disk("other", 8 * MIB);
        s.disk("ssd3", 17 * MIB);
        s.manager.create("wb", "writeboost", Map.of("backing", "other", "cache", "ssd3", "format", "true"));
        attachDirty();
        List<DeviceInfo> before = s.manager.list();
        Map<String, DeviceDefinition> stored = s.store.snapshot();
        long dirty = dirty();
        assertTrue(error("cache:switch").startsWith("usage: cache:switch DEV TYPE"));
        String usage = "; usage: cache:switch DEV TYPE [cache=CDEV] [key=value…], or cache:switch --cancel DEV";
        assertEquals("cache:switch: missing TYPE" + usage, error("cache:switch slow"));
        assertEquals("cache:switch: unexpected \"extra\"" + usage, error("cache:switch slow writecache cache=ssd2 extra"));
        assertEquals("cache:switch: cache= is given twice" + usage, error("cache:switch slow writecache cache=ssd2 cache=ssd3"));
        assertEquals("cache:switch: unknown option --bogus" + usage, error("cache:switch --bogus slow writecache"));
        assertEquals("cache:switch: unexpected \"extra\"" + usage, error("cache:switch --cancel slow extra"));
        assertTrue(error("cache:switch nope writecache").contains("no device named 'nope'"));
        assertEquals("device 'other' is a crash device, not a cache", error("cache:switch other writecache"));
        assertTrue(error("cache:switch slow nope").contains("unknown target type 'nope'"));
        assertTrue(error("cache:switch slow crash name=x").contains("names no backing device"));
        assertTrue(error("cache:switch slow writecache backing=x").contains("leave out backing="));
        assertTrue(error("cache:switch slow writecache cache=ghost").contains("no device named 'ghost'"));
        assertTrue(error("cache:switch slow writecache cache=ssd3").contains("ssd3 is held exclusively by wb"));
        assertTrue(error("cache:switch slow writecache cache=slow.crash").contains("the same device"));
        assertTrue(error("cache:switch slow writecache cache=ssd2 nope=1").contains("nope"));
        assertTrue(error("cache:switch slow writeboost writeback_threshold=0 nr_max_batched_writeback=1")
                .contains("nothing to switch"));
        assertEquals("slow: no cache:switch is running; nothing to cancel", error("cache:switch --cancel slow"));
        assertEquals(before, s.manager.list(), "devices unchanged");
        assertEquals(stored, s.store.snapshot(), "store unchanged");
        assertEquals(CacheMode.WRITEBACK, mode());
        assertEquals(dirty, dirty(), "nothing was drained for a mistake");
    }

    private String error(String line) {
        return s.error(line);
    }

    private String other(String line) throws Exception {
        return s.elsewhere(pool, line);
    }

    private String fromAnotherThread(String line) {
        return s.elsewhereThroughInterrupts(pool, line);
    }

    private static Exception failure(Future<Object> f) throws Exception {
        return LiveStack.failure(f);
    }
}
