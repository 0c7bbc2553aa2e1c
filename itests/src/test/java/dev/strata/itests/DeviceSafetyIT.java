package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Dictionary;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

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
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.service.cm.ConfigurationAdmin;

import dev.strata.api.CacheTarget;
import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceManager;
import dev.strata.api.DeviceState;

/**
 * Issue 9's core safety through Gogo in a real Felix with writeboost: claims (nothing stacks on
 * or exports a cache's devices, no second cache on them), dirty guards (remove and reload of a
 * dirty cache refused, a reload that adopts the state allowed, {@code --force} says what it
 * stranded), identity and tunables in Configuration Admin, transient devices, and a call held
 * through {@code withTarget} interrupted by a hot update of the writeboost bundle; a clean
 * cache reloaded away and back serves what its backing device got meanwhile.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class DeviceSafetyIT {

    @Inject
    BundleContext context;

    @Inject
    CommandProcessor processor;

    @Inject
    DeviceManager manager;

    @Inject
    ConfigurationAdmin cm;

    private GogoSession shell;
    private Path dir;

    @Configuration
    public Option[] config() {
        return StrataOptions.distribution(StrataOptions.workDir("device-safety"));
    }

    @Before
    public void openSession() throws Exception {
        dir = Path.of(context.getProperty("felix.fileinstall.dir")).getParent().resolve("data");
        Files.createDirectories(dir);
        shell = GogoSession.open(context, processor, manager, "dev:remove", new ByteArrayOutputStream(), "file", "memory", "writeboost");
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

    /** The one-line message of a command that must fail. */
    private String failure(String command) {
        String m = String.valueOf(shell.failure(command).getMessage());
        assertFalse("one line: " + m, m.contains("\n"));
        assertFalse("no exception class name: " + m, m.contains("Exception"));
        return m;
    }

    private void cache(String name, String backing, String fast) throws Exception {
        run("dev:create " + backing + " file path=" + dir.resolve(backing + ".img") + " size=64M create=true");
        run("dev:create " + fast + " file path=" + dir.resolve(fast + ".img") + " size=32M create=true");
        run("dev:create " + name + " writeboost backing=" + backing + " cache=" + fast);
    }

    private Dictionary<String, Object> stored(String name) throws Exception {
        org.osgi.service.cm.Configuration[] cs = cm.listConfigurations("(&(service.factoryPid=dev.strata.device)(name="
                + name + "))");
        return cs == null || cs.length == 0 ? null : cs[0].getProperties();
    }

    @Test
    public void aCacheDeviceCannotBeClaimedTwiceNorExported() throws Exception {
        cache("cw0", "slow0", "fast0");
        assertEquals("fast0 is held exclusively by cw0 (writeboost cache device); use another device, or remove cw0 first",
                failure("dev:create peek linear device=fast0"));
        run("dev:create slow2 file path=" + dir.resolve("slow2.img") + " size=64M create=true");
        assertTrue(failure("dev:create wb6 writeboost backing=slow2 cache=fast0")
                .startsWith("fast0 is held exclusively by cw0 (writeboost cache device)"));
        assertTrue(failure("dev:create wb7 writeboost backing=slow0 cache=slow2")
                .startsWith("slow0 is held exclusively by cw0 (writeboost backing device)"));
        assertFalse(manager.info("peek").isPresent());
        assertFalse(manager.info("wb6").isPresent());
        try {
            manager.open("fast0", "nbd:fast0").close();
            fail("an exclusively held device was opened for an export");
        } catch (IllegalArgumentException e) {
            assertTrue(e.getMessage(), e.getMessage().startsWith("fast0 is held exclusively by cw0"));
        }
        String list = run("dev:list");
        assertTrue(list, list.matches("(?s).*\nfast0 +file +32\\.0 MiB +active +- +cw0 \\(exclusive\\) +-\n.*"));
        assertTrue(list, list.matches("(?s).*\nslow0 +file +64\\.0 MiB +active +- +cw0 \\(exclusive\\) +-\n.*"));
        assertTrue(run("dev:list --bytes").contains("33554432"));
    }

    @Test
    public void aDirtyCacheIsNotRemovedOrReloadedAwayUnlessForced() throws Exception {
        cache("cw1", "slow1", "fast1");
        run("dev:message cw1 writeback_threshold=0");
        try (DeviceHandle h = manager.open("cw1", "itest:dirty")) {
            // small scattered writes: cached (not bypassed as large or sequential writes are)
            ByteBuffer b = ByteBuffer.allocate(4096);
            for (int i = 0; i < 256; i++) {
                b.clear();
                h.write((long) ((i * 37) % 256) * 65536, b, 0);
            }
            h.flush();
        }
        long dirty = manager.withTarget("cw1", CacheTarget.class, CacheTarget::dirtyBlocks);
        assertTrue("dirty blocks: " + dirty, dirty > 0);
        String dirtyText = String.format(java.util.Locale.ROOT, "%,d", dirty);
        String refusal = "cw1 holds " + dirtyText + " dirty blocks its backing device does not have; run cache:detach cw1 "
                + "first, or add --force to strand them on fast1";
        assertEquals(refusal, failure("dev:remove cw1"));
        assertEquals(refusal, failure("dev:reload cw1 linear device=slow1"));
        assertEquals("writeboost", manager.info("cw1").orElseThrow().type());
        // writeboost over the same devices adopts the log, dirty blocks included
        assertTrue(run("dev:reload cw1 writeboost backing=slow1 cache=fast1").startsWith("reloaded cw1"));
        assertEquals("the persisted tunable is re-applied after the reload", "0",
                manager.status("cw1").get("writeback_threshold"));
        assertEquals("0", stored("cw1").get("tunable.writeback_threshold"));
        String forced = run("dev:remove --force cw1");
        assertTrue(forced, forced.contains("removing cw1 stranded "));
        assertTrue(forced, forced.contains(" dirty blocks on fast1"));
        assertFalse(manager.info("cw1").isPresent());
        assertEquals(null, stored("cw1"));
    }

    /** Writes {@code value} into the 4 KiB blocks at {@code offsets} of {@code device} and flushes. */
    private void writeBlocks(String device, byte value, long... offsets) throws Exception {
        try (DeviceHandle h = manager.open(device, "itest:blocks")) {
            ByteBuffer b = ByteBuffer.allocate(4096);
            for (long off : offsets) {
                b.clear();
                java.util.Arrays.fill(b.array(), value);
                h.write(off, b, 0);
            }
            h.flush();
        }
    }

    /** The first byte of the 4 KiB block at {@code offset}, after checking the block holds only that byte. */
    private byte blockValue(String device, long offset) throws Exception {
        try (DeviceHandle h = manager.open(device, "itest:blocks")) {
            ByteBuffer b = ByteBuffer.allocate(4096);
            h.read(offset, b);
            byte v = b.get(0);
            for (int i = 0; i < 4096; i++) {
                assertEquals("byte " + i + " of the block at " + offset, v, b.get(i));
            }
            return v;
        }
    }

    @Test
    public void aCleanCacheReloadedAwayAndBackServesWhatTheBackingDeviceGotMeanwhile() throws Exception {
        // a new user's trial: writeboost written back, reloaded into linear, the backing device
        // written through it, reloaded into writeboost over the same devices: the old copies came back
        cache("cr1", "slow4", "fast4");
        writeBlocks("cr1", (byte) 0x11, 40960, 1 << 20);
        assertEquals(0x11, blockValue("cr1", 40960)); // cached (and read) before the reload
        run("cache:writeback cr1");
        assertEquals(0L, (long) manager.withTarget("cr1", CacheTarget.class, CacheTarget::dirtyBlocks));
        assertTrue(run("dev:reload cr1 linear device=slow4").startsWith("reloaded cr1"));
        writeBlocks("cr1", (byte) 0x22, 40960, 1 << 20);
        assertTrue(run("dev:reload cr1 writeboost backing=slow4 cache=fast4").startsWith("reloaded cr1"));
        assertEquals(0x22, blockValue("cr1", 40960));
        assertEquals(0x22, blockValue("cr1", 1 << 20));
        run("dev:remove cr1");
        run("dev:remove fast4");
        run("dev:remove slow4");
    }

    @Test
    public void identityTunablesAndTransientDevices() throws Exception {
        run("dev:create m0 memory size=1M");
        String id = manager.info("m0").orElseThrow().id();
        assertNotNull(id);
        assertEquals(id, stored("m0").get("id"));
        assertTrue(run("dev:info m0").contains(id));
        run("dev:reload m0 memory size=2M");
        assertEquals(id, manager.info("m0").orElseThrow().id());
        assertTrue(run("dev:create --transient t0 memory size=1M").contains("transient"));
        assertEquals(null, stored("t0"));
        assertTrue(run("dev:list").contains("active (transient)"));
        assertTrue(failure("dev:create").startsWith("missing the device name; usage: dev:create"));
        assertTrue(failure("dev:message m0").startsWith("missing KEY VALUE; usage: dev:message"));
        run("dev:remove t0");
        run("dev:remove m0");
    }

    @Test
    public void aHotUpdateInterruptsACallHoldingTheTarget() throws Exception {
        cache("cw2", "slow3", "fast3");
        CountDownLatch inside = new CountDownLatch(1);
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        Thread caller = new Thread(() -> {
            try {
                manager.withTarget("cw2", CacheTarget.class, c -> {
                    inside.countDown();
                    new CountDownLatch(1).await(); // a long operation, cancelled only by an interrupt
                    return null;
                });
                outcome.complete(null);
            } catch (Throwable t) {
                outcome.complete(t);
            }
        }, "device-safety-call");
        caller.start();
        assertTrue(inside.await(60, TimeUnit.SECONDS));
        Bundle writeboost = null;
        for (Bundle b : context.getBundles()) {
            if (b.getSymbolicName().equals("dev.strata.cache.writeboost")) {
                writeboost = b;
            }
        }
        assertNotNull(writeboost);
        writeboost.stop();
        Throwable t;
        try {
            t = outcome.get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new AssertionError(e);
        }
        assertTrue("the call was interrupted: " + t, t instanceof InterruptedException);
        Await.until("cw2 waits for its target type", 60,
                () -> manager.info("cw2").map(d -> d.state() == DeviceState.WAITING_FOR_TARGET).orElse(false));
        assertTrue(run("dev:list").contains("waiting for target type 'writeboost'"));
        assertEquals("waiting-for-target", manager.status("cw2").get("state"));
        writeboost.start();
        Await.until("cw2 back", 60, () -> manager.info("cw2").map(d -> d.state() == DeviceState.ACTIVE).orElse(false));
    }

    @Test
    public void devListSaysWhyADeviceFromABrokenCfgWaits() throws Exception {
        run("dev:create m1 memory size=1M");
        Path deploy = Path.of(context.getProperty("felix.fileinstall.dir"));
        Files.writeString(deploy.resolve("dev.strata.device-broken.cfg"), "name=broken\ntype=linear\narg.device=m1\narg.offset=3\n");
        Files.writeString(deploy.resolve("dev.strata.device-orphan.cfg"), "name=orphan\ntype=linear\narg.device=nosuch\n");
        Await.until("both .cfg devices defined", 60,
                () -> manager.info("broken").isPresent() && manager.info("orphan").isPresent());
        Await.until("the reasons known", 60, () -> manager.info("broken").map(d -> d.waitingFor() != null
                && d.waitingFor().contains("offset")).orElse(false));
        String list = run("dev:list");
        assertTrue(list, list.matches("(?s).*\nbroken +linear +- +waiting-for-target +m1 +- +waiting for a successful build: "
                + "linear: offset=3 .*"));
        assertTrue(list, list.matches("(?s).*\norphan +linear +- +waiting-for-target +nosuch +- +waiting for device 'nosuch'\n.*"));
        assertEquals("waiting-for-target", manager.status("broken").get("state"));
        Files.delete(deploy.resolve("dev.strata.device-broken.cfg"));
        Files.delete(deploy.resolve("dev.strata.device-orphan.cfg"));
        Await.until("the .cfg devices gone", 60, () -> manager.info("broken").isEmpty() && manager.info("orphan").isEmpty());
        run("dev:remove m1");
    }

    @Test
    public void aSecondDeviceOverAnOpenImageFileIsRefusedAndChangesNothing() throws Exception {
        Path img = dir.resolve("img0.img");
        run("dev:create img0 file path=" + img + " size=4M create=true");
        Path link = Files.createSymbolicLink(dir.resolve("img0-link.img"), img);
        Path hard = Files.createLink(dir.resolve("img0-hard.img"), img);
        for (Path p : new Path[] {img, link, hard}) {
            assertEquals("file: " + p.toAbsolutePath().normalize() + " is already open as device 'img0'; one image file can back one device",
                    failure("dev:create --transient dup4 file path=" + p));
            assertEquals("file: " + p.toAbsolutePath().normalize() + " is already open as device 'img0'; one image file can back one device",
                    failure("dev:create dup5 file path=" + p + " size=8M create=true"));
        }
        assertFalse(manager.info("dup4").isPresent());
        assertFalse(manager.info("dup5").isPresent());
        assertEquals(null, stored("dup5"));
        assertEquals("the refused device did not grow the live image", 4L << 20, Files.size(img));
        assertFalse(run("dev:list").contains("dup"));

        // a reload of the holder over its own file hands the claim over (the old target closes first)
        assertTrue(run("dev:reload img0 file path=" + link).startsWith("reloaded img0"));
        assertTrue(failure("dev:create --transient dup4 file path=" + img).endsWith("is already open as device 'img0'; one image file can back one device"));

        // a hot update of the driver: the old version's target closes, the new version claims again
        Bundles.updateAndRefresh(context, "dev.strata.driver.file", "excl update");
        Await.until("img0 back after the driver update", 60,
                () -> manager.info("img0").map(d -> d.state() == DeviceState.ACTIVE).orElse(false),
                () -> String.valueOf(manager.info("img0")));
        assertTrue(failure("dev:create --transient dup4 file path=" + hard).endsWith("is already open as device 'img0'; one image file can back one device"));

        run("dev:remove img0");
        assertTrue(run("dev:create --transient img1 file path=" + hard).contains("img1"));
        run("dev:remove img1");
    }
}
