package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.io.InputStream;
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
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.FrameworkEvent;
import org.osgi.framework.wiring.FrameworkWiring;

import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceManager;
import dev.strata.api.DeviceState;

/**
 * DESIGN.md §3, hot update of a policy bundle, for the writecache (issue 11): a writecache device
 * over two file devices, 4 threads writing and reading back checksummed blocks through it, while
 * the {@code dev.strata.cache.writecache} bundle is updated and refreshed again and again. The
 * cache (8 MiB ≈ 2000 slots) is smaller than the working set (4096 blocks), so the cache runs full
 * (write-around, forwarded flushes, writers writing back) and background writeback runs across
 * the updates. Zero I/O errors, zero mismatches; afterwards every block reads back as last
 * written, through the cache and — after a complete writeback — directly from the backing file.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class WritecacheHotUpdateIT {

    private static final String WORK = "writecache-hot-update";
    private static final String BSN = "dev.strata.cache.writecache";
    private static final int THREADS = 4;
    private static final int BLOCKS_PER_THREAD = 1024; // 4 MiB per thread
    private static final int UPDATES = 5;
    /** I/O operations each update must let through before the next one, so the updates overlap real I/O. */
    private static final long OPS_BETWEEN_UPDATES = 2000;

    @Inject
    BundleContext context;

    @Inject
    DeviceManager manager;

    @Configuration
    public Option[] config() {
        return StrataOptions.distribution(StrataOptions.workDir(WORK));
    }

    @Test
    public void updatingTheWritecacheBundleUnderLoadLosesNothing() throws Exception {
        Path dir = Path.of(context.getProperty("felix.fileinstall.dir")).getParent().resolve("data");
        Files.createDirectories(dir);
        Await.until("the file and writecache target types", 60,
                () -> manager.targetTypes().stream().filter(t -> t.type().equals("file") || t.type().equals("writecache")).count() == 2);
        Path backingFile = dir.resolve("slow.img");
        manager.create("slow", "file", Map.of("path", backingFile.toString(), "size", "32M", "create", "true"));
        manager.create("fast", "file", Map.of("path", dir.resolve("fast.img").toString(), "size", "8M", "create", "true"));
        manager.create("wc", "writecache", Map.of("backing", "slow", "cache", "fast"));

        Bundle bundle = null;
        for (Bundle b : context.getBundles()) {
            if (BSN.equals(b.getSymbolicName())) {
                bundle = b;
            }
        }
        assertNotNull(BSN + " installed", bundle);
        Path jar = StrataOptions.bundleJar(BSN);

        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong ops = new AtomicLong();
        AtomicLong mismatches = new AtomicLong();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        List<CheckedBlocks> writers = new ArrayList<>();
        int survived = 0;
        try (DeviceHandle handle = manager.open("wc", "itest:writecache-hot-update")) {
            CountDownLatch finished = new CountDownLatch(THREADS);
            for (int t = 0; t < THREADS; t++) {
                CheckedBlocks w = new CheckedBlocks(t, BLOCKS_PER_THREAD, handle, stop, ops, mismatches, errors, finished);
                writers.add(w);
                new Thread(w, "wc-hot-update-io-" + t).start();
            }
            FrameworkWiring wiring = context.getBundle(0).adapt(FrameworkWiring.class);
            try {
                for (int i = 0; i < UPDATES && errors.isEmpty(); i++) {
                    long before = ops.get();
                    Await.until("I/O progress before update " + (i + 1), 120,
                            () -> ops.get() >= before + OPS_BETWEEN_UPDATES || !errors.isEmpty());
                    try (InputStream in = Files.newInputStream(jar)) {
                        bundle.update(in);
                    }
                    CountDownLatch refreshed = new CountDownLatch(1);
                    wiring.refreshBundles(List.of(bundle), e -> {
                        if (e.getType() == FrameworkEvent.PACKAGES_REFRESHED) {
                            refreshed.countDown();
                        }
                    });
                    assertTrue("refresh " + (i + 1) + " finished", refreshed.await(120, TimeUnit.SECONDS));
                    assertEquals(Bundle.ACTIVE, bundle.getState());
                    Await.until("device wc active again after update " + (i + 1), 120,
                            () -> manager.info("wc").map(d -> d.state() == DeviceState.ACTIVE).orElse(false),
                            () -> String.valueOf(manager.info("wc")));
                    survived++;
                }
                long before = ops.get();
                Await.until("I/O progress after the last update", 120, () -> ops.get() >= before + OPS_BETWEEN_UPDATES || !errors.isEmpty());
            } finally {
                stop.set(true);
                assertTrue("I/O threads finished", finished.await(120, TimeUnit.SECONDS));
            }
            System.out.println("WritecacheHotUpdateIT: writecache bundle updates survived under load: " + survived + " of "
                    + UPDATES + " (" + ops.get() + " checked I/O operations by " + THREADS + " threads, " + errors.size()
                    + " I/O errors, " + mismatches.get() + " mismatches)");
            if (!errors.isEmpty()) {
                throw new AssertionError("I/O failed during hot update: " + errors.peek(), errors.peek());
            }
            assertEquals("mismatches under load", 0, mismatches.get());
            assertEquals(UPDATES, survived);

            // every block as last written, through the cache, after a final flush
            handle.flush();
            long bad = 0;
            for (CheckedBlocks w : writers) {
                bad += w.verifyAll();
            }
            assertEquals("blocks not as last written after the updates", 0, bad);

            // and in the backing file once everything is written back
            manager.message("wc", "writeback", "all");
            Await.until("wc clean", 300, () -> dirty("wc") == 0, () -> status("wc").toString());
            for (CheckedBlocks w : writers) {
                bad += w.verifyFile(backingFile);
            }
            assertEquals("blocks of the backing file not as last written after writeback", 0, bad);
        }
        manager.remove("wc");
        manager.remove("fast");
        manager.remove("slow");
    }

    private long dirty(String device) {
        return Long.parseLong(status(device).get("dirty_blocks"));
    }

    private Map<String, String> status(String device) {
        try {
            return manager.status(device);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
