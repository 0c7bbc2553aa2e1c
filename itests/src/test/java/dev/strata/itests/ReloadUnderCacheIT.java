package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

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

import dev.strata.api.CacheTarget;
import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceManager;

/**
 * A black-box trial's steps through Gogo with real targets: a writecache attached to a linear
 * device over a linear over a file, written (dirty), then the file, the middle window and the
 * cache's backing window reloaded elsewhere; the writeback put the dirty blocks at another offset
 * of another file, reads of uncached blocks came from that file, and the cache kept its size over a
 * smaller device. Now each reload is refused while the cache is dirty, a reload once it is clean
 * makes it drop its copies (reads show the new file), and a shrink under it is refused. A reload
 * of the cache's cache device that moves its blocks is refused, dirty or clean.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class ReloadUnderCacheIT {
    static final long MIB = 1L << 20;

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
        return StrataOptions.distribution(StrataOptions.workDir("reload-under-cache"));
    }

    @Before
    public void openSession() throws Exception {
        dir = Path.of(context.getProperty("felix.fileinstall.dir")).getParent().resolve("data");
        Files.createDirectories(dir);
        shell = GogoSession.open(context, processor, manager, "cache:attach", new ByteArrayOutputStream(), "file",
                "writecache");
    }

    @After
    public void closeSession() {
        if (shell != null) {
            shell.close();
        }
    }

    private String failure(String command) {
        String m = String.valueOf(shell.failure(command).getMessage());
        assertFalse("one line: " + m, m.contains("\n"));
        assertFalse("no exception class name: " + m, m.contains("Exception"));
        return m;
    }

    private void write(String device, byte value, long offset, int length) throws Exception {
        try (DeviceHandle h = manager.open(device, "itest:blocks")) {
            ByteBuffer b = ByteBuffer.allocate(length);
            java.util.Arrays.fill(b.array(), value);
            h.write(offset, b, 0);
            h.flush();
        }
    }

    /** The byte every byte of the 4 KiB block at {@code offset} holds (checked). */
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

    private long dirty() throws Exception {
        return dirty("pwc");
    }

    private long dirty(String cache) throws Exception {
        return manager.withTarget(cache, CacheTarget.class, CacheTarget::dirtyBlocks);
    }

    /**
     * The trial's data loss in one command: a writecache's cache device reloaded onto another file
     * (or a memory device) with 1 MiB dirty; the cache then read zeros for its dirty blocks and
     * wrote them back over the backing device. Now the reload is refused, dirty or not, and the
     * data stays; the same file grown keeps its blocks and is allowed.
     */
    @Test
    public void aReloadOfADirtyWritecachesCacheDeviceIsRefusedAndTheDataStays() throws Exception {
        Path other = dir.resolve("c2b.img");
        shell.run("dev:create lw file path=" + dir.resolve("lw.img") + " size=64M create=true");
        shell.run("dev:create c2 file path=" + dir.resolve("c2.img") + " size=8M create=true");
        shell.run("dev:create wc2 linear device=lw");
        shell.run("cache:attach --lower wc2.low wc2 writecache cache=c2 format=true");
        write("wc2", (byte) 0xd1, 0, (int) MIB);
        long dirty = dirty("wc2");
        assertTrue("dirty after the write: " + dirty, dirty > 0);

        String refused = failure("dev:reload c2 file path=" + other + " size=8M create=true");
        assertTrue(refused, refused.startsWith("c2 is wc2's cache device: wc2's index ("
                + String.format(java.util.Locale.ROOT, "%,d", dirty) + " dirty blocks) points at c2's current blocks, "
                + "which the reload would replace; run cache:detach wc2 first"));
        assertTrue(failure("dev:reload c2 memory size=32M").startsWith("c2 is wc2's cache device"));
        assertFalse("a refused reload creates nothing", Files.exists(other));
        assertEquals(dirty, dirty("wc2"));
        assertEquals((byte) 0xd1, blockValue("wc2", 0));
        assertEquals((byte) 0xd1, blockValue("wc2", MIB - 4096));

        // the same file, grown: its blocks stay where they are
        assertTrue(shell.run("dev:reload c2 file path=" + dir.resolve("c2.img") + " size=16M create=true")
                .startsWith("reloaded c2"));
        assertEquals(dirty, dirty("wc2"));
        assertEquals((byte) 0xd1, blockValue("wc2", 0));

        shell.run("cache:writeback wc2");
        assertEquals((byte) 0xd1, blockValue("lw", 0));
        assertEquals((byte) 0xd1, blockValue("lw", MIB - 4096));
        shell.run("dev:remove wc2");
        shell.run("dev:remove wc2.low");
        shell.run("dev:remove c2");
        shell.run("dev:remove lw");
    }

    @Test
    public void aReloadUnderADirtyCacheIsRefusedAndOneUnderACleanCacheDropsItsCopies() throws Exception {
        Path other = dir.resolve("other.img");
        shell.run("dev:create pslow file path=" + dir.resolve("pslow.img") + " size=64M create=true");
        shell.run("dev:create pfast file path=" + dir.resolve("pfast.img") + " size=16M create=true");
        shell.run("dev:create pmid linear device=pslow");
        shell.run("dev:create pwc linear device=pmid");
        shell.run("cache:attach --lower pwc.low pwc writecache cache=pfast format=true");
        write("pwc", (byte) 0xee, 0, 4 * (int) MIB);
        long dirty = dirty();
        assertTrue("dirty after the write: " + dirty, dirty > 0);

        String tail = ", which holds " + String.format(java.util.Locale.ROOT, "%,d", dirty) + " dirty blocks";
        String pslow = failure("dev:reload pslow file path=" + other + " size=64M create=true");
        assertEquals("pslow is under pwc" + tail + " that belong at pslow's current blocks; run cache:writeback pwc "
                + "(or cache:detach pwc) first, or add --force", pslow);
        assertTrue(failure("dev:reload pmid linear device=pslow offset=4096").startsWith("pmid is under pwc" + tail));
        assertTrue(failure("dev:reload pwc.low linear device=pmid offset=8192").startsWith("pwc.low is under pwc" + tail));
        assertFalse("a refused reload creates nothing", Files.exists(other));
        assertEquals("0", manager.status("pmid").get("offset"));
        assertEquals(dirty, dirty());

        // a shrink under the cache (its backing window maps all of pmid) is refused, dirty or not
        shell.run("cache:writeback pwc");
        assertEquals(0L, dirty());
        assertEquals("pmid would be 32.0 MiB (33,554,432 bytes), smaller than the 64.0 MiB (67,108,864 bytes) that "
                + "pwc.low (linear device) maps of it; pwc.low's size was fixed when it was built: give pmid at least "
                + "67,108,864 bytes, or shrink or remove pwc.low first",
                failure("dev:reload pmid linear device=pslow length=32M"));
        assertEquals(64 * MIB, manager.info("pwc").orElseThrow().size());

        // clean: the reload goes ahead and the cache's copies of the old file's blocks are gone
        assertEquals((byte) 0xee, blockValue("pwc", 0)); // a cached copy (the writecache keeps written blocks)
        assertTrue(shell.run("dev:reload pslow file path=" + other + " size=64M create=true").startsWith("reloaded pslow"));
        assertEquals("pwc reads the new file, not the old copy", 0, blockValue("pwc", 0));
        assertEquals(0, blockValue("pwc", 2 * MIB));
        write("pwc", (byte) 0x5a, 8192, 4096);
        shell.run("cache:writeback pwc");
        assertEquals(0x5a, blockValue("pslow", 8192));

        shell.run("dev:remove pwc");
        shell.run("dev:remove pwc.low");
        shell.run("dev:remove pmid");
        shell.run("dev:remove pfast");
        shell.run("dev:remove pslow");
    }
}
