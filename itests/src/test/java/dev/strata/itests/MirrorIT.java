package dev.strata.itests;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;
import static org.ops4j.pax.exam.CoreOptions.frameworkProperty;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import javax.inject.Inject;

import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.BundleContext;

import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceManager;
import dev.strata.api.InvalidArgumentException;

/**
 * The mirror bundle in a real Felix: a mirror over two file legs with a {@code disk:} log on a
 * third file takes verified I/O, survives a leg taken out, and after {@code recover} its daemon
 * resyncs the leg until both files hold the same bytes; and a mirror over the {@code zookeeper:}
 * log of a real ZooKeeper server (the ZooKeeper and netty bundles resolved in Felix).
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class MirrorIT {
    private static final int SIZE = 4 << 20;

    @Inject
    BundleContext context;

    @Inject
    DeviceManager manager;

    @Configuration
    public Option[] config() throws Exception {
        Path work = StrataOptions.workDir("mirror");
        List<Option> o = new ArrayList<>(List.of(StrataOptions.distribution(work)));
        // a real ZooKeeper server (Debian's), started on the driver side; its address is a framework property
        o.add(frameworkProperty("strata.test.zookeeper").value(TestZooKeeper.start(work.resolve("zookeeper"))));
        return o.toArray(new Option[0]);
    }

    /** The zookeeper: log in the real Felix: the ZooKeeper and netty bundles resolve and a mirror over it takes verified I/O. */
    @Test
    public void zookeeperLogResolvesAndCarriesTheMarks() throws Exception {
        Path dir = Path.of(context.getProperty("felix.fileinstall.dir")).getParent().resolve("zkdata");
        Files.createDirectories(dir);
        Await.until("the mirror target type", 60, () -> manager.targetTypes().stream().anyMatch(t -> t.type().equals("mirror")));
        for (String leg : new String[] {"za", "zb"}) {
            manager.create(leg, "file", Map.of("path", dir.resolve(leg + ".img").toString(), "size", Integer.toString(SIZE), "create", "true"));
        }
        String log = "zookeeper:" + context.getProperty("strata.test.zookeeper") + "/itest/mirror";
        try {
            manager.create("mzbad", "mirror", Map.of("legs", "za,zb", "region_size", "64k", "log", "zookeeper:127.0.0.1:2181"));
            fail("a zookeeper log without a path is refused");
        } catch (InvalidArgumentException e) {
            assertTrue(e.getMessage(), e.getMessage().startsWith("mirror: log=zookeeper:127.0.0.1:2181 needs servers and a path"));
        }
        manager.create("mz", "mirror", Map.of("legs", "za,zb", "region_size", "64k", "log", log, "node", "felix1", "nosync", "true"));
        byte[] model = new byte[SIZE];
        Random random = new Random(16);
        try (DeviceHandle m = manager.open("mz", "itest:mirror")) {
            writeRandom(m, model, random, 100);
            m.flush();
            Map<String, String> s = manager.status("mz");
            assertEquals(s.toString(), "member", s.get("zk_session"));
            assertEquals(log, s.get("log"));
            assertTrue(s.toString(), Long.parseLong(s.get("log_round_trips")) > 0);
            byte[] got = new byte[SIZE];
            m.read(0, ByteBuffer.wrap(got));
            assertArrayEquals(model, got);
        }
        manager.remove("mz");
        // the same node again: the log is not new, so nothing is copied
        manager.create("mz", "mirror", Map.of("legs", "za,zb", "region_size", "64k", "log", log, "node", "felix1"));
        assertEquals("0", manager.status("mz").get("resync_total"));
        manager.remove("mz");
        assertArrayEquals(model, Files.readAllBytes(dir.resolve("za.img")));
        assertArrayEquals(model, Files.readAllBytes(dir.resolve("zb.img")));
        manager.remove("za");
        manager.remove("zb");
    }

    @Test
    public void mirrorOverFilesDegradesAndRecovers() throws Exception {
        Path dir = Path.of(context.getProperty("felix.fileinstall.dir")).getParent().resolve("data");
        Files.createDirectories(dir);
        Await.until("the mirror target type", 60, () -> manager.targetTypes().stream().anyMatch(t -> t.type().equals("mirror")));
        for (String leg : new String[] {"ma", "mb"}) {
            manager.create(leg, "file", Map.of("path", dir.resolve(leg + ".img").toString(), "size", Integer.toString(SIZE), "create", "true"));
        }
        manager.create("mlog", "file", Map.of("path", dir.resolve("mlog.img").toString(), "size", "65536", "create", "true"));
        manager.create("m0", "mirror", Map.of("legs", "ma,mb", "region_size", "64k", "log", "disk:mlog", "nosync", "true"));
        byte[] model = new byte[SIZE];
        Random random = new Random(15);
        try (DeviceHandle m = manager.open("m0", "itest:mirror")) {
            writeRandom(m, model, random, 100);
            m.flush();
            Map<String, String> s = manager.status("m0");
            assertEquals("in_sync", s.get("leg.ma"));
            assertEquals("in_sync", s.get("leg.mb"));
            assertTrue(s.toString(), Long.parseLong(s.get("log_round_trips")) > 0);

            manager.message("m0", "fail", "mb");
            writeRandom(m, model, random, 100);
            m.flush();
            assertEquals("out_of_sync", manager.status("m0").get("leg.mb"));
            manager.message("m0", "recover", "mb");
            Await.until("leg mb back in sync", 60, () -> "in_sync".equals(status().get("leg.mb")), () -> status().toString());
            m.flush();
            byte[] got = new byte[SIZE];
            m.read(0, ByteBuffer.wrap(got));
            assertArrayEquals(model, got);
        }
        manager.remove("m0");
        assertArrayEquals(model, Files.readAllBytes(dir.resolve("ma.img")));
        assertArrayEquals(model, Files.readAllBytes(dir.resolve("mb.img")));
        manager.remove("mlog");
        manager.remove("ma");
        manager.remove("mb");
    }

    private Map<String, String> status() {
        try {
            return manager.status("m0");
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void writeRandom(DeviceHandle m, byte[] model, Random random, int n) throws Exception {
        for (int i = 0; i < n; i++) {
            int len = 4096 * (1 + random.nextInt(8));
            int off = 4096 * random.nextInt((SIZE - len) / 4096);
            byte[] data = new byte[len];
            random.nextBytes(data);
            m.write(off, ByteBuffer.wrap(data), 0);
            System.arraycopy(data, 0, model, off, len);
        }
    }
}
