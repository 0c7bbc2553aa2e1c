package dev.strata.mirror.internal.command;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager;
import dev.strata.api.DeviceState;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;
import dev.strata.mirror.internal.Devices;
import dev.strata.mirror.internal.io.MirrorTarget;
import dev.strata.mirror.internal.log.DiskLog;
import dev.strata.testsupport.crash.CrashableDevice;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.apache.felix.gogo.runtime.CommandProcessorImpl;
import org.apache.felix.gogo.runtime.threadio.ThreadIOImpl;
import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Job;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The {@code mirror:} commands through a real Gogo command processor, over a device manager that
 * keeps only the contract the commands use (list, info, status, one-off messages) and a real
 * mirror with its daemon: status, fail, recover, resync (progress line, Ctrl-C stops the wait but
 * not the resync, {@code --all}) and one clear line for every mistake.
 */
class MirrorCommandsTest {
    static final long REGION = 64 * 1024;
    static final long SIZE = 4 << 20;
    static ThreadIOImpl tio;
    static CommandProcessorImpl processor;
    static final MirrorCommands commands = new MirrorCommands(null);
    final Map<String, Target> devices = new LinkedHashMap<>();
    final List<String> persisted = new ArrayList<>();
    final CrashableDevice rawA = new CrashableDevice("a", SIZE, 4096);
    final CrashableDevice rawB = new CrashableDevice("b", SIZE, 4096);
    final Devices.Counting b = new Devices.Counting(rawB);
    final byte[] model = new byte[(int) SIZE];
    final Random random = new Random(3);
    final CountDownLatch release = new CountDownLatch(1);
    MirrorTarget m;
    CommandSession session;
    ByteArrayOutputStream out;

    @BeforeAll
    static void shell() {
        tio = new ThreadIOImpl();
        tio.start();
        processor = new CommandProcessorImpl(tio);
        for (String f : List.of("status", "resync", "recover", "fail")) {
            processor.addCommand("mirror", commands, f);
        }
    }

    @AfterAll
    static void stopShell() {
        processor.stop();
        tio.stop();
    }

    @BeforeEach
    void start() {
        commands.manager = manager();
        out = new ByteArrayOutputStream();
        session = processor.createSession(new ByteArrayInputStream(new byte[0]), new PrintStream(out, true), System.err);
    }

    @AfterEach
    void stop() throws IOException {
        session.close();
        b.beforeWrite = null;
        release.countDown();
        if (m != null) {
            m.close();
        }
    }

    void openMirror() throws IOException {
        m = MirrorTarget.open("m0", List.of("a", "b"), List.of(rawA, b), new DiskLog("mlog", new CrashableDevice("mlog", 65536, 4096)),
                REGION, MirrorTarget.Options.defaults().withNosync(true));
        devices.put("m0", m);
    }

