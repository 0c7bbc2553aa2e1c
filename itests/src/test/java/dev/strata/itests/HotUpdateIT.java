package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

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
import dev.strata.api.DeviceState;

/**
 * DESIGN.md §3, hot update of a policy bundle: the {@code driver-file} bundle is updated and
 * refreshed again and again while 4 threads write and read back checksummed blocks through a
 * file device. Clients see pauses, never an error, and every block reads back as last written.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class HotUpdateIT {

    private static final String WORK = "hot-update";
    private static final String DRIVER = "dev.strata.driver.file";
    private static final int THREADS = 4;
    private static final int BLOCK = CheckedBlocks.BLOCK;
    private static final int BLOCKS_PER_THREAD = 1024; // 4 MiB per thread
    private static final int UPDATES = 8;
    /** I/O operations each update must let through before the next one, so the updates overlap real I/O. */
    private static final long OPS_BETWEEN_UPDATES = 200;

    @Inject
    BundleContext context;

    @Inject
    DeviceManager manager;

    @Configuration
    public Option[] config() {
        return StrataOptions.distribution(StrataOptions.workDir(WORK));
    }

    @Test
    public void updatingTheFileDriverUnderLoadLosesNothing() throws Exception {
        Path dir = Path.of(context.getProperty("felix.fileinstall.dir")).getParent().resolve("data");
        Files.createDirectories(dir);
        Await.until("the file target type", 60, () -> manager.targetTypes().stream().anyMatch(t -> t.type().equals("file")));
        long size = (long) THREADS * BLOCKS_PER_THREAD * BLOCK;
        manager.create("hot", "file", Map.of("path", dir.resolve("hot.img").toString(), "size", Long.toString(size), "create", "true"));

        Bundles.installed(context, DRIVER);

        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong ops = new AtomicLong();
        AtomicLong mismatches = new AtomicLong();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        List<CheckedBlocks> writers = new ArrayList<>();
        try (DeviceHandle handle = manager.open("hot", "itest:hot-update")) {
            CountDownLatch finished = new CountDownLatch(THREADS);
            for (int t = 0; t < THREADS; t++) {
                CheckedBlocks w = new CheckedBlocks(t, BLOCKS_PER_THREAD, handle, stop, ops, mismatches, errors, finished);
                writers.add(w);
                new Thread(w, "hot-update-io-" + t).start();
            }
            int survived = 0;
            for (int i = 0; i < UPDATES && errors.isEmpty(); i++) {
                long before = ops.get();
                Await.until("I/O progress before update " + (i + 1), 120, () -> ops.get() >= before + OPS_BETWEEN_UPDATES || !errors.isEmpty());
                Bundles.updateAndRefresh(context, DRIVER, "update " + (i + 1));
                Await.until("device hot active again after update " + (i + 1), 120,
                        () -> manager.info("hot").map(d -> d.state() == DeviceState.ACTIVE).orElse(false),
                        () -> String.valueOf(manager.info("hot")));
                survived++;
            }
            long before = ops.get();
            Await.until("I/O progress after the last update", 120, () -> ops.get() >= before + OPS_BETWEEN_UPDATES || !errors.isEmpty());
            stop.set(true);
            assertTrue("I/O threads finished", finished.await(120, TimeUnit.SECONDS));

            // every block reads back as last written, also after all the updates
            for (CheckedBlocks w : writers) {
                w.verifyAll();
            }
            System.out.println("HotUpdateIT: driver-file updates survived under load: " + survived + " (" + ops.get()
                    + " checked I/O operations by " + THREADS + " threads, " + errors.size() + " I/O errors, " + mismatches.get()
                    + " mismatches)");
            if (!errors.isEmpty()) {
                throw new AssertionError("I/O failed during hot update: " + errors.peek(), errors.peek());
            }
            assertEquals("mismatches", 0, mismatches.get());
            assertEquals(UPDATES, survived);
        } finally {
            stop.set(true);
        }
        manager.remove("hot");
    }
}
