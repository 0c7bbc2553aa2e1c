package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Hashtable;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import javax.inject.Inject;

import org.apache.felix.service.command.CommandProcessor;
import org.apache.felix.service.command.CommandSession;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;

import dev.strata.api.CacheTarget;
import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager;
import dev.strata.api.DeviceState;
import dev.strata.api.WritebackController;

/**
 * The {@code cache:} commands (bundle {@code dev.strata.cache.commands}, through the cache API only)
 * through a Gogo session in a real Felix, on a writeboost stack whose backing device is slowed by
 * a {@code delay} device: {@code cache:stats} (summary and {@code --all}), {@code cache:set} (both
 * forms, invalid values and keys), {@code cache:writeback} (progress line; clean afterwards, the
 * backing file holds the data), Ctrl-C during a writeback (the Gogo job interrupted: a report of
 * how far it got, nothing lost), {@code cache:mode}, {@code cache:detach} (the device becomes
 * {@code linear} over its backing device and reads back everything, with a client doing verified
 * I/O through the whole detach) and {@code cache:controllers}.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class CacheCommandsIT {

    private static final String WORK = "cache-commands";
    private static final int BLOCKS = 2048; // 8 MiB per region

    @Inject
    BundleContext context;

    @Inject
    CommandProcessor processor;

    @Inject
    DeviceManager manager;

    private GogoSession shell;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private Path dir;

    @Configuration
    public Option[] config() {
        return StrataOptions.distribution(StrataOptions.workDir(WORK));
    }

    @Before
    public void openSession() throws Exception {
        dir = Path.of(context.getProperty("felix.fileinstall.dir")).getParent().resolve("data");
        Files.createDirectories(dir);
        shell = GogoSession.open(context, processor, manager, "cache:detach", out, "file", "delay", "writeboost");
    }

    @After
    public void closeSession() {
        if (shell != null) {
            shell.close();
        }
    }

    private String run(String command) throws Exception {
        return shell.run(command);
    }

    private Exception failure(String command) {
        return shell.failure(command);
    }

    /** {@code cache:stats --all --bytes}: the grouped "  key  value" lines as a map. */
    private Map<String, String> stats(String device) throws Exception {
        Map<String, String> m = new LinkedHashMap<>();
        for (String line : run("cache:stats --all --bytes " + device).lines().toList()) {
            if (line.startsWith("  ")) {
                String[] kv = line.trim().split("\\s+", 2);
                m.put(kv[0], kv.length > 1 ? kv[1] : "");
            }
        }
        return m;
    }

    private long dirty(String device) {
        try {
            return manager.withTarget(device, CacheTarget.class, CacheTarget::dirtyBlocks);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private String output() {
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    public void statsSetWritebackAndDetach() throws Exception {
        Path backingFile = dir.resolve("slow.img");
        run("dev:create slowfile file path=" + backingFile + " size=64M create=true");
        // slow enough that a writeback takes seconds, so Ctrl-C lands in the middle of one
        run("dev:create slow delay device=slowfile write_ms=4");
        run("dev:create fast file path=" + dir.resolve("fast.img") + " size=32M create=true");
        // one segment per writeback batch: progress shows in steps
        assertTrue(run("dev:create wb writeboost backing=slow cache=fast nr_max_batched_writeback=1").contains("wb"));

        // cache:set, both forms: background writeback only when the log is full, so data stays dirty
        assertEquals("wb: writeback_threshold=5", run("cache:set wb writeback_threshold=5"));
        assertEquals("5", stats("wb").get("writeback_threshold"));
        assertEquals("wb: writeback_threshold=0", run("cache:set wb writeback_threshold 0"));
        assertEquals("0", stats("wb").get("writeback_threshold"));
        // invalid values and keys: one line, nothing changes
        assertOneLineUserError(failure("cache:set wb writeback_threshold 101"));
        assertOneLineUserError(failure("cache:set wb writeback_threshold lots"));
        assertOneLineUserError(failure("cache:set wb no_such_tunable 1"));
        assertOneLineUserError(failure("cache:stats nosuchdevice"));
        assertOneLineUserError(failure("cache:writeback slow"));
        assertOneLineUserError(failure("cache:detach slow"));
        assertOneLineUserError(failure("cache:mode wb fast"));
        // what is missing, then the short usage (one line: the shared word parser, Words)
        String missing = failure("cache:set wb").getMessage();
        assertTrue(missing, missing.startsWith("cache:set: missing KEY VALUE") && missing.contains("usage: cache:set")
                && !missing.contains("\n"));
        assertTrue(failure("cache:stats").getMessage().startsWith("usage: cache:stats"));
        assertEquals("0", stats("wb").get("writeback_threshold"));
        assertEquals("wb: writeback (supported: writeback, writethrough, writearound, passthrough)", run("cache:mode wb"));

        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong ops = new AtomicLong();
        AtomicLong mismatches = new AtomicLong();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        try (DeviceHandle h = manager.open("wb", "itest:cache-commands")) {
            CheckedBlocks region0 = new CheckedBlocks(0, BLOCKS, h, stop, ops, mismatches, errors, new CountDownLatch(1));
            SplittableRandom random = new SplittableRandom(5);
            for (int i = 0; i < 1500; i++) {
                region0.writeNext(random.nextInt(BLOCKS));
            }
            h.flush();

            Map<String, String> s = stats("wb");
            for (String key : List.of("read_hits", "read_misses", "writes_cached", "bypassed", "dirty_blocks", "segments_used",
                    "segments_total", "writeback_rate_blocks_per_s", "flushes", "write_latency_us_p99")) {
                assertTrue("cache:stats shows " + key + ": " + s, s.containsKey(key));
            }
            // every distinct block written is cached; writeback may still have run (writers that
            // wait for a log buffer make it urgent even at threshold 0), so dirty is at most that
            assertEquals("every distinct block written is cached: " + s, region0.written(), Long.parseLong(s.get("cached_blocks")));
            long dirty = Long.parseLong(s.get("dirty_blocks"));
            assertTrue("written blocks stay dirty: " + s, dirty > 0 && dirty <= region0.written());
            assertEquals(0, region0.verifyAll());
            assertTrue("reads hit the cache: " + s, Long.parseLong(stats("wb").get("read_hits")) > 0);
            String summary = run("cache:stats wb");
            assertFalse(summary, summary.contains("\n"));
            assertTrue(summary, summary.startsWith("wb: writeback, ") && summary.contains(" dirty, read hits "));

            // Ctrl-C during cache:writeback: the Gogo job is interrupted once writeback is under way
            long dirtyBefore = dirty("wb");
            ByteArrayOutputStream progress = new ByteArrayOutputStream();
            CommandSession s2 = processor.createSession(new ByteArrayInputStream(new byte[0]), new PrintStream(progress, true),
                    new PrintStream(new ByteArrayOutputStream()));
            AtomicReference<Throwable> ended = new AtomicReference<>();
            CountDownLatch done = new CountDownLatch(1);
            Thread command = new Thread(() -> {
                try {
                    s2.execute("cache:writeback wb");
                } catch (Throwable e) {
                    ended.set(e);
                } finally {
                    done.countDown();
                }
            }, "cache-writeback");
            command.start();
            Await.until("writeback under way", 120, () -> dirty("wb") < dirtyBefore && s2.foregroundJob() != null
                    || done.getCount() == 0);
            assertEquals("still writing back when interrupted", 1, done.getCount());
            s2.foregroundJob().interrupt();
            assertTrue(done.await(60, TimeUnit.SECONDS));
            assertTrue("Gogo ends an interrupted job with an InterruptedException: " + ended.get(),
                    ended.get() instanceof InterruptedException);
            Await.until("the cancellation report", 60, () -> progress.toString(StandardCharsets.UTF_8).contains(" cancelled: "));
            String report = progress.toString(StandardCharsets.UTF_8).lines().reduce((a, b) -> b).orElse("");
            assertTrue(report, report.matches("wb: writeback cancelled: [\\d,]+ of [\\d,]+ blocks written back, [\\d,]+ still dirty"));
            // this session is no terminal: progress comes as whole lines (every 10 s), never as \r lines
            assertFalse(progress.toString(StandardCharsets.UTF_8), progress.toString(StandardCharsets.UTF_8).contains("\r"));
            s2.close();
            assertTrue("some blocks still dirty after the cancel", dirty("wb") > 0);
            assertEquals("writeback", stats("wb").get("mode"));
            assertEquals("nothing lost by the cancel", 0, region0.verifyAll());

            // cache:writeback: clean afterwards, the backing file holds the data
            out.reset();
            String wb = run("cache:writeback wb");
            assertTrue(wb, wb.startsWith("wb: clean"));
            assertFalse(output(), output().contains("\r")); // no terminal: no \r progress lines (docs/cache-commands.md)
            assertEquals("0", stats("wb").get("dirty_blocks"));
            assertEquals("the backing file after cache:writeback", 0, region0.verifyFile(backingFile));

            // cache:mode to writearound and back: new writes go to the backing device meanwhile
            assertEquals("wb: mode writearound (was writeback)", run("cache:mode wb writearound"));
            assertEquals("writearound", stats("wb").get("mode"));
            assertEquals("wb: mode writethrough (was writearound)", run("cache:mode wb writethrough"));
            assertEquals("writethrough", stats("wb").get("mode"));
            assertEquals("wb: mode passthrough (was writethrough)", run("cache:mode wb passthrough"));
            assertEquals("passthrough", stats("wb").get("mode"));
            assertEquals("nothing lost switching modes", 0, region0.verifyAll());
            assertEquals("wb: mode writeback (was passthrough)", run("cache:mode wb writeback"));

            // new dirty data in a second region, then detach while a client keeps doing verified I/O
            CheckedBlocks region1 = new CheckedBlocks(1, BLOCKS, h, stop, ops, mismatches, errors, new CountDownLatch(1));
            for (int i = 0; i < 1000; i++) {
                region1.writeNext(random.nextInt(BLOCKS));
            }
            h.flush();
            assertTrue(Long.parseLong(stats("wb").get("dirty_blocks")) > 0);
            CountDownLatch finished = new CountDownLatch(1);
            CheckedBlocks client = new CheckedBlocks(2, BLOCKS, h, stop, ops, mismatches, errors, finished);
            new Thread(client, "cache-commands-io").start();
            try {
                long before = ops.get();
                Await.until("client I/O before detach", 120, () -> ops.get() >= before + 200 || !errors.isEmpty());
                String detached = run("cache:detach wb");
                assertTrue(detached, detached.contains("linear"));
                long after = ops.get();
                Await.until("client I/O after detach", 120, () -> ops.get() >= after + 200 || !errors.isEmpty());
            } finally {
                stop.set(true);
                assertTrue("client finished", finished.await(120, TimeUnit.SECONDS));
            }
            if (!errors.isEmpty()) {
                throw new AssertionError("client I/O failed across cache:detach: " + errors.peek(), errors.peek());
            }
            assertEquals("mismatches across cache:detach", 0, mismatches.get());

            DeviceInfo info = manager.info("wb").orElseThrow();
            assertEquals("linear", info.type());
            assertEquals(List.of("slow"), info.lower());
            assertEquals(DeviceState.ACTIVE, info.state());
            assertEquals(0, region0.verifyAll());
            assertEquals(0, region1.verifyAll());
            assertEquals(0, client.verifyAll());
            h.flush();
            assertEquals("region 0 in the backing file", 0, region0.verifyFile(backingFile));
            assertEquals("region 1 in the backing file", 0, region1.verifyFile(backingFile));
            assertEquals("the client's region in the backing file", 0, client.verifyFile(backingFile));
        }
        // no longer a cache: the cache commands refuse it with one line
        assertOneLineUserError(failure("cache:writeback wb"));
        run("dev:remove wb");
        run("dev:remove fast");
        run("dev:remove slow");
        run("dev:remove slowfile");
    }

    @Test
    public void controllersListsTheInstalledControllerServices() throws Exception {
        String before = run("cache:controllers");
        assertFalse(before, before.contains("itest-pace"));
        WritebackController c = (cache, tunables) -> new WritebackController.Session() {
            @Override
            public WritebackController.Decision decide(WritebackController.CacheLoad load) {
                return WritebackController.Decision.fullSpeed(load.maxBatch());
            }

            @Override
            public Map<String, String> status() {
                return Map.of();
            }
        };
        ServiceRegistration<WritebackController> reg = context.registerService(WritebackController.class, c,
                new Hashtable<>(Map.of(WritebackController.NAME, "itest-pace")));
        try {
            String bsn = context.getBundle().getSymbolicName();
            String version = context.getBundle().getVersion().toString();
            Await.until("the controller listed", 60, () -> {
                try {
                    return run("cache:controllers").lines().anyMatch(l -> l.matches("itest-pace +" + java.util.regex.Pattern.quote(bsn)
                            + " +" + java.util.regex.Pattern.quote(version)));
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
            assertTrue(run("cache:controllers").startsWith("NAME"));
        } finally {
            reg.unregister();
        }
        Await.until("the controller gone", 60, () -> {
            try {
                return !run("cache:controllers").contains("itest-pace");
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
    }

    private static void assertOneLineUserError(Exception e) {
        assertTrue("a user mistake is an IllegalArgumentException (InvalidArgumentException): " + e, e instanceof IllegalArgumentException);
        String m = e.getMessage();
        assertNotNull(m);
        assertFalse("one line: " + m, m.contains("\n"));
        assertFalse(m.isBlank());
    }
}
