package dev.strata.cache.commands.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.apache.felix.service.command.CommandSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import dev.strata.api.CacheMode;
import dev.strata.api.CacheTarget;
import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceState;
import dev.strata.core.internal.DeviceDefinition;
import dev.strata.testsupport.load.VerifiedIo;

/**
 * {@code cache:detach} of a cache that {@code cache:attach} put in front of a live device, on the
 * real manager with a real writeboost over crashable disks: the device gets its old target back
 * (collapse), under verified I/O; a power cut at every step of the swap; cancel at every phase;
 * a clean cache writes nothing back; {@code --keep-cache}; bad input.
 */
class DetachCommandTest {
    static final long MIB = 1L << 20;
    static final int DIRTY = 600;
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
        s.gates.values().forEach(GatedDevice::open);
        s.close();
        pool.shutdownNow();
        pool.awaitTermination(30, TimeUnit.SECONDS);
    }

    /** Attaches a writeboost that keeps what is written dirty, and writes {@link #DIRTY} blocks through it. */
    private void attachDirty() throws Exception {
        // one segment (255 blocks) per writeback batch, so the drain reports progress between batches
        s.run("cache:attach slow writeboost cache=ssd writeback_threshold=0 nr_max_batched_writeback=1");
        try (DeviceHandle h = s.manager.open("slow", "test")) {
            ByteBuffer b = ByteBuffer.allocate(VerifiedIo.BLOCK);
            for (int i = 0; i < DIRTY; i++) {
                long block = i * 37L % 2048; // scattered: a sequential stream would bypass the cache
                VerifiedIo.fill(b.clear(), block, 7);
                h.write(block * VerifiedIo.BLOCK, b, 0);
            }
            h.flush();
        }
        assertTrue(dirty() > 0, "the cache holds dirty blocks: " + s.run("cache:stats --all slow"));
    }

    private long dirty() throws Exception {
        return s.manager.withTarget("slow", CacheTarget.class, CacheTarget::dirtyBlocks);
    }

    private CacheMode mode() throws Exception {
        return s.manager.withTarget("slow", CacheTarget.class, CacheTarget::mode);
    }

    private long writes(String disk) {
        String st = s.disks.get(disk).stats(); // "NAME: writes N, fua …"
        return Long.parseLong(st.replaceAll(".*: writes (\\d+),.*", "$1"));
    }

    private void checkCollapsed(String id) {
        DeviceInfo slow = s.manager.info("slow").orElseThrow();
        assertEquals("crash", slow.type(), slow.toString());
        assertEquals(Map.of("name", "slow"), slow.arguments());
        assertEquals(id, slow.id(), "the device keeps its identity");
        assertTrue(s.manager.info("slow.crash").isEmpty(), "the lower device is gone");
        assertTrue(s.manager.info("ssd").orElseThrow().holders().isEmpty(), "the cache device is free");
        assertTrue(s.store.snapshot().values().stream().noneMatch(d -> d.name().equals("slow.crash")));
    }

    private void checkStillCached() throws Exception {
        DeviceInfo slow = s.manager.info("slow").orElseThrow();
        assertEquals("writeboost", slow.type());
        assertEquals(DeviceState.ACTIVE, slow.state());
        assertEquals(List.of("slow.crash", "ssd"), slow.lower());
        assertEquals(CacheMode.WRITEBACK, mode(), "the old mode is back");
    }

    /**
     * As {@code ResizeCommandTest.aRefusalWhoseDirtyBlocksWereWrittenAroundMeanwhileIsRetried}: the
     * collapse refused for a block a late write put in the cache after the drain, dropped since by a
     * client's write around, is tried again, not failed (it took "nothing dirty now" for another
     * reason).
     */
    @Test
    void aRefusalWhoseDirtyBlocksWereWrittenAroundMeanwhileIsRetried() throws Exception {
        String id = s.manager.info("slow").orElseThrow().id();
        s.run("cache:attach slow writecache cache=ssd");
        Interleaved.write(s, "slow", 3, 1);
        Interleaved<dev.strata.api.DeviceManager> collapses = Interleaved.manager(s.manager, "collapse", () -> Interleaved.lateWrite(s, "slow", 7, 11),
                () -> {
                    assertEquals(1, dirty(), "the refusal saw the late block");
                    Interleaved.write(s, "slow", 7, 12); // around: the cached copy is dropped
                    assertEquals(0, dirty());
                });
        s.commands.manager = collapses.object;
        String r = s.run("cache:detach slow");
        assertTrue(r.startsWith("slow: detached; its crash target is back"), r);
        assertEquals(2, collapses.calls.get(), "refused once, then done");
        checkCollapsed(id);
        try (DeviceHandle h = s.manager.open("slow", "test")) {
            ByteBuffer b = ByteBuffer.allocate(VerifiedIo.BLOCK);
            h.read(7 * VerifiedIo.BLOCK, b);
            assertEquals(12, VerifiedIo.stampOf(b.flip(), 7), "the write that went around");
            h.read(3 * VerifiedIo.BLOCK, b.clear());
            assertEquals(1, VerifiedIo.stampOf(b.flip(), 3), "written back by the drain");
        }
    }

    @Test
    void detachUnderVerifiedIoCollapsesOntoTheLowerDevice() throws Exception {
        String id = s.manager.info("slow").orElseThrow().id();
        DeviceHandle h = s.manager.open("slow", "nbd:t");
        VerifiedIo io = new VerifiedIo(List.of(h), 4, 64).start(pool);
        io.awaitOps(300);
        s.run("cache:attach slow writeboost cache=ssd writeback_threshold=0"); // dirty data stays in the cache
        io.awaitOps(1500);
        long before = io.resetLongest();
        String r = s.run("cache:detach slow");
        long during = io.resetLongest();
        io.awaitOps(300);
        io.stop();
        System.out.println(r + " — clients: " + io.summary() + "; longest request before the detach " + before / 1000
                + " µs, during it " + during / 1000 + " µs, after it " + io.longestNanos.get() / 1000 + " µs");
        assertEquals(0, io.errors.get(), io.summary());
        assertEquals(0, io.mismatches.get(), io.summary());
        assertTrue(r.matches("slow: detached; its crash target is back \\(slow\\.crash is gone\\), ([\\d,]+ blocks written "
                + "back|nothing to write back); I/O paused [0-9.]+ (µs|ms)"), r);
        checkCollapsed(id);
        assertEquals(List.of("nbd:t"), s.manager.info("slow").orElseThrow().holders(), "the export kept its handle");
        assertEquals(0, io.verifyAll(h));
        h.close();
        s.restart(s.store.snapshot());
        checkCollapsed(id);
        try (DeviceHandle again = s.manager.open("slow", "nbd:t")) {
            assertEquals(0, io.verifyAll(again));
        }
    }

    /** Held half-way, the drain keeps reporting (twice a second) with the time left; then it completes. */
    @Test
    void theProgressLineHasAnEta() throws Exception {
        attachDirty();
        GatedDevice backing = s.gates.get("slow");
        backing.closeAfter(DIRTY / 2);
        ByteArrayOutputStream first = new ByteArrayOutputStream();
        CommandSession console1 = s.console(first);
        Future<Object> detach = pool.submit(() -> console1.execute("cache:detach slow"));
        await("a progress line with an ETA", () -> first.toString(StandardCharsets.UTF_8)
                .matches("(?s).*writeback slow: [\\d,]+ of 600 blocks left \\(\\d+%\\), [\\d.]+ [KMGi]*B/s, ETA \\d+ (s|min).*"));
        assertEquals(CacheMode.WRITEAROUND, mode(), "new writes stay out of the cache while it drains");
        backing.open();
        String r = String.valueOf(detach.get(60, TimeUnit.SECONDS));
        console1.close();
        assertTrue(r.startsWith("slow: detached; its crash target is back"), r);
        assertTrue(first.toString(StandardCharsets.UTF_8).contains("writeback slow: 0 of 600 blocks left (100%)"));
    }

    /** Already clean: no writeback (the backing disk gets not one write), no progress line. */
    @Test
    void aCleanCacheIsNotWrittenBack() throws Exception {
        attachDirty();
        assertTrue(s.run("cache:writeback slow").startsWith("slow: clean"));
        assertEquals(0, dirty());
        long backing = writes("slow");
        s.out.reset();
        String r = s.run("cache:detach slow");
        assertTrue(r.startsWith("slow: detached; its crash target is back (slow.crash is gone), nothing to write back"), r);
        assertEquals(0, writes("slow") - backing, "writes to the backing disk during the detach of a clean cache");
        assertFalse(s.output().contains("writeback slow"), "no progress line: " + s.output());
    }

    /**
     * {@code --keep-cache}: the cache device's copies are not invalidated, and still no cache can be
     * reopened over the collapsed device with them (it was bound to the lower device, now gone).
     */
    @Test
    void keepCacheLeavesTheCacheDeviceAsItWasAndUnusableOverTheChangedDevice() throws Exception {
        attachDirty();
        String r = s.run("cache:detach --keep-cache slow");
        assertTrue(r.endsWith("the cache device's contents kept; I/O paused " + r.replaceAll(".*I/O paused ", "")), r);
        assertEquals("crash", s.manager.info("slow").orElseThrow().type());
        Exception refused = null;
        try {
            s.manager.create("again", "writeboost", Map.of("backing", "slow", "cache", "ssd"));
        } catch (Exception e) {
            refused = e;
        }
        assertNotNull(refused, "a kept cache must not open over the collapsed device without format=true");
        assertTrue(refused.getMessage().contains("belongs to"), refused.getMessage());
    }

    /** Cut points of the swap: 0/1 around storing slow.crash staged, 2/3 around the commit, 4/5 around deleting slow.crash. */
    @ParameterizedTest(name = "point {0}, seed {1}")
    @MethodSource("cuts")
    void aPowerCutAtEachStepRestartsConsistent(int point, int seed) throws Exception {
        String id = s.manager.info("slow").orElseThrow().id();
        PowerCuts.Cut cut = PowerCuts.run(s, pool, "slow", seed * 31L + point,
                () -> s.run("cache:attach slow writeboost cache=ssd writeback_threshold=0"),
                crash -> s.store.armCrash(point, crash), () -> s.run("cache:detach slow"));
        if (cut.failure() != null) {
            assertTrue(point < 3, "failed after its commit: " + cut.failure());
        }
        boolean committed = point >= 3;
        DeviceInfo slow = PowerCuts.checkDiskRule(s, "slow", cut, "at point " + point);
        if (committed) {
            checkCollapsed(id);
        } else {
            assertEquals("writeboost", slow.type());
            assertTrue(s.manager.info("slow.crash").isPresent());
            assertTrue(s.run("cache:detach slow").startsWith("slow: detached; its crash target is back"));
            checkCollapsed(id);
        }
    }

    /** Every point with 3 seeds, 30 with {@code -Dstrata.soak=true}. */
    static Stream<Arguments> cuts() {
        return PowerCuts.points(6);
    }

    // ---- cancel at every phase

    /** {@code cache:detach --cancel} from another console while the writeback is held half-way. */
    @Test
    void cancelDuringTheDrainFromAnotherConsole() throws Exception {
        attachDirty();
        long before = dirty();
        GatedDevice backing = s.gates.get("slow");
        backing.closeAfter(DIRTY / 2); // more than one writeboost segment (255 blocks), less than everything
        ByteArrayOutputStream first = new ByteArrayOutputStream();
        CommandSession console1 = s.console(first);
        Future<Object> detach = pool.submit(() -> console1.execute("cache:detach slow"));
        await("the writeback held half-way", () -> backing.waiting() > 0);
        String answer = other("cache:detach --cancel slow");
        backing.open();
        assertEquals("slow: cancelling the detach (its console prints how far it got)", answer);
        Exception e = failure(detach);
        assertInstanceOf(InterruptedException.class, e, String.valueOf(e));
        String report = first.toString(StandardCharsets.UTF_8);
        assertTrue(report.matches("(?s).*slow: detach cancelled: [\\d,]+ of [\\d,]+ blocks written back, [\\d,]+ still "
                + "dirty; the cache stays attached, mode writeback\\s*"), report);
        console1.close();
        checkStillCached();
        assertTrue(dirty() < before, "what was written back stays so");
        assertTrue(s.run("cache:detach slow").startsWith("slow: detached; its crash target is back"));
    }

    /** Cancelled after the drain, before the swap: the mode comes back, nothing stored changed. */
    @Test
    void cancelAfterTheDrain() throws Exception {
        attachDirty();
        Map<String, DeviceDefinition> stored = s.store.snapshot();
        AtomicReference<String> answer = new AtomicReference<>();
        s.commands.detaches.hook = (device, phase) -> {
            if (phase.equals("drained")) {
                answer.set(fromAnotherThread("cache:detach --cancel slow"));
            }
        };
        Exception e = null;
        try {
            s.run("cache:detach slow");
        } catch (Exception x) {
            e = x;
        }
        assertInstanceOf(InterruptedException.class, e, String.valueOf(e));
        assertEquals("slow: cancelling the detach (its console prints how far it got)", answer.get());
        assertTrue(s.output().contains("slow: detach cancelled: "), s.output());
        assertTrue(s.output().contains("; the cache stays attached, mode writeback"), s.output());
        checkStillCached();
        assertEquals(stored, s.store.snapshot(), "nothing stored changed");
        s.commands.detaches.hook = (device, phase) -> { };
        assertFalse(Thread.currentThread().isInterrupted());
        assertTrue(s.run("cache:detach slow").startsWith("slow: detached; its crash target is back"));
    }

    /** Once the swap has begun a cancel is refused with one line, and the detach completes. */
    @Test
    void cancelDuringTheSwapIsTooLate() throws Exception {
        attachDirty();
        String id = s.manager.info("slow").orElseThrow().id();
        AtomicReference<String> answer = new AtomicReference<>();
        s.store.armCrash(0, () -> answer.set(fromAnotherThread("cache:detach --cancel slow"))); // no power cut: just the moment
        String r = s.run("cache:detach slow");
        assertEquals("slow: too late to cancel: the detach is swapping the target (it takes one short pause)",
                answer.get());
        assertTrue(r.startsWith("slow: detached; its crash target is back"), r);
        checkCollapsed(id);
    }

    /**
     * A cancel while a batch is in flight (its backing writes held: a slow disk): the command
     * returns and reports while the writes are still held (it used to wait for the batch, 9 s and
     * more on a spindle), and the report is exact: the abandoned batch counts as nothing written
     * back and its blocks as still dirty (it said "0 of N blocks written back" while the batch
     * wrote back its blocks, before batches were abandoned), for every command that writes
     * everything back.
     */
    @ParameterizedTest
    @ValueSource(strings = {"cache:writeback slow", "cache:mode slow writearound", "cache:detach slow"})
    void aCancelCountsTheBatchInFlight(String command) throws Exception {
        attachDirty();
        long before = dirty();
        GatedDevice backing = s.gates.get("slow");
        backing.closeAfter(100); // inside the first batch (one segment, 255 blocks): none completed yet
        ByteArrayOutputStream first = new ByteArrayOutputStream();
        CommandSession console1 = s.console(first);
        Future<Object> run = pool.submit(() -> console1.execute(command));
        await("the first batch held", () -> backing.waiting() > 0 && console1.foregroundJob() != null);
        console1.foregroundJob().interrupt();
        assertInstanceOf(InterruptedException.class, failure(run));
        await("the report", () -> first.toString(StandardCharsets.UTF_8).contains(" still dirty"));
        assertTrue(backing.waiting() > 0, "the command reported while the batch was still held");
        String report = first.toString(StandardCharsets.UTF_8);
        Matcher m = Pattern.compile("slow: [a-z ]+ cancelled: ([\\d,]+) of ([\\d,]+) blocks written back, ([\\d,]+) "
                + "still dirty").matcher(report);
        assertTrue(m.find(), report);
        long written = Long.parseLong(m.group(1).replace(",", ""));
        long still = Long.parseLong(m.group(3).replace(",", ""));
        assertEquals(0, written, "the abandoned batch counts as nothing written back: " + report);
        assertEquals(before, still, report);
        assertEquals(dirty(), still, "still dirty as reported: " + report);
        assertEquals(before, Long.parseLong(m.group(2).replace(",", "")), report);
        backing.open();
        console1.close();
        checkStillCached();
    }

    /** Ctrl-C (Gogo interrupts the job) during the drain: as --cancel. */
    @Test
    void ctrlCDuringTheDrain() throws Exception {
        attachDirty();
        GatedDevice backing = s.gates.get("slow");
        backing.closeAfter(DIRTY / 2); // more than one writeboost segment (255 blocks), less than everything
        ByteArrayOutputStream first = new ByteArrayOutputStream();
        CommandSession console1 = s.console(first);
        Future<Object> detach = pool.submit(() -> console1.execute("cache:detach slow"));
        await("the writeback held half-way", () -> backing.waiting() > 0 && console1.foregroundJob() != null);
        console1.foregroundJob().interrupt();
        // Gogo passes the interrupt on asynchronously (Job.interrupt() cancels the job's thread, which
        // then interrupts the command's): opened before the command has taken it, the gate lets the
        // rest of the drain and the detach finish first, and the command rightly completes. The command
        // reports its cancel while the batch is still held (aCancelCountsTheBatchInFlight), so the gate
        // opens only after the report: the held writes then complete, as on a slow device, not a dead one.
        await("the report", () -> first.toString(StandardCharsets.UTF_8).contains("the cache stays attached"));
        backing.open();
        assertInstanceOf(InterruptedException.class, failure(detach));
        console1.close();
        checkStillCached();
    }

    // ---- bad input

    @Test
    void badInputIsOneLineAndChangesNothing() throws Exception {
        s.disk("ssd2", 17 * MIB);
        s.disk("back", 8 * MIB);
        s.manager.create("wb", "writeboost", Map.of("backing", "back", "cache", "ssd2", "format", "true"));
        s.run("cache:attach slow writeboost cache=ssd");
        List<DeviceInfo> before = s.manager.list();
        Map<String, DeviceDefinition> stored = s.store.snapshot();
        assertTrue(error("cache:detach").startsWith("usage: cache:detach [--keep-cache] DEV"));
        assertTrue(error("cache:detach nope").contains("no device named 'nope'"));
        assertEquals("device 'back' is a crash device, not a cache", error("cache:detach back"));
        assertEquals("slow: no cache:detach is running; nothing to cancel", error("cache:detach --cancel slow"));
        assertTrue(error("cache:detach --cancel --keep-cache slow").startsWith("--cancel and --keep-cache do not go together"));
        assertEquals("wb: --keep-cache only for a cache that cache:attach put there (the kept copies could later be "
                + "served over a changed back); detach without it", error("cache:detach --keep-cache wb"));
        assertEquals(before, s.manager.list(), "devices unchanged");
        assertEquals(stored, s.store.snapshot(), "store unchanged");
        assertEquals(CacheMode.WRITEBACK, mode());
        // a cache made by dev:create still detaches the old way: linear over its backing device
        assertTrue(s.run("cache:detach wb").startsWith("wb: detached; now linear over back"));
    }

    private String error(String line) {
        return s.error(line);
    }

    /** Runs {@code line} on another console (its own session and thread) and returns its answer. */
    private String other(String line) throws Exception {
        return s.elsewhere(pool, line);
    }

    /**
     * {@link #other} from a thread that the cancel interrupts (the detach's own, in a hook): waits
     * for the answer through the interrupt and keeps it for the detach to see.
     */
    private String fromAnotherThread(String line) {
        return s.elsewhereThroughInterrupts(pool, line);
    }

    private static Exception failure(Future<Object> f) throws Exception {
        return LiveStack.failure(f);
    }

    static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out waiting for " + what);
            }
            Thread.onSpinWait();
            Thread.yield();
        }
    }
}
