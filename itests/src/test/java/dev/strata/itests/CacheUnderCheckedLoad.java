package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;

import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceManager;
import dev.strata.api.DeviceState;

/**
 * A cache device over two file devices under verified concurrent load while something is done to
 * the framework again and again (a bundle updated, a bundle stopped and started): 4 threads write
 * and read back checksummed blocks ({@link CheckedBlocks}) through the cache, every disturbance
 * waits for I/O progress first, so each one overlaps real I/O. Zero I/O errors, zero mismatches;
 * afterwards every block reads back as last written, through the cache and — after a complete
 * writeback — directly from the backing file. Shared by the hot-update and controller ITs of the
 * cache policies.
 */
final class CacheUnderCheckedLoad {
    private static final int THREADS = 4;
    private static final int BLOCKS_PER_THREAD = 1024; // 4 MiB per thread
    /** I/O operations each disturbance must let through before the next one. */
    private static final long OPS_BETWEEN = 2000;

    /** One disturbance of the framework, number {@code i} (from 0); throws to fail the test. */
    @FunctionalInterface
    interface Disturbance {
        void run(int i) throws Exception;
    }

    private final BundleContext context;
    private final DeviceManager manager;
    private final String type;
    private final String device;

    /** A cache of {@code type} named {@code device}; its data lives next to the test's fileinstall directory. */
    CacheUnderCheckedLoad(BundleContext context, DeviceManager manager, String type, String device) {
        this.context = context;
        this.manager = manager;
        this.type = type;
        this.device = device;
    }

    /**
     * Creates {@code slow} (32 MiB), {@code fast} ({@code cacheSize}) and the cache with
     * {@code args} besides backing and cache, runs {@code times} disturbances under load, checks
     * everything, and removes the devices. Returns the cache's status just before the removal.
     */
    Map<String, String> run(String what, String cacheSize, Map<String, String> args, int times, Disturbance disturbance)
            throws Exception {
        Path dir = Path.of(context.getProperty("felix.fileinstall.dir")).getParent().resolve("data");
        Files.createDirectories(dir);
        Await.until("the file and " + type + " target types", 60,
                () -> manager.targetTypes().stream().filter(t -> t.type().equals("file") || t.type().equals(type)).count() == 2);
        Path backingFile = dir.resolve("slow.img");
        manager.create("slow", "file", Map.of("path", backingFile.toString(), "size", "32M", "create", "true"));
        manager.create("fast", "file", Map.of("path", dir.resolve("fast.img").toString(), "size", cacheSize, "create", "true"));
        Map<String, String> cacheArgs = new HashMap<>(args);
        cacheArgs.put("backing", "slow");
        cacheArgs.put("cache", "fast");
        manager.create(device, type, cacheArgs);

        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong ops = new AtomicLong();
        AtomicLong mismatches = new AtomicLong();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        List<CheckedBlocks> writers = new ArrayList<>();
        int survived = 0;
        Map<String, String> last;
        try (DeviceHandle handle = manager.open(device, "itest:" + type + "-" + what.replace(' ', '-'))) {
            CountDownLatch finished = new CountDownLatch(THREADS);
            for (int t = 0; t < THREADS; t++) {
                CheckedBlocks w = new CheckedBlocks(t, BLOCKS_PER_THREAD, handle, stop, ops, mismatches, errors, finished);
                writers.add(w);
                new Thread(w, device + "-checked-io-" + t).start();
            }
            try {
                for (int i = 0; i < times && errors.isEmpty(); i++) {
                    long before = ops.get();
                    Await.until("I/O progress before " + what + " " + (i + 1), 120,
                            () -> ops.get() >= before + OPS_BETWEEN || !errors.isEmpty());
                    disturbance.run(i);
                    survived++;
                }
                long before = ops.get();
                Await.until("I/O progress after the last " + what, 120, () -> ops.get() >= before + OPS_BETWEEN || !errors.isEmpty());
            } finally {
                stop.set(true);
                assertTrue("I/O threads finished", finished.await(120, TimeUnit.SECONDS));
            }
            System.out.println(type + ": " + what + " survived under load: " + survived + " of " + times + " (" + ops.get()
                    + " checked I/O operations by " + THREADS + " threads, " + errors.size() + " I/O errors, "
                    + mismatches.get() + " mismatches)");
            if (!errors.isEmpty()) {
                throw new AssertionError("I/O failed during " + what + ": " + errors.peek(), errors.peek());
            }
            assertEquals("mismatches under load", 0, mismatches.get());
            assertEquals(times, survived);

            // every block as last written, through the cache, after a final flush
            handle.flush();
            long bad = 0;
            for (CheckedBlocks w : writers) {
                bad += w.verifyAll();
            }
            assertEquals("blocks not as last written after the " + what, 0, bad);

            // and in the backing file once everything is written back
            manager.message(device, "writeback", "all");
            Await.until(device + " clean", 300, () -> dirty() == 0, () -> status().toString());
            for (CheckedBlocks w : writers) {
                bad += w.verifyFile(backingFile);
            }
            assertEquals("blocks of the backing file not as last written after writeback", 0, bad);
            last = status();
        }
        manager.remove(device);
        manager.remove("fast");
        manager.remove("slow");
        return last;
    }

    /** The bundle {@code bsn} (installed, or the test fails). */
    Bundle bundle(String bsn) {
        return Bundles.installed(context, bsn);
    }

    /** Updates bundle {@code bsn} from its jar in the distribution, refreshes it, and waits for the cache to be active again. */
    Disturbance hotUpdate(String bsn) throws Exception {
        Bundles.installed(context, bsn);
        return i -> {
            Bundles.updateAndRefresh(context, bsn, "update " + (i + 1));
            Await.until("device " + device + " active again after update " + (i + 1), 120,
                    () -> manager.info(device).map(d -> d.state() == DeviceState.ACTIVE).orElse(false),
                    () -> String.valueOf(manager.info(device)));
        };
    }

    long dirty() {
        return Long.parseLong(status().get("dirty_blocks"));
    }

    Map<String, String> status() {
        try {
            return manager.status(device);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
