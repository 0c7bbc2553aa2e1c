package dev.strata.cache.commands.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.felix.gogo.runtime.CommandProcessorImpl;
import org.apache.felix.gogo.runtime.threadio.ThreadIOImpl;
import org.apache.felix.service.command.CommandSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.strata.api.CacheMode;
import dev.strata.api.CacheTarget;
import dev.strata.testsupport.crash.CrashableDevice;

/**
 * What is under the cache: a suspended device below it (its backing device, or one under that)
 * makes every drain refuse up front in one line, and Ctrl-C of a writeback whose batch waits on I/O
 * that does not look at the interrupt still ends the command in bounded time, printing nothing later.
 * Stack: {@code wb} (the cache) over {@code slow} (a {@link GatedDevice}) over {@code pdly}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BelowTheCacheTest {
    static final int BS = 4096;
    static final int BLOCKS = 600;
    static ThreadIOImpl tio;
    static CommandProcessorImpl processor;
    static final CacheCommands commands = new CacheCommands(null);

    GatedDevice slow;
    FakeManager manager;
    CommandSession session;
    ByteArrayOutputStream out;

    @BeforeAll
    static void shell() {
        tio = new ThreadIOImpl();
        tio.start();
        processor = new CommandProcessorImpl(tio);
        for (String f : List.of("writeback", "mode", "detach", "switch")) {
            processor.addCommand("cache", commands, f);
        }
    }

    @AfterAll
    static void stopShell() {
        processor.stop();
        tio.stop();
    }

    void start(Subject subject) throws Exception {
        CrashableDevice disk = new CrashableDevice("slow", 16L << 20, BS);
        slow = new GatedDevice(disk);
        manager = new FakeManager();
        manager.add("pdly", "delay", Map.of(), new PlainTarget("delay", disk));
        manager.add("slow", "linear", Map.of("device", "pdly"), new PlainTarget("linear", slow));
        manager.add("wb", subject.type, subject.arguments(), subject.open(slow));
        commands.manager = manager;
        out = new ByteArrayOutputStream();
        session = processor.createSession(new ByteArrayInputStream(new byte[0]), new PrintStream(out, true), System.err);
        session.put(".terminal", FakeTerminal.XTERM); // progress drawn as on a terminal
        Random r = new Random(5);
        for (long b = 0; b < 2 * BLOCKS; b += 2) {
            byte[] data = new byte[BS];
            r.nextBytes(data);
            cache().write(b * BS, ByteBuffer.wrap(data), 0);
        }
        cache().flush();
        assertEquals(BLOCKS, cache().dirtyBlocks());
    }

    @AfterEach
    void stop() throws Exception {
        if (slow != null) {
            slow.ignoreInterrupts(false);
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

    String error(String line) {
        try {
            Object r = session.execute(line);
            fail(line + " should fail, returned " + r);
            return null;
        } catch (Exception e) {
            assertInstanceOf(IllegalArgumentException.class, e, line + ": " + e);
            return e.getMessage();
        }
    }

    @ParameterizedTest
    @EnumSource(Subject.class)
    void aSuspendedDeviceUnderTheCacheIsRefusedUpFrontAndNothingChanges(Subject subject) throws Exception {
        start(subject);
        manager.suspend("pdly");
        String expected = "pdly is suspended (under wb's backing device); dev:resume pdly first";
        long t0 = System.nanoTime();
        assertEquals(expected, error("cache:writeback wb"));
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(10), "refused at once, not after a wait at the gate");
        assertEquals(expected, error("cache:mode wb " + subject.cleanMode.label()));
        assertEquals(expected, error("cache:detach wb"));
        assertEquals(BLOCKS, cache().dirtyBlocks(), "nothing written back");
        assertEquals(CacheMode.WRITEBACK, cache().mode(), "the mode is unchanged");
        assertEquals(List.of(), manager.reloads);
        assertEquals("", out.toString(StandardCharsets.UTF_8), "no progress line");
        // a mode that keeps dirty data needs no drain: not refused
        manager.resume("pdly");
        manager.suspend("slow");
        assertEquals("slow is suspended (wb's backing device); dev:resume slow first", error("cache:writeback wb"));
        manager.resume("slow");
        assertTrue(String.valueOf(session.execute("cache:writeback wb")).startsWith("wb: clean; 600 blocks written back"));
    }

    @Test
    void ctrlCEndsAWritebackWhoseBatchIgnoresTheInterruptAndNothingPrintsLater() throws Exception {
        // MemCache writes back on the calling thread, here held at the gate deaf to the interrupt (as a
        // command waiting for a policy's I/O threads held at a suspended device's gate);
        // writeboost's writeback stops at the interrupt without waiting for the write
        start(Subject.MEMCACHE);
        slow.ignoreInterrupts(true);
        slow.closeAfter(BLOCKS / 2);
        AtomicReference<Object> result = new AtomicReference<>();
        AtomicReference<Throwable> error = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                result.set(session.execute("cache:writeback wb"));
            } catch (Throwable e) {
                error.set(e);
            }
        }, "cache-command");
        t.start();
        CacheCommandsTest.await("a write back held at the gate", () -> slow.waiting() > 0 && session.foregroundJob() != null);
        long t0 = System.nanoTime();
        session.foregroundJob().interrupt();
        // Gogo's execute returns at the interrupt; the command's own thread must end within the 10 s
        // the console waits for it, with its line printed
        String pending = Render.cancelPending("wb", "writeback", "");
        long deadline = t0 + TimeUnit.SECONDS.toNanos(8);
        CacheCommandsTest.await("the cancel line", () -> out.toString(StandardCharsets.UTF_8)
                .endsWith(pending + System.lineSeparator()) || System.nanoTime() - deadline > 0);
        String shown = out.toString(StandardCharsets.UTF_8);
        assertTrue(shown.endsWith("\n" + pending + System.lineSeparator()),
                "Ctrl-C ended the command within 8 s, the write still held; last line: "
                        + shown.substring(Math.max(0, shown.lastIndexOf('\r'))));
        assertEquals(1, slow.waiting(), "the write is still held");
        t.join(TimeUnit.SECONDS.toMillis(8));
        assertFalse(t.isAlive());
        assertInstanceOf(InterruptedException.class, error.get(), "returned " + result.get());
        // the held write completes later: the writeback stops then, and prints nothing over the prompt
        slow.open();
        CacheCommandsTest.await("the writeback's thread to end", () -> Thread.getAllStackTraces().keySet().stream()
                .noneMatch(th -> th.getName().equals("cache-writeback-wb")));
        assertEquals(shown, out.toString(StandardCharsets.UTF_8), "nothing printed after the command ended");
        assertTrue(cache().dirtyBlocks() > 0, "stopped: the rest stays dirty");
        slow.ignoreInterrupts(false);
        assertTrue(String.valueOf(session.execute("cache:writeback wb")).startsWith("wb: clean"));
    }
}
