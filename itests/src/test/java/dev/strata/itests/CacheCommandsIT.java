package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import javax.inject.Inject;

import org.apache.felix.service.command.CommandProcessor;
import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Converter;
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
import org.osgi.util.tracker.ServiceTracker;

import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager;
import dev.strata.api.DeviceState;

/**
 * The {@code cache:} commands of the writeboost bundle (issue 5) through a Gogo session in a real
 * Felix: {@code cache:stats}, {@code cache:set} (valid and invalid), {@code cache:writeback} (clean
 * afterwards, the backing file holds the data) and {@code cache:detach} (the device becomes
 * {@code linear} over its backing device and reads back everything, with a client doing verified
 * I/O through the whole detach).
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

    private CommandSession session;
    private Path dir;

    @Configuration
    public Option[] config() {
        return StrataOptions.distribution(StrataOptions.workDir(WORK));
    }

    @Before
    public void openSession() throws Exception {
        dir = Path.of(context.getProperty("felix.fileinstall.dir")).getParent().resolve("data");
        Files.createDirectories(dir);
        ServiceTracker<Object, Object> commands = new ServiceTracker<>(context,
                context.createFilter("(&(osgi.command.scope=cache)(osgi.command.function=detach))"), null);
        commands.open();
        try {
            assertNotNull("cache: commands registered", commands.waitForService(60_000));
        } finally {
            commands.close();
        }
        session = processor.createSession(new ByteArrayInputStream(new byte[0]), new PrintStream(new ByteArrayOutputStream()),
                new PrintStream(new ByteArrayOutputStream()));
        Await.until("the file and writeboost target types", 60,
                () -> manager.targetTypes().stream().filter(t -> t.type().equals("file") || t.type().equals("writeboost")).count() == 2);
    }

    @After
    public void closeSession() {
        if (session != null) {
            session.close();
        }
    }

    private String run(String command) throws Exception {
        Object result = session.execute(command);
        return result == null ? "" : session.format(result, Converter.INSPECT).toString();
    }

    private Exception failure(String command) {
        try {
            Object r = session.execute(command);
            fail(command + " should fail, returned " + r);
            return null;
        } catch (Exception e) {
            return e;
        }
    }

    /** {@code cache:stats} output ("key  value" lines) as a map. */
    private Map<String, String> stats(String device) throws Exception {
        Map<String, String> m = new LinkedHashMap<>();
        for (String line : run("cache:stats " + device).lines().toList()) {
            String[] kv = line.trim().split("\\s+", 2);
            m.put(kv[0], kv.length > 1 ? kv[1] : "");
        }
        return m;
    }

    @Test
    public void statsSetWritebackAndDetach() throws Exception {
        Path backingFile = dir.resolve("slow.img");
        run("dev:create slow file path=" + backingFile + " size=64M create=true");
        run("dev:create fast file path=" + dir.resolve("fast.img") + " size=32M create=true");
        assertTrue(run("dev:create wb writeboost backing=slow cache=fast").contains("wb"));

        // cache:set, valid: background writeback only when the log is full, so data stays dirty
        assertEquals("wb: writeback_threshold=0", run("cache:set wb writeback_threshold 0").trim());
        assertEquals("0", stats("wb").get("writeback_threshold"));
        // invalid values and keys: one line, nothing changes
        assertOneLineUserError(failure("cache:set wb writeback_threshold 101"));
        assertOneLineUserError(failure("cache:set wb writeback_threshold lots"));
        assertOneLineUserError(failure("cache:set wb no_such_tunable 1"));
        assertOneLineUserError(failure("cache:stats nosuchdevice"));
        assertOneLineUserError(failure("cache:writeback slow"));
        assertOneLineUserError(failure("cache:detach slow"));
        assertEquals("0", stats("wb").get("writeback_threshold"));

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

            // cache:writeback: clean afterwards, the backing file holds the data
            String wb = run("cache:writeback wb");
            assertTrue(wb, wb.contains("clean"));
            assertEquals("0", stats("wb").get("dirty_blocks"));
            assertEquals("the backing file after cache:writeback", 0, region0.verifyFile(backingFile));

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
    }

    private static void assertOneLineUserError(Exception e) {
        assertTrue("a user mistake is an IllegalArgumentException (InvalidArgumentException): " + e, e instanceof IllegalArgumentException);
        String m = e.getMessage();
        assertNotNull(m);
        assertFalse("one line: " + m, m.contains("\n"));
        assertFalse(m.isBlank());
    }
}
