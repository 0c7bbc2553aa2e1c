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
 * DESIGN.md §3 and §6.3, hot update under load for the read cache (issue 12): a readcache over
 * two file devices, 4 threads writing and reading back checksummed blocks through it, while the
 * read-cache policies bundle is updated (the bound policy goes away: promotion pauses, then the
 * cache rebinds) and the readcache bundle itself is updated (the target is closed and reopened
 * from its cache device, warm). Zero I/O errors, zero mismatches; afterwards every block reads
 * back as last written, through the cache and directly from the origin file.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class ReadcacheHotUpdateIT {

    private static final String WORK = "readcache-hot-update";
    private static final String[] BSNS = {"dev.strata.readcache.policies", "dev.strata.cache.readcache"};
    private static final int THREADS = 4;
    private static final int BLOCKS_PER_THREAD = 512;
    private static final int UPDATES = 4;
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
    public void updatingThePolicyAndReadcacheBundlesUnderLoadLosesNothing() throws Exception {
        Path dir = Path.of(context.getProperty("felix.fileinstall.dir")).getParent().resolve("data");
        Files.createDirectories(dir);
        Await.until("the file and readcache target types", 60,
                () -> manager.targetTypes().stream().filter(t -> t.type().equals("file") || t.type().equals("readcache")).count() == 2);
        Await.until("the read-cache policies", 60, () -> {
            try {
                return context.getServiceReferences(dev.strata.api.ReadCachePolicy.class, null).size() >= 3;
            } catch (org.osgi.framework.InvalidSyntaxException e) {
                return false;
            }
        });
        Path originFile = dir.resolve("slow.img");
        manager.create("slow", "file", Map.of("path", originFile.toString(), "size", "32M", "create", "true"));
        manager.create("fast", "file", Map.of("path", dir.resolve("fast.img").toString(), "size", "4M", "create", "true"));
        manager.create("rc", "readcache", Map.of("origin", "slow", "cache", "fast", "policy", "lru"));

        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong ops = new AtomicLong();
        AtomicLong mismatches = new AtomicLong();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        List<CheckedBlocks> writers = new ArrayList<>();
        int survived = 0;
        try (DeviceHandle handle = manager.open("rc", "itest:readcache-hot-update")) {
            CountDownLatch finished = new CountDownLatch(THREADS);
            for (int t = 0; t < THREADS; t++) {
                CheckedBlocks w = new CheckedBlocks(t, BLOCKS_PER_THREAD, handle, stop, ops, mismatches, errors, finished);
                writers.add(w);
                new Thread(w, "rc-hot-update-io-" + t).start();
            }
            try {
                for (int i = 0; i < UPDATES && errors.isEmpty(); i++) {
                    String bsn = BSNS[i % BSNS.length];
                    long before = ops.get();
                    Await.until("I/O progress before update " + (i + 1), 120,
                            () -> ops.get() >= before + OPS_BETWEEN_UPDATES || !errors.isEmpty());
                    Bundles.updateAndRefresh(context, bsn, "update " + (i + 1));
                    Await.until("device rc active again after update " + (i + 1), 120,
                            () -> manager.info("rc").map(d -> d.state() == DeviceState.ACTIVE).orElse(false),
                            () -> String.valueOf(manager.info("rc")));
                    Await.until("policy bound again after update " + (i + 1), 120,
                            () -> "true".equals(status("rc").get("policy_bound")), () -> status("rc").toString());
                    survived++;
                }
                long before = ops.get();
                Await.until("I/O progress after the last update", 120, () -> ops.get() >= before + OPS_BETWEEN_UPDATES || !errors.isEmpty());
            } finally {
                stop.set(true);
                assertTrue("I/O threads finished", finished.await(120, TimeUnit.SECONDS));
            }
            Map<String, String> st = status("rc");
            System.out.println("ReadcacheHotUpdateIT: bundle updates survived under load: " + survived + " of " + UPDATES + " ("
                    + ops.get() + " checked I/O operations, " + errors.size() + " I/O errors, " + mismatches.get()
                    + " mismatches; read_hits " + st.get("read_hits") + ", promotions " + st.get("promotions") + ")");
            if (!errors.isEmpty()) {
                throw new AssertionError("I/O failed during hot update: " + errors.peek(), errors.peek());
            }
            assertEquals("mismatches under load", 0, mismatches.get());
            assertEquals(UPDATES, survived);
            handle.flush();
            long bad = 0;
            for (CheckedBlocks w : writers) {
                bad += w.verifyAll();
            }
            assertEquals("blocks not as last written after the updates", 0, bad);
            for (CheckedBlocks w : writers) {
                bad += w.verifyFile(originFile);
            }
            assertEquals("blocks of the origin file not as last written", 0, bad);
        }
        manager.remove("rc");
        manager.remove("fast");
        manager.remove("slow");
    }

    private Map<String, String> status(String device) {
        try {
            return manager.status(device);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
