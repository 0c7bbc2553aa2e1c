package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.ByteBuffer;
import java.util.Arrays;

import javax.inject.Inject;

import org.apache.felix.service.command.CommandProcessor;
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

import dev.strata.api.DeviceManager;
import dev.strata.api.DeviceHandle;

/** The stacking recipe of docs/readcache.md, typed into the Gogo shell: writeboost over readcache over a slow file. */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class ReadcacheShellIT {

    private static final String WORK = "readcache-shell";

    @Inject
    BundleContext context;

    @Inject
    CommandProcessor processor;

    @Inject
    DeviceManager manager;

    private GogoSession shell;
    private Path dir;

    @Configuration
    public Option[] config() {
        return StrataOptions.distribution(StrataOptions.workDir(WORK));
    }

    @Before
    public void openSession() throws Exception {
        dir = Path.of(System.getProperty("strata.itests.work", "target/itest-work")).resolve(WORK).resolve("data").toAbsolutePath();
        Files.createDirectories(dir);
        shell = GogoSession.open(context, processor, manager, "dev:create", new ByteArrayOutputStream(), "file", "readcache", "writeboost");
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

    /** A failing command: the exception Gogo hands the launcher, whose message it prints as one line. */
    private Exception failure(String command) {
        return shell.failure(command);
    }

    @Test
    public void writeboostOverReadcacheRecipe() throws Exception {
        run("dev:create slow file path=" + dir.resolve("slow.img") + " size=32M create=true");
        run("dev:create ssd1 file path=" + dir.resolve("rc.img") + " size=4M create=true");
        run("dev:create ssd2 file path=" + dir.resolve("wb.img") + " size=18M create=true");
        // docs/readcache.md's recipe over a slow device, as typed there
        run("dev:create rc0 readcache origin=slow cache=ssd1 write_promote=on readahead=64K");
        run("dev:create wb0 writeboost backing=rc0 cache=ssd2 writeback.controller=idle");
        run("cache:set wb0 writeback.busy_kib_per_sec=0");
        assertEquals("0", status("wb0").get("writeback.busy_kib_per_sec"));

        byte[] block = new byte[4096];
        Arrays.fill(block, (byte) 7);
        try (DeviceHandle wb = manager.open("wb0", "itest:readcache-shell")) {
            for (int b = 0; b < 64; b++) {
                wb.write(b * 4096L, ByteBuffer.wrap(block), 0);
            }
            wb.flush();
        }
        run("dev:message wb0 writeback all");
        Await.until("wb0 written back", 120, () -> "0".equals(status("wb0").get("dirty_blocks")), () -> status("wb0").toString());
        // rc0 is wb0's backing device, held exclusively: it cannot be opened directly while wb0
        // stands on it. wb0 is clean now, so it may be removed; then rc0 is read directly.
        try {
            manager.open("rc0", "itest:readcache-shell-read").close();
            fail("rc0 is held exclusively by wb0 and must not be opened directly");
        } catch (dev.strata.api.InvalidArgumentException expected) {
            assertTrue(expected.getMessage(), expected.getMessage().contains("held exclusively by wb0"));
        }
        run("dev:remove wb0");
        try (DeviceHandle rc = manager.open("rc0", "itest:readcache-shell-read")) {
            for (int pass = 0; pass < 2; pass++) {
                for (int b = 0; b < 64; b++) {
                    ByteBuffer got = ByteBuffer.allocate(4096);
                    rc.read(b * 4096L, got);
                    assertTrue("block " + b, Arrays.equals(block, got.array()));
                }
            }
        }
        // write_promote=on: the writeback's blocks were kept, so even the first pass hit
        assertEquals(status("rc0").toString(), "64", status("rc0").get("write_promotions"));
        assertTrue(status("rc0").toString(), Long.parseLong(status("rc0").get("read_hits")) >= 128);
        // readahead=64K: a miss of block 200 reads its 64 KiB extent once and caches the other 15
        try (DeviceHandle rc = manager.open("rc0", "itest:readcache-shell-read")) {
            rc.read(200 * 4096L, ByteBuffer.allocate(4096));
        }
        assertEquals(status("rc0").toString(), "1", status("rc0").get("readaheads"));
        assertEquals(status("rc0").toString(), "15", status("rc0").get("readahead_blocks"));

        run("dev:message rc0 policy nhit");
        assertEquals("nhit", status("rc0").get("policy"));
        Exception unknown = failure("dev:message rc0 policy arc");
        assertOneLineUserError(unknown);
        assertTrue(unknown.getMessage(), unknown.getMessage().contains("installed: lru, nhit, wtinylfu"));
        assertTrue(run("dev:status rc0"), run("dev:status rc0").contains("hit_ratio"));

        run("dev:remove rc0");
        run("dev:remove ssd2");
        run("dev:remove ssd1");
        run("dev:remove slow");
    }

    /**
     * docs/readcache.md's second recipe: a readcache over a remote {@code nbd} device (here
     * Strata's own export of a file, on a free port): writes reach the remote device, reads are
     * promoted and then hit, and the data read back is what was written.
     */
    @Test
    public void readcacheOverARemoteNbdDeviceRecipe() throws Exception {
        Await.until("the nbd target type", 60, () -> manager.targetTypes().stream().anyMatch(t -> t.type().equals("nbd")));
        int port;
        try (java.net.ServerSocket probe = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        run("dev:create far file path=" + dir.resolve("far.img") + " size=16M create=true");
        run("nbd:export far --name far --bind 127.0.0.1 --port " + port);
        run("dev:create remote nbd uri=nbd://127.0.0.1:" + port + "/far");
        run("dev:create ssd3 file path=" + dir.resolve("rc-remote.img") + " size=4M create=true");
        run("dev:create rc1 readcache origin=remote cache=ssd3");

        byte[][] blocks = new byte[64][4096];
        try (DeviceHandle rc = manager.open("rc1", "itest:readcache-remote")) {
            for (int b = 0; b < 64; b++) {
                Arrays.fill(blocks[b], (byte) (b + 1));
                rc.write(b * 4096L, ByteBuffer.wrap(blocks[b]), 0);
            }
            rc.flush();
            for (int pass = 0; pass < 2; pass++) {
                for (int b = 0; b < 64; b++) {
                    ByteBuffer got = ByteBuffer.allocate(4096);
                    rc.read(b * 4096L, got);
                    assertTrue("pass " + pass + ", block " + b, Arrays.equals(blocks[b], got.array()));
                }
            }
        }
        java.util.Map<String, String> st = status("rc1");
        assertEquals(st.toString(), "64", st.get("promotions"));
        assertTrue(st.toString(), Long.parseLong(st.get("read_hits")) >= 64);
        // an overwrite through the cache invalidates the cached copy: the new data is read back
        byte[] newer = new byte[4096];
        Arrays.fill(newer, (byte) 99);
        try (DeviceHandle rc = manager.open("rc1", "itest:readcache-remote")) {
            rc.write(5 * 4096L, ByteBuffer.wrap(newer), dev.strata.api.BlockDevice.FUA);
            ByteBuffer got = ByteBuffer.allocate(4096);
            rc.read(5 * 4096L, got);
            assertTrue("block 5 after the overwrite", Arrays.equals(newer, got.array()));
        }
        blocks[5] = newer;
        run("dev:remove rc1");
        run("dev:remove remote");
        run("nbd:unexport far");
        // the remote device itself holds every write
        try (DeviceHandle far = manager.open("far", "itest:readcache-remote-check")) {
            for (int b = 0; b < 64; b++) {
                ByteBuffer got = ByteBuffer.allocate(4096);
                far.read(b * 4096L, got);
                assertTrue("remote block " + b, Arrays.equals(blocks[b], got.array()));
            }
        }
        run("dev:remove ssd3");
        run("dev:remove far");
    }

    private java.util.Map<String, String> status(String device) {
        try {
            return manager.status(device);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void assertOneLineUserError(Exception e) {
        assertTrue("a user mistake is an IllegalArgumentException (InvalidArgumentException): " + e, e instanceof IllegalArgumentException);
        String m = e.getMessage();
        assertNotNull(m);
        assertFalse("one line: " + m, m.contains("\n"));
        assertFalse(m.isBlank());
    }
}
