package dev.strata.cache.commands.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.felix.gogo.runtime.CommandProcessorImpl;
import org.apache.felix.gogo.runtime.threadio.ThreadIOImpl;
import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Job;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.strata.api.BlockDevice;
import dev.strata.api.CacheMode;
import dev.strata.api.CacheTarget;
import dev.strata.testsupport.crash.CrashableDevice;

/**
 * The {@code cache:} commands through a real Gogo command processor (parsed as the shell parses
 * them), on writeboost and on {@link MemCache}, over a {@link FakeManager} that keeps only the
 * manager's contract. Cancellation is Ctrl-C's path: the Gogo job is interrupted while a write
 * of the writeback is held at a {@link GatedDevice}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CacheCommandsTest {
    static final String[] FUNCTIONS = {"stats", "set", "writeback", "detach", "mode", "controllers"};
    static final int BLOCKS = 600;
    static final int BS = 4096;

    CrashableDevice slowDisk;
    GatedDevice slow;
    FakeManager manager;
    static ThreadIOImpl tio;
    static CommandProcessorImpl processor;
    /** Registered once (Gogo keeps the first object registered for a name); each test gives it its manager. */
    static final CacheCommands commands = new CacheCommands(null);
    CommandSession session;
    ByteArrayOutputStream out;
    final Map<Long, byte[]> model = new LinkedHashMap<>();

    void start(Subject subject) throws IOException {
        slowDisk = new CrashableDevice("slow", 16L << 20, BS);
        slow = new GatedDevice(slowDisk);
        manager = new FakeManager();
        manager.add("slow", "memory", Map.of(), new PlainTarget("memory", slow));
        manager.add("wb", subject.type, subject.arguments(), subject.open(slow));
        commands.manager = manager;
        out = new ByteArrayOutputStream();
        session = processor.createSession(new ByteArrayInputStream(new byte[0]), new PrintStream(out, true), System.err);
        session.put(".terminal", FakeTerminal.XTERM); // progress drawn as on a terminal
    }

    @BeforeAll
    static void shell() {
        tio = new ThreadIOImpl();
        tio.start();
        processor = new CommandProcessorImpl(tio);
        for (String f : FUNCTIONS) {
            processor.addCommand("cache", commands, f);
        }
    }

    @AfterAll
    static void stopShell() {
        processor.stop();
        tio.stop();
    }

    @AfterEach
    void stop() throws IOException {
        if (slow != null) {
            slow.open();
        }
        if (session != null) {
            session.close();
        }
        if (manager != null) {
            manager.target("wb").close();
        }
    }

    CacheTarget cache() {
        return (CacheTarget) manager.target("wb");
    }

    String run(String line) throws Exception {
        return String.valueOf(session.execute(line));
    }

    /** The one-line message of a user mistake. */
    String error(String line) {
        try {
            Object r = session.execute(line);
            fail(line + " should fail, returned " + r);
            return null;
        } catch (Exception e) {
            assertInstanceOf(IllegalArgumentException.class, e, line + ": " + e);
            assertNotNull(e.getMessage());
            assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
            return e.getMessage();
        }
    }

    String output() {
        return out.toString(StandardCharsets.UTF_8);
    }

    /** {@link #BLOCKS} blocks, every other one (no two merge into one write back), in random order. */
    void writeDirty() throws IOException {
        List<Long> order = new ArrayList<>();
        for (long b = 0; b < 2 * BLOCKS; b += 2) {
            order.add(b);
        }
        Random r = new Random(3);
        Collections.shuffle(order, r);
        for (long b : order) {
            byte[] data = new byte[BS];
            r.nextBytes(data);
            cache().write(b * BS, ByteBuffer.wrap(data), 0);
            model.put(b, data);
        }
        cache().flush();
        assertEquals(BLOCKS, cache().dirtyBlocks());
    }

    /** Every block written reads back through the device's current target, and (when clean) from the disk below. */
    void verify(boolean onDisk) throws IOException {
        BlockDevice device = manager.target("wb");
        for (Map.Entry<Long, byte[]> e : model.entrySet()) {
            ByteBuffer b = ByteBuffer.allocate(BS);
            device.read(e.getKey() * BS, b);
            assertArrayEquals(e.getValue(), b.array(), "block " + e.getKey() + " through the device");
            if (onDisk) {
                ByteBuffer d = ByteBuffer.allocate(BS);
                slowDisk.read(e.getKey() * BS, d);
                assertArrayEquals(e.getValue(), d.array(), "block " + e.getKey() + " on the backing device");
            }
        }
    }

    static void await(String what, BooleanSupplier condition) {
        await(what, condition, () -> "");
    }

    static void await(String what, BooleanSupplier condition, java.util.function.Supplier<String> state) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out waiting for " + what + " (" + state.get() + ")");
            }
            Thread.onSpinWait();
            Thread.yield();
        }
    }

    /**
     * Runs {@code line} in its own session; once the writeback has written some blocks back and
     * holds a write at the gate, interrupts the Gogo job (what Ctrl-C does). Returns the result.
     */
    String interruptMidway(String line, ByteArrayOutputStream progress) throws Exception {
        long before = cache().dirtyBlocks();
        // more than one writeboost segment (255 blocks), less than everything
        slow.closeAfter(BLOCKS / 2);
        CommandSession s = processor.createSession(new ByteArrayInputStream(new byte[0]), new PrintStream(progress, true),
                System.err);
        s.put(".terminal", FakeTerminal.XTERM); // progress drawn as on a terminal
        AtomicReference<Object> result = new AtomicReference<>();
        AtomicReference<Throwable> error = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                result.set(s.execute(line));
            } catch (Throwable e) {
                error.set(e);
            }
        }, "cache-command");
        t.start();
        await("a write back held at the gate after some progress",
                () -> slow.waiting() > 0 && cache().dirtyBlocks() < before && s.foregroundJob() != null,
                () -> "waiting " + slow.waiting() + ", dirty " + cache().dirtyBlocks() + ", job " + s.foregroundJob()
                        + ", result " + result.get() + ", error " + error.get());
        Job job = s.foregroundJob();
        job.interrupt();
        // Gogo passes Ctrl-C on asynchronously: its job thread takes the interrupt and then
        // interrupts the command's thread. Opened before that, the gate would let the command
        // finish first (the job thread, woken late, finds it done and returns its result), or a
        // writeback thread finish every batch before the command stops forcing them. So the gate
        // opens only once the command has printed its report; a writer held at the gate then
        // completes, as on a slow device, not a dead one.
        await("the report of the cancelled command", () -> progress.toString(StandardCharsets.UTF_8).contains(" cancelled: "),
                () -> progress.toString(StandardCharsets.UTF_8) + ", job " + job.status() + ", result " + result.get());
        slow.open();
        t.join(TimeUnit.SECONDS.toMillis(60));
        assertFalse(t.isAlive(), line + " returned after the interrupt");
        s.close();
        // Gogo ends an interrupted job with an InterruptedException, not the command's result
        assertInstanceOf(InterruptedException.class, error.get(), line + " returned " + result.get());
        String all = progress.toString(StandardCharsets.UTF_8);
        assertTrue(all.startsWith("\rwriteback wb: "), "a progress line first");
        assertTrue(all.endsWith("\n"), "then the report on a line of its own");
        List<String> lines = all.lines().toList(); // \r ends a line too
        return lines.get(lines.size() - 1);
    }

    static final Pattern CANCELLED = Pattern.compile(
            "wb: (writeback|detach|mode change) cancelled: ([\\d,]+) of ([\\d,]+) blocks written back, ([\\d,]+) still dirty(.*)");

    /** Checks a cancellation report against the cache; returns the blocks still dirty. */
    long checkCancelled(String report, String what) {
        Matcher m = CANCELLED.matcher(report);
        assertTrue(m.matches(), report);
        assertEquals(what, m.group(1));
        long written = Long.parseLong(m.group(2).replace(",", ""));
        long total = Long.parseLong(m.group(3).replace(",", ""));
        long dirty = Long.parseLong(m.group(4).replace(",", ""));
        assertEquals(BLOCKS, total, report);
        assertEquals(total, written + dirty, report);
        assertTrue(written > 0 && dirty > 0, "stopped mid-way: " + report);
        assertEquals(cache().dirtyBlocks(), dirty, "the report says what is still dirty: " + report);
        return dirty;
    }

    // ---- cache:stats

    @ParameterizedTest
    @EnumSource(Subject.class)
    void statsIsOneLineByDefaultAndEverythingGroupedWithAll(Subject subject) throws Exception {
        start(subject);
        writeDirty();
        for (long b = 0; b < 100; b += 2) {
            cache().read(b * BS, ByteBuffer.allocate(BS));
        }
        String summary = run("cache:stats wb");
        assertFalse(summary.contains("\n"), summary);
        assertTrue(summary.startsWith("wb: writeback, 2.3 MiB of "), summary);
        assertTrue(summary.contains(", 2.3 MiB dirty, read hits 100%, writeback idle"), summary);

        String all = run("cache:stats wb --all");
        List<String> lines = all.lines().toList();
        assertEquals(summary, lines.get(0));
        assertTrue(lines.containsAll(List.of("state", "capacity", "hits", "writeback")), all);
        assertTrue(all.contains("  dirty_blocks "), all);
        assertTrue(lines.stream().anyMatch(l -> l.matches("  dirty_blocks +600 \\(2\\.3 MiB\\)")), all);
        assertTrue(lines.stream().anyMatch(l -> l.matches("  mode +writeback")), all);
        assertTrue(lines.stream().anyMatch(l -> l.matches("  size +16\\.0 MiB")), all);
        assertFalse(all.contains(CacheTarget.Keys.WRITEBACK_ERROR), "an empty value is not shown: " + all);
        for (String l : lines.subList(1, lines.size())) {
            assertTrue(l.startsWith("  ") ? l.trim().contains(" ") : !l.isBlank(), "no empty value: '" + l + "'");
        }
        Map<String, String> raw = stats();
        assertEquals("600", raw.get(CacheTarget.Keys.DIRTY_BLOCKS));
        assertEquals("16777216", raw.get("size"));
        assertEquals(subject.type, raw.get("type"));
        assertTrue(run("cache:stats --bytes wb").contains(", 2457600 B dirty"));
    }

    /** {@code cache:stats --all --bytes} as key → value. */
    Map<String, String> stats() throws Exception {
        Map<String, String> m = new LinkedHashMap<>();
        for (String l : run("cache:stats --all --bytes wb").lines().toList()) {
            if (l.startsWith("  ")) {
                String[] kv = l.trim().split("\\s+", 2);
                m.put(kv[0], kv[1]);
            }
        }
        return m;
    }

    // ---- cache:set

    @ParameterizedTest
    @EnumSource(Subject.class)
    void setTakesBothFormsPersistsByDefaultAndRefusesMistakesInOneLine(Subject subject) throws Exception {
        start(subject);
        String key = subject.tunable;
        assertEquals("wb: " + key + "=" + subject.goodValue, run("cache:set wb " + key + " " + subject.goodValue));
        assertEquals(subject.goodValue, manager.persisted.get("wb " + key));
        assertEquals(subject.goodValue, stats().get(key));
        assertEquals("wb: " + key + "=7", run("cache:set wb " + key + "=7"));
        assertEquals("7", manager.persisted.get("wb " + key));
        assertEquals("7", stats().get(key));
        assertEquals("wb: " + key + "=9 (transient: lost on restart or reload)", run("cache:set --transient wb " + key + " 9"));
        assertEquals("9", stats().get(key));
        assertEquals("7", manager.persisted.get("wb " + key), "a transient setting is not kept");
        // an action (no key of the cache's status) is answered as done once, not as a kept setting
        assertEquals("wb: writeback=all (an action, not a setting: done once, not kept)", run("cache:set wb writeback all"));

        // mistakes: one line, the target's own message, nothing changes
        Map<String, String> before = stats();
        String bad = error("cache:set wb " + key + " " + subject.badValue);
        assertTrue(bad.contains(subject.badValue), bad);
        assertTrue(error("cache:set wb " + key + "=lots").contains("lots"));
        assertTrue(error("cache:set wb no_such_tunable 1").contains("no_such_tunable"));
        assertEquals(before, stats());
        assertEquals("7", manager.persisted.get("wb " + key));
        assertEquals(1, manager.persisted.size());

        assertTrue(error("cache:set").startsWith("usage: cache:set [--transient] DEV KEY VALUE"));
        String usage = "; usage: cache:set [--transient] DEV KEY VALUE (or DEV KEY=VALUE)";
        assertEquals("cache:set: missing KEY VALUE (or KEY=VALUE)" + usage, error("cache:set wb"));
        assertEquals("cache:set: missing VALUE" + usage, error("cache:set wb " + key));
        assertEquals("cache:set: unexpected \"c\"" + usage, error("cache:set wb a b c"));
        assertEquals("cache:set: unknown option --al" + usage, error("cache:set --al wb " + key + " 1"));
        assertEquals("device 'slow' is a memory device, not a cache", error("cache:set slow " + key + " 1"));
        assertEquals(1, manager.persisted.size());
    }

    // ---- cache:writeback

    @ParameterizedTest
    @EnumSource(Subject.class)
    void writebackWritesEverythingBackWithAProgressLine(Subject subject) throws Exception {
        start(subject);
        writeDirty();
        String r = run("cache:writeback wb");
        assertTrue(r.matches("wb: clean; 600 blocks written back in [\\d.]+ s"), r);
        assertEquals(0, cache().dirtyBlocks());
        verify(true);
        String progress = output();
        assertTrue(progress.matches("(?s)\rwriteback wb: [\\d,]+ of 600 blocks left \\(\\d+%\\), [\\d.]+ [KMGi]*B/s.*\n"), progress);
        assertTrue(progress.contains("writeback wb: 0 of 600 blocks left (100%)"), progress);
        out.reset();
        assertEquals("wb: clean (nothing to write back)", run("cache:writeback wb"));
        assertEquals("", output(), "a clean cache: no wait, no progress");
        assertEquals("device 'slow' is a memory device, not a cache", error("cache:writeback slow"));
        assertEquals("no device named 'nope'; see dev:list", error("cache:writeback nope"));
    }

    @ParameterizedTest
    @EnumSource(Subject.class)
    void writebackInterruptedStopsCleanlyReportsHowFarAndLosesNothing(Subject subject) throws Exception {
        start(subject);
        writeDirty();
        ByteArrayOutputStream progress = new ByteArrayOutputStream();
        String report = interruptMidway("cache:writeback wb", progress);
        checkCancelled(report, "writeback");
        assertTrue(progress.toString(StandardCharsets.UTF_8).contains("writeback wb: "), "progress was shown");
        assertEquals(CacheMode.WRITEBACK, cache().mode());
        slow.open();
        verify(false); // nothing lost: every block reads back
        assertTrue(run("cache:writeback wb").startsWith("wb: clean"));
        verify(true);
    }

    @Test
    void aWritebackInterruptedDuringABatchsIoIsReportedAsACancel() throws Exception {
        // writecache's batch I/O runs in the command's thread: Ctrl-C there fails the write with
        // InterruptedIOException (a file channel: ClosedByInterruptException), not InterruptedException
        start(Subject.MEMCACHE);
        ((MemCache) cache()).interruptsAsIoErrors = true;
        writeDirty();
        String report = interruptMidway("cache:writeback wb", new ByteArrayOutputStream());
        checkCancelled(report, "writeback");
        slow.open();
        verify(false);
        assertTrue(run("cache:writeback wb").startsWith("wb: clean"));
        verify(true);
    }

    @Test
    void onlyInterruptsCountAsCancels() {
        assertTrue(CacheOps.byInterrupt(new java.io.IOException("x", new java.nio.channels.ClosedByInterruptException())));
        assertTrue(CacheOps.byInterrupt(new java.io.InterruptedIOException("at the gate")));
        assertFalse(CacheOps.byInterrupt(new java.net.SocketTimeoutException("remote timed out")));
        assertFalse(CacheOps.byInterrupt(new java.io.IOException("disk error")));
    }

    // ---- cache:detach

    @ParameterizedTest
    @EnumSource(Subject.class)
    void detachLeavesALinearMappingOfTheAuthoritativeDevice(Subject subject) throws Exception {
        start(subject);
        writeDirty();
        if (subject == Subject.MEMCACHE) {
            assertEquals(subject.lowerArgument, cache().authoritativeDeviceArgument());
        }
        String r = run("cache:detach wb");
        assertEquals("wb: detached; now linear over slow (600 blocks written back)", r);
        assertEquals(List.of("wb linear {device=slow}"), manager.reloads);
        assertTrue(output().contains("writeback wb: 0 of 600 blocks left (100%)"), output());
        verify(true);
        assertEquals("device 'wb' is a linear device, not a cache", error("cache:stats wb"));
        assertEquals("device 'wb' is a linear device, not a cache", error("cache:detach wb"));
    }

    @ParameterizedTest
    @EnumSource(Subject.class)
    void detachOfACleanCacheDoesNotWait(Subject subject) throws Exception {
        start(subject);
        writeDirty();
        run("cache:writeback wb");
        out.reset();
        assertEquals("wb: detached; now linear over slow", run("cache:detach wb"));
        assertEquals("", output(), "no writeback, no progress line");
        verify(true);
    }

    @ParameterizedTest
    @EnumSource(Subject.class)
    void detachInterruptedRestoresTheModeAndKeepsTheCache(Subject subject) throws Exception {
        start(subject);
        writeDirty();
        String report = interruptMidway("cache:detach wb", new ByteArrayOutputStream());
        checkCancelled(report, "detach");
        assertTrue(report.endsWith("; the cache stays attached, mode writeback"), report);
        assertEquals(CacheMode.WRITEBACK, cache().mode(), "the old mode is back");
        assertEquals(subject.type, manager.info("wb").orElseThrow().type());
        assertEquals(List.of(), manager.reloads);
        slow.open();
        verify(false);
        // the data written meanwhile is cached dirty again: the mode really is writeback
        byte[] late = new byte[BS];
        new Random(9).nextBytes(late);
        long dirty = cache().dirtyBlocks();
        cache().write(4001L * BS, ByteBuffer.wrap(late), 0);
        model.put(4001L, late);
        assertEquals(dirty + 1, cache().dirtyBlocks());
        assertTrue(run("cache:detach wb").startsWith("wb: detached; now linear over slow"));
        verify(true);
    }

    @ParameterizedTest
    @EnumSource(Subject.class)
    void detachWhoseReloadFailsRestoresTheModeAndKeepsTheCache(Subject subject) throws Exception {
        start(subject);
        writeDirty();
        manager.failNextReload = new IOException("reload refused by the test");
        try {
            session.execute("cache:detach wb");
            fail("the detach should fail");
        } catch (IOException e) {
            assertEquals("wb: reload refused by the test; the cache stays attached, mode writeback", e.getMessage());
        }
        assertEquals(CacheMode.WRITEBACK, cache().mode());
        assertEquals(subject.type, manager.info("wb").orElseThrow().type());
        verify(true); // written back before the reload was tried
    }

    @ParameterizedTest
    @EnumSource(Subject.class)
    void detachInterruptedInItsSwapRestoresTheModeAndSaysSo(Subject subject) throws Exception {
        // Ctrl-C during the reload: the restore ran with the interrupt set, was refused, and left
        // the cache in its clean mode
        start(subject);
        writeDirty();
        manager.failNextReload = new java.io.InterruptedIOException("reload interrupted by the test");
        manager.interruptWithNextFailure = true;
        try {
            session.execute("cache:detach wb");
            fail("the detach should be cancelled");
        } catch (InterruptedException e) {
            assertEquals("wb: detach cancelled", e.getMessage());
        }
        assertFalse(Thread.currentThread().isInterrupted(), "the interrupt was handled");
        assertTrue(output().contains("wb: detach cancelled: 600 of 600 blocks written back, 0 still dirty; the cache stays attached, mode writeback"),
                output());
        assertEquals(CacheMode.WRITEBACK, cache().mode());
        assertEquals(subject.type, manager.info("wb").orElseThrow().type());
        verify(true);
    }

    // ---- cache:mode

    @ParameterizedTest
    @EnumSource(Subject.class)
    void modeToACleanModeDrainsFirstWithProgress(Subject subject) throws Exception {
        start(subject);
        assertTrue(run("cache:mode wb").startsWith("wb: writeback (supported: writeback, "));
        writeDirty();
        String clean = subject.cleanMode.label();
        assertEquals("wb: mode " + clean + " (was writeback)", run("cache:mode wb " + clean));
        assertEquals(subject.cleanMode, cache().mode());
        assertEquals(0, cache().dirtyBlocks());
        assertTrue(output().contains("writeback wb: 0 of 600 blocks left (100%)"), output());
        verify(true);
        String key = cache().modeTunable();
        if (key != null) { // persisted, so the mode survives a restart
            assertEquals(clean, manager.persisted.get("wb " + key));
        }
        assertEquals("wb: already " + clean, run("cache:mode wb " + clean));
        assertEquals("wb: mode writeback (was " + clean + ")", run("cache:mode wb writeback"));
        assertEquals(CacheMode.WRITEBACK, cache().mode());

        if (subject.unsupported != null) {
            String u = error("cache:mode wb " + subject.unsupported.label());
            assertTrue(u.startsWith("wb: mode " + subject.unsupported.label() + " is not supported by this cache; use writeback, "), u);
            assertFalse(u.contains("\n"), u);
        } else {
            assertEquals(Set.copyOf(List.of(CacheMode.values())), cache().supportedModes());
        }
        // a word that is no mode: the modes of this cache, not every mode there is
        assertEquals("wb: unknown cache mode 'fast'; use " + Render.labels(cache().supportedModes()), error("cache:mode wb fast"));
        assertEquals(CacheMode.WRITEBACK, cache().mode());
    }

    @ParameterizedTest
    @EnumSource(Subject.class)
    void modeChangeInterruptedKeepsTheOldMode(Subject subject) throws Exception {
        start(subject);
        writeDirty();
        String report = interruptMidway("cache:mode wb " + subject.cleanMode.label(), new ByteArrayOutputStream());
        checkCancelled(report, "mode change");
        assertEquals(CacheMode.WRITEBACK, cache().mode());
        slow.open();
        verify(false);
    }

    // ---- usage

    @ParameterizedTest
    @EnumSource(Subject.class)
    void missingArgumentsGiveTheUsage(Subject subject) throws Exception {
        start(subject);
        assertTrue(error("cache:stats").startsWith("usage: cache:stats DEV"));
        assertTrue(error("cache:stats --all").startsWith("usage: cache:stats DEV"));
        assertTrue(error("cache:writeback").startsWith("usage: cache:writeback DEV"));
        assertTrue(error("cache:detach").startsWith("usage: cache:detach [--keep-cache] DEV"));
        assertTrue(error("cache:mode").startsWith("usage: cache:mode DEV"));
        assertEquals("no writeback controllers installed; every cache paces writeback with its built-in controller (builtin)",
                run("cache:controllers"));
    }
}