    /** The manager's contract as the commands use it: status with the device's own keys first, one-off messages. */
    DeviceManager manager() {
        return (DeviceManager) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {DeviceManager.class},
                (proxy, method, args) -> {
                    switch (method.getName()) {
                        case "list": {
                            List<DeviceInfo> l = new ArrayList<>();
                            devices.forEach((n, t) -> l.add(info(n, t)));
                            return l;
                        }
                        case "info":
                            return Optional.ofNullable(devices.get((String) args[0])).map(t -> info((String) args[0], t));
                        case "status": {
                            Target t = target((String) args[0]);
                            Map<String, String> s = new LinkedHashMap<>();
                            s.put("state", "active");
                            s.put("type", t.type());
                            t.status().forEach((k, v) -> s.put(s.containsKey(k) ? "target_" + k : k, v));
                            return s;
                        }
                        case "message": {
                            if (args.length < 4 || (Boolean) args[3]) {
                                persisted.add((String) args[1]);
                            }
                            try {
                                target((String) args[0]).message((String) args[1], (String) args[2]);
                            } catch (RuntimeException | IOException e) {
                                throw e;
                            }
                            return null;
                        }
                        default:
                            throw new UnsupportedOperationException(method.getName());
                    }
                });
    }

    Target target(String name) {
        Target t = devices.get(name);
        if (t == null) {
            throw new InvalidArgumentException("no device '" + name + "'");
        }
        return t;
    }

    static DeviceInfo info(String name, Target t) {
        return new DeviceInfo(name, t.type(), Map.of(), t.size(), t.blockSize(), DeviceState.ACTIVE, List.of(), List.of());
    }

    String run(String line) throws Exception {
        Object r = session.execute(line);
        return r == null ? "" : r.toString();
    }

    /** The one line a mistake gets: a user error, no class name, nothing else. */
    String refused(String line) {
        try {
            Object r = session.execute(line);
            fail(line + " should be refused, returned " + r);
            return null;
        } catch (Exception e) {
            Throwable c = e instanceof InvocationTargetException ? e.getCause() : e;
            assertInstanceOf(IllegalArgumentException.class, c, line + ": " + c);
            String msg = c.getMessage();
            assertFalse(msg.contains("\n"), msg);
            assertFalse(msg.contains("Exception"), msg);
            return msg;
        }
    }

    void write(int n) throws IOException {
        for (int i = 0; i < n; i++) {
            int len = 4096 * (1 + random.nextInt(8));
            int off = 4096 * random.nextInt((int) ((SIZE - len) / 4096));
            byte[] data = new byte[len];
            random.nextBytes(data);
            m.write(off, ByteBuffer.wrap(data), 0);
            System.arraycopy(data, 0, model, off, len);
        }
    }

    static void await(String what, BooleanSupplier cond, Supplier<String> state) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out waiting for " + what + ": " + state.get());
            }
            Thread.onSpinWait();
        }
    }

    @Test
    void oneRoundTripIsSingular() throws Exception {
        openMirror();
        m.write(0, ByteBuffer.wrap(new byte[4096]), 0);
        m.flush();
        String s = run("mirror:status m0");
        assertEquals("1", m.status().get("log_round_trips"), "one write into one region: one round trip");
        assertTrue(s.contains(" (1 round trip: "), s);
    }

    @Test
    void statusShowsLegsRegionsResyncAndRoundTrips() throws Exception {
        assertTrue(run("mirror:status").startsWith("no mirror devices"));
        openMirror();
        write(40);
        m.flush();
        String s = run("mirror:status m0");
        assertTrue(s.startsWith("m0  active  log disk:mlog  region 64 KiB"), s);
        assertTrue(s.contains("  legs      a in_sync (reads 0)   b in_sync (reads 0)"), s);
        assertTrue(s.matches("(?s).*  regions   \\d+ dirty of 64, \\d+ pending clears.*"), s);
        assertTrue(s.contains("  resync    idle (0 of 0 regions, 0 B copied since start)"), s);
        // the figure of the integrated flush: round trips per flush and per write, from the target's counters
        Map<String, String> st = m.status();
        assertTrue(s.contains("  log       " + st.get("log_round_trips_per_flush") + " round trips per flush, "
                + st.get("log_round_trips_per_write") + " per write (" + st.get("log_round_trips") + " round trips: "), s);
        assertTrue(s.contains("  writes    40 ("), s);
        assertTrue(s.contains("settings  integrated_flush=true clear_delay=3000ms read_policy=round_robin write_fanout=parallel"), s);
        assertEquals(s, run("mirror:status"), "without a name: every mirror, here the one");
        assertFalse(s.contains("degraded"), s);
    }

    @Test
    void failRecoverAndResyncWaitWithAProgressLine() throws Exception {
        openMirror();
        write(20);
        m.flush();
        String failed = run("mirror:fail m0 b");
        assertEquals("m0: leg b is out of sync; writes go to a and every region written stays marked; mirror:recover m0 b brings it back", failed);
        write(30);
        m.flush();
        String s = run("mirror:status m0");
        assertTrue(s.contains("b out_of_sync"), s);
        assertTrue(s.contains("! degraded: b misses every region written since; mirror:recover m0 b brings it back"), s);
        String alone = run("mirror:resync m0");
        assertTrue(alone.endsWith("; not to b (out of sync: mirror:recover m0 b)"), alone);
        int marked = m.dirtyRegions().cardinality();
        String recovering = run("mirror:recover m0 1"); // by index, as dev:message takes it
        assertTrue(recovering.startsWith("m0: leg b is recovering: "), recovering);
        String done = run("mirror:resync m0");
        assertTrue(done.matches("m0: resynced \\d+ regions \\(.*\\) in [0-9.]+ s"), done);
        assertEquals("in_sync", m.status().get("leg.b"));
        assertTrue(Long.parseLong(m.status().get("resync_done")) >= marked, m.status().toString());
        m.flush();
        assertArrayEquals(model, rawA.currentImage());
        assertArrayEquals(model, rawB.currentImage());
        assertTrue(out.toString(StandardCharsets.UTF_8).isEmpty() || out.toString(StandardCharsets.UTF_8).startsWith("\rm0: resync "),
                out.toString(StandardCharsets.UTF_8));
        assertEquals(List.of(), persisted, "actions are one-off messages, never kept in the definition");
    }

    @Test
    void resyncAllCopiesEveryRegion() throws Exception {
        openMirror();
        String done = run("mirror:resync --all m0");
        assertTrue(done.startsWith("m0: resynced 64 regions (4 MiB) in "), done);
        assertEquals("64", m.status().get("resync_done"));
    }

    @Test
    void ctrlCStopsTheWaitNotTheResync() throws Exception {
        openMirror();
        run("mirror:fail m0 b");
        write(30);
        // the first copy to b is held: the recovery cannot finish while the command waits
        CountDownLatch entered = new CountDownLatch(1);
        b.beforeWrite = off -> {
            entered.countDown();
            try {
                release.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        run("mirror:recover m0 b");
        ByteArrayOutputStream progress = new ByteArrayOutputStream();
        CommandSession s = processor.createSession(new ByteArrayInputStream(new byte[0]), new PrintStream(progress, true), System.err);
        AtomicReference<Object> result = new AtomicReference<>();
        AtomicReference<Throwable> error = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                result.set(s.execute("mirror:resync m0"));
            } catch (Throwable e) {
                error.set(e);
            }
        }, "mirror-command");
        t.start();
        assertTrue(entered.await(60, TimeUnit.SECONDS), "the resync reached leg b");
        await("the progress line and the job", () -> s.foregroundJob() != null
                && progress.toString(StandardCharsets.UTF_8).startsWith("\rm0: resync "), () -> progress.toString(StandardCharsets.UTF_8));
        Job job = s.foregroundJob();
        job.interrupt();
        t.join(TimeUnit.SECONDS.toMillis(60));
        assertFalse(t.isAlive(), "mirror:resync returned after the interrupt");
        assertInstanceOf(InterruptedException.class, error.get(), "returned " + result.get());
        await("the report", () -> progress.toString(StandardCharsets.UTF_8).contains("stopped waiting"),
                () -> progress.toString(StandardCharsets.UTF_8));
        List<String> lines = progress.toString(StandardCharsets.UTF_8).lines().toList();
        assertTrue(lines.get(lines.size() - 1).matches("m0: stopped waiting; the resync goes on in the background \\(\\d+ regions left; mirror:status m0\\)"),
                lines.toString());
        assertEquals("recovering", m.status().get("leg.b"), "the resync was not cancelled");
        release.countDown();
        b.beforeWrite = null;
        await("b back in sync", () -> "in_sync".equals(m.status().get("leg.b")), () -> m.status().toString());
        s.close();
        m.flush();
        assertArrayEquals(model, rawB.currentImage());
    }

    @Test
    void mistakesGetOneLine() throws Exception {
        assertEquals("no device 'zz'", refused("mirror:status zz"));
        devices.put("plain", new Devices.PlainTarget("file", new CrashableDevice("p", SIZE, 4096)));
        assertEquals("device 'plain' is a file, not a mirror; mirror:status lists the mirrors", refused("mirror:status plain"));
        assertEquals("device 'plain' is a file, not a mirror; mirror:status lists the mirrors", refused("mirror:resync plain"));
        openMirror();
        assertEquals(Render.RESYNC_USAGE, refused("mirror:resync"));
        assertEquals(Render.RECOVER_USAGE, refused("mirror:recover"));
        assertEquals(Render.RECOVER_USAGE, refused("mirror:recover m0"));
        assertEquals(Render.FAIL_USAGE, refused("mirror:fail"));
        assertEquals(Render.FAIL_USAGE, refused("mirror:fail m0"));
        assertEquals("mirror m0: recover needs a leg; 'zz' is none of a, b", refused("mirror:recover m0 zz"));
        assertEquals("mirror m0: leg 'b' is in_sync; only an out-of-sync leg can be recovered", refused("mirror:recover m0 b"));
        run("mirror:fail m0 a");
        assertEquals("mirror m0: 'b' is the last in-sync leg; it cannot be failed", refused("mirror:fail m0 b"));
        assertEquals("mirror: resync=sideways is unknown; use resync=dirty (the marked regions) or resync=all",
                assertThrowsIae(() -> m.message("resync", "sideways")));
        assertEquals("in_sync", m.status().get("leg.b"));
        assertEquals("out_of_sync", m.status().get("leg.a"));
    }

    static String assertThrowsIae(org.junit.jupiter.api.function.Executable e) {
        return org.junit.jupiter.api.Assertions.assertThrows(InvalidArgumentException.class, e).getMessage();
    }
}
