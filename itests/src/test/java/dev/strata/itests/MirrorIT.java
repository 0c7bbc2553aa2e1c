package dev.strata.itests;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * resyncs the leg until both files hold the same bytes.
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
    public Option[] config() {
        return StrataOptions.distribution(StrataOptions.workDir("mirror"));
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
        try {
            manager.create("mz", "mirror", Map.of("legs", "ma,mb", "region_size", "64k", "log", "zookeeper:127.0.0.1:1/m"));
            fail("the zookeeper log is refused");
        } catch (InvalidArgumentException e) {
            assertEquals("mirror: log=zookeeper:… is not available yet; use log=core or log=disk:DEV", e.getMessage());
        }
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
