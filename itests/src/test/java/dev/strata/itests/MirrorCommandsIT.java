package dev.strata.itests;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
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
import dev.strata.api.DeviceManager;

/**
 * The {@code mirror:} commands in a real Felix through a Gogo session, and a remote leg: a mirror
 * whose second leg is an {@code nbd} import of Strata's own export (through a proxy the test can
 * cut) rides out a short blip without degrading, degrades during a long outage without failing
 * I/O, and recovers by itself when the export is reachable again — verified I/O throughout, both
 * legs equal at the end.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class MirrorCommandsIT {
    private static final int SIZE = 4 << 20;
    private static final int BLOCK = 4096;
    /** The remote test's writer writes only here (16 regions of 64 KiB); it reads everywhere. */
    private static final int WRITTEN = 1 << 20;

    @Inject
    BundleContext context;

    @Inject
    CommandProcessor processor;

    @Inject
    DeviceManager manager;

    private CommandSession session;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private Path dir;

    @Configuration
    public Option[] config() {
        return StrataOptions.distribution(StrataOptions.workDir("mirror-commands"));
    }

    @Before
    public void openSession() throws Exception {
        dir = Path.of(context.getProperty("felix.fileinstall.dir")).getParent().resolve("data");
        Files.createDirectories(dir);
        for (String scope : List.of("(&(osgi.command.scope=mirror)(osgi.command.function=resync))",
                "(&(osgi.command.scope=nbd)(osgi.command.function=export))")) {
            ServiceTracker<Object, Object> t = new ServiceTracker<>(context, context.createFilter(scope), null);
            t.open();
            try {
                assertNotNull(scope + " registered", t.waitForService(60_000));
            } finally {
                t.close();
            }
        }
        session = processor.createSession(new ByteArrayInputStream(new byte[0]), new PrintStream(out, true),
                new PrintStream(new ByteArrayOutputStream()));
        Await.until("the file, memory, nbd and mirror target types", 60, () -> manager.targetTypes().stream()
                .filter(t -> List.of("file", "memory", "nbd", "mirror").contains(t.type())).count() == 4);
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

    private String refused(String command) {
        try {
            Object r = session.execute(command);
            fail(command + " should be refused, returned " + r);
            return null;
        } catch (Exception e) {
            assertTrue("a user mistake is an IllegalArgumentException (InvalidArgumentException): " + e, e instanceof IllegalArgumentException);
            assertFalse("one line: " + e.getMessage(), e.getMessage().contains("\n"));
            return e.getMessage();
        }
    }

    private Map<String, String> status(String device) {
        try {
            return manager.status(device);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    public void statusFailRecoverAndResyncInTheShell() throws Exception {
        for (String leg : List.of("ca", "cb")) {
            run("dev:create " + leg + " file path=" + dir.resolve(leg + ".img") + " size=" + SIZE + " create=true");
        }
        run("dev:create clog file path=" + dir.resolve("clog.img") + " size=65536 create=true");
        run("dev:create cm mirror legs=ca,cb region_size=64k log=disk:clog nosync=true");
        byte[] model = new byte[SIZE];
        Random random = new Random(15);
        try (DeviceHandle m = manager.open("cm", "itest:mirror-commands")) {
            writeRandom(m, model, random, 50);
            m.flush();
            String s = run("mirror:status cm");
            assertTrue(s, s.startsWith("cm  active  log disk:clog  region 64 KiB"));
            assertTrue(s, s.contains("ca in_sync") && s.contains("cb in_sync"));
            assertTrue(s, s.contains(" round trips per flush, "));
            assertTrue(run("mirror:status"), run("mirror:status").contains("cm  active"));

            assertTrue(run("mirror:fail cm cb").startsWith("cm: leg cb is out of sync; writes go to ca"));
            writeRandom(m, model, random, 50);
            m.flush();
            assertTrue(run("mirror:status cm").contains("! degraded: cb misses every region written since"));
            assertTrue(run("mirror:recover cm cb").startsWith("cm: leg cb is recovering: "));
            String done = run("mirror:resync cm");
            assertTrue(done, done.matches("cm: resynced [\\d,]+ regions? \\(.*\\) in [0-9.]+ s"));
            assertEquals("in_sync", status("cm").get("leg.cb"));
            assertTrue(run("mirror:resync --all cm").startsWith("cm: resynced 64 regions (4 MiB) in "));

            // mistakes: one line each, nothing changed
            assertTrue(refused("mirror:resync").startsWith("usage: mirror:resync"));
            assertTrue(refused("mirror:recover cm").startsWith("usage: mirror:recover"));
            assertTrue(refused("mirror:fail").startsWith("usage: mirror:fail"));
            assertEquals("device 'ca' is a file, not a mirror; mirror:status lists the mirrors", refused("mirror:status ca"));
            assertEquals("mirror cm: recover needs a leg; 'zz' is none of ca, cb", refused("mirror:recover cm zz"));
            assertEquals("mirror cm: leg 'cb' is in_sync; only an out-of-sync leg can be recovered", refused("mirror:recover cm cb"));
            refused("mirror:status nosuchdevice");
            assertEquals("in_sync", status("cm").get("leg.ca"));
            assertEquals("in_sync", status("cm").get("leg.cb"));
            m.flush();
            byte[] got = new byte[SIZE];
            m.read(0, ByteBuffer.wrap(got));
            assertArrayEquals(model, got);
        }
        run("dev:remove cm");
        assertArrayEquals(model, Files.readAllBytes(dir.resolve("ca.img")));
        assertArrayEquals(model, Files.readAllBytes(dir.resolve("cb.img")));
        // the actions were one-off: a new mirror over the same legs and log starts with both in sync
        run("dev:create cm mirror legs=ca,cb region_size=64k log=disk:clog");
        assertEquals("in_sync", status("cm").get("leg.cb"));
        run("dev:remove cm");
        for (String d : List.of("clog", "ca", "cb")) {
            run("dev:remove " + d);
        }
    }

    @Test
    public void anNbdLegRidesOutABlipAndRecoversByItselfAfterAnOutage() throws Exception {
        int exportPort;
        try (ServerSocket s = new ServerSocket(0)) {
            exportPort = s.getLocalPort();
        }
        run("dev:create rmem memory size=" + SIZE);
        run("nbd:export --port " + exportPort + " --name rmem rmem");
        try (CuttableProxy proxy = new CuttableProxy(new InetSocketAddress("127.0.0.1", exportPort))) {
            run("dev:create rb nbd uri=nbd://127.0.0.1:" + proxy.port() + "/rmem timeout=2s");
            run("dev:create ra file path=" + dir.resolve("ra.img") + " size=" + SIZE + " create=true");
            run("dev:create rlog file path=" + dir.resolve("rlog.img") + " size=65536 create=true");
            run("dev:create rm mirror legs=ra,rb region_size=64k log=disk:rlog nosync=true clear_delay=100");
            Await.until("rb known as a remote leg", 60, () -> "rb".equals(status("rm").get("auto_recover")), () -> status("rm").toString());
            try (DeviceHandle m = manager.open("rm", "itest:mirror-remote")) {
                Writer w = new Writer(m);
                Thread t = new Thread(w, "mirror-it-writer");
                t.start();
                try {
                    w.awaitMore(200);
                    // a blip: every connection cut, the export reachable again at once
                    proxy.cutAll();
                    Await.until("the nbd leg reconnected", 60, () -> Long.parseLong(status("rb").get("reconnects")) >= 1,
                            () -> status("rb").toString());
                    w.awaitMore(200);
                    assertEquals("a blip does not degrade the mirror: " + status("rm"), "in_sync", status("rm").get("leg.rb"));
                    assertEquals("0", status("rm").get("leg_failures"));

                    // an outage longer than the nbd target's timeout: the leg degrades, I/O goes on
                    proxy.refuse(true);
                    proxy.cutAll();
                    Await.until("the nbd leg out of sync", 60, () -> "out_of_sync".equals(status("rm").get("leg.rb")),
                            () -> status("rm").toString());
                    w.awaitMore(300);
                    assertTrue(status("rm").toString(), Long.parseLong(status("rm").get("dirty_regions")) > 0);
                    assertEquals("out_of_sync", status("rm").get("leg.rb"));

                    // the export is back: the prober finds it, the leg gets the regions it missed
                    long copiedBefore = Long.parseLong(status("rm").get("resync_bytes"));
                    proxy.refuse(false);
                    Await.until("the nbd leg recovered by itself", 120, () -> "in_sync".equals(status("rm").get("leg.rb")),
                            () -> status("rm").toString());
                    assertEquals("1", status("rm").get("auto_recoveries"));
                    long copied = Long.parseLong(status("rm").get("resync_bytes")) - copiedBefore;
                    // the writer writes only the first WRITTEN bytes: what the leg missed is there
                    assertTrue("only the regions the leg missed are copied: " + copied, copied > 0 && copied <= WRITTEN);
                    w.awaitMore(200);
                } finally {
                    w.stop.set(true);
                    t.join(60_000);
                }
                assertFalse("the writer stopped", t.isAlive());
                assertEquals("no request failed: " + w.errors, 0, w.errors.size());
                m.flush();
                byte[] got = new byte[SIZE];
                m.read(0, ByteBuffer.wrap(got));
                assertArrayEquals(w.model, got);
            }
            run("dev:remove rm");
            // both legs hold every acknowledged write
            assertArrayEquals(readAll("rmem"), Files.readAllBytes(dir.resolve("ra.img")));
            run("dev:remove rb");
        } finally {
            run("nbd:unexport rmem");
        }
        for (String d : List.of("rlog", "ra", "rmem")) {
            run("dev:remove " + d);
        }
    }

    private byte[] readAll(String device) throws IOException {
        byte[] b = new byte[SIZE];
        try (DeviceHandle h = manager.open(device, "itest:mirror-check")) {
            h.read(0, ByteBuffer.wrap(b));
        }
        return b;
    }

    /** One thread of verified I/O: writes stamped blocks, reads back others, flushes every 16 writes. */
    private static final class Writer implements Runnable {
        final DeviceHandle device;
        final byte[] model = new byte[SIZE];
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicLong ops = new AtomicLong();
        final ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();

        Writer(DeviceHandle device) {
            this.device = device;
        }

        void awaitMore(long n) {
            long target = ops.get() + n;
            Await.until(n + " more verified operations", 120, () -> ops.get() >= target || !errors.isEmpty(), errors::toString);
            assertTrue(errors.toString(), errors.isEmpty());
        }

        @Override
        public void run() {
            Random random = new Random(9);
            byte[] data = new byte[BLOCK];
            byte[] got = new byte[BLOCK];
            long n = 0;
            while (!stop.get()) {
                boolean write = random.nextBoolean();
                int block = random.nextInt((write ? WRITTEN : SIZE) / BLOCK);
                try {
                    if (write) {
                        random.nextBytes(data);
                        device.write((long) block * BLOCK, ByteBuffer.wrap(data), 0);
                        System.arraycopy(data, 0, model, block * BLOCK, BLOCK);
                        if (++n % 16 == 0) {
                            device.flush();
                        }
                    } else {
                        device.read((long) block * BLOCK, ByteBuffer.wrap(got));
                        if (!Arrays.equals(got, 0, BLOCK, model, block * BLOCK, block * BLOCK + BLOCK)) {
                            errors.add("block " + block + " read back wrong");
                        }
                    }
                    ops.incrementAndGet();
                } catch (IOException | RuntimeException e) {
                    errors.add(block + ": " + e.getMessage());
                    return;
                }
            }
        }
    }

    private static void writeRandom(DeviceHandle m, byte[] model, Random random, int n) throws IOException {
        for (int i = 0; i < n; i++) {
            int len = BLOCK * (1 + random.nextInt(8));
            int off = BLOCK * random.nextInt((SIZE - len) / BLOCK);
            byte[] data = new byte[len];
            random.nextBytes(data);
            m.write(off, ByteBuffer.wrap(data), 0);
            System.arraycopy(data, 0, model, off, len);
        }
    }
}
