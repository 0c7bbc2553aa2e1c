package dev.strata.itests;

import static org.junit.Assert.assertEquals;
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

import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceManager;

/**
 * Issue 13's hot update: a writeboost and a writecache cache, both bound to {@code pi}, take
 * verified I/O (checksummed blocks, 2 threads each) while the daemons bundle is stopped and
 * started, updated in place and refreshed, and uninstalled and installed again from its jar. Each
 * time both caches fall back to their built-in controller ({@code cache:stats}' keys
 * {@code writeback.controller.active=builtin}, {@code writeback.controller.fallback=true}) and bind
 * the new {@code pi} service once it is back (a new session: {@code writeback.controller.sessions}
 * grows). No I/O error, no mismatch; afterwards every block reads back as last written, through
 * the caches and — after a complete writeback — in their backing files.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class DaemonsHotUpdateIT {
    private static final String WORK = "daemons-hot-update";
    private static final String BSN = "dev.strata.daemons";
    private static final List<String> CACHES = List.of("wb", "wc");
    private static final int THREADS_PER_CACHE = 2;
    private static final int BLOCKS_PER_THREAD = 1024;
    /** Checked I/O operations between two steps, so each step overlaps real I/O. */
    private static final long OPS_BETWEEN = 1500;

    @Inject
    BundleContext context;

    @Inject
    DeviceManager manager;

    @Configuration
    public Option[] config() {
        return StrataOptions.distribution(StrataOptions.workDir(WORK));
    }

    @Test
    public void stoppingUpdatingAndReplacingTheDaemonsBundleUnderLoadLosesNothing() throws Exception {
        Path dir = Path.of(context.getProperty("felix.fileinstall.dir")).getParent().resolve("data");
        Files.createDirectories(dir);
        Await.until("the file, writeboost and writecache target types", 60, () -> manager.targetTypes().stream()
                .filter(t -> List.of("file", "writeboost", "writecache").contains(t.type())).count() == 3);
        Await.until("pi registered", 60, () -> bundle() != null && bundle().getState() == Bundle.ACTIVE);
        Map<String, Path> backingFiles = Map.of("wb", dir.resolve("wb-slow.img"), "wc", dir.resolve("wc-slow.img"));
        manager.create("wb-slow", "file", Map.of("path", backingFiles.get("wb").toString(), "size", "32M", "create", "true"));
        manager.create("wb-fast", "file", Map.of("path", dir.resolve("wb-fast.img").toString(), "size", "18M", "create", "true"));
        manager.create("wb", "writeboost", Map.of("backing", "wb-slow", "cache", "wb-fast", "writeback.controller", "pi"));
        manager.create("wc-slow", "file", Map.of("path", backingFiles.get("wc").toString(), "size", "32M", "create", "true"));
        manager.create("wc-fast", "file", Map.of("path", dir.resolve("wc-fast.img").toString(), "size", "8M", "create", "true"));
        // watermarks 0: the controller paces all background writeback, so it is asked all along
        manager.create("wc", "writecache", Map.of("backing", "wc-slow", "cache", "wc-fast", "writeback.controller", "pi",
                "high_watermark", "0", "low_watermark", "0"));

        Path jar = StrataOptions.bundleJar(BSN);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong ops = new AtomicLong();
        AtomicLong mismatches = new AtomicLong();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        Map<String, List<CheckedBlocks>> writers = Map.of("wb", new ArrayList<>(), "wc", new ArrayList<>());
        List<String> steps = new ArrayList<>();
        try (DeviceHandle wb = manager.open("wb", "itest:daemons-hot-update");
                DeviceHandle wc = manager.open("wc", "itest:daemons-hot-update")) {
            CountDownLatch finished = new CountDownLatch(2 * THREADS_PER_CACHE);
            for (int t = 0; t < THREADS_PER_CACHE; t++) {
                for (String cache : CACHES) {
                    CheckedBlocks w = new CheckedBlocks(t, BLOCKS_PER_THREAD, cache.equals("wb") ? wb : wc, stop, ops,
                            mismatches, errors, finished);
                    writers.get(cache).add(w);
                    new Thread(w, "daemons-hot-update-" + cache + "-" + t).start();
                }
            }
            try {
                awaitBound("at the start");
                // pi's own tunable set on each cache (cache:set DEV writeback.p_term_inverse=7): it
                // must reach the session now and every new session after a stop, an update, a replace
                for (String c : CACHES) {
                    manager.message(c, "writeback.p_term_inverse", "7");
                    try {
                        manager.message(c, "writeback.writeback_percent", "101");
                        throw new AssertionError(c + ": writeback.writeback_percent=101 was taken");
                    } catch (dev.strata.api.InvalidArgumentException e) {
                        assertTrue(e.getMessage(), e.getMessage().contains("writeback_percent=101 is out of range; allowed 0 to 100"));
                    }
                    Await.until(c + " pi session took p_term_inverse=7", 120,
                            () -> "7".equals(status(c).get("writeback.controller.p_term_inverse")), () -> status(c).toString());
                }
                // 1. stop and start
                long[] sessions = sessions();
                progress(ops, "before stop");
                bundle().stop();
                awaitFallback("while stopped");
                progress(ops, "while stopped");
                bundle().start();
                awaitRebound("after start", sessions);
                steps.add("stop/start");
                // 2. update in place and refresh
                sessions = sessions();
                progress(ops, "before update");
                try (InputStream in = Files.newInputStream(jar)) {
                    bundle().update(in);
                }
                refresh(bundle());
                awaitRebound("after update", sessions);
                steps.add("update/refresh");
                // 3. replace: uninstall, then install and start from the jar
                sessions = sessions();
                progress(ops, "before uninstall");
                Bundle old = bundle();
                old.uninstall();
                refresh(old);
                awaitFallback("while uninstalled");
                progress(ops, "while uninstalled");
                Bundle installed;
                try (InputStream in = Files.newInputStream(jar)) {
                    installed = context.installBundle("daemons-replaced", in);
                }
                installed.start();
                awaitRebound("after reinstall", sessions);
                steps.add("uninstall/install");
                progress(ops, "at the end");
            } finally {
                stop.set(true);
                assertTrue("I/O threads finished", finished.await(120, TimeUnit.SECONDS));
            }
            System.out.println("DaemonsHotUpdateIT: " + steps + " under load; " + ops.get() + " checked I/O operations, "
                    + errors.size() + " I/O errors, " + mismatches.get() + " mismatches; " + status("wb").get("writeback.controller.sessions")
                    + " and " + status("wc").get("writeback.controller.sessions") + " controller sessions opened by wb and wc");
            if (!errors.isEmpty()) {
                throw new AssertionError("I/O failed while the daemons bundle changed: " + errors.peek(), errors.peek());
            }
            assertEquals("mismatches under load", 0, mismatches.get());
            assertEquals(3, steps.size());

            wb.flush();
            wc.flush();
            long bad = 0;
            for (List<CheckedBlocks> ws : writers.values()) {
                for (CheckedBlocks w : ws) {
                    bad += w.verifyAll();
                }
            }
            assertEquals("blocks not as last written through the caches", 0, bad);
            for (String cache : CACHES) {
                manager.message(cache, "writeback", "all");
                Await.until(cache + " clean", 300, () -> Long.parseLong(status(cache).get("dirty_blocks")) == 0,
                        () -> status(cache).toString());
                for (CheckedBlocks w : writers.get(cache)) {
                    bad += w.verifyFile(backingFiles.get(cache));
                }
            }
            assertEquals("blocks of the backing files not as last written after writeback", 0, bad);
        }
        for (String d : List.of("wb", "wc", "wb-fast", "wb-slow", "wc-fast", "wc-slow")) {
            manager.remove(d);
        }
    }

    private static void progress(AtomicLong ops, String when) throws Exception {
        long before = ops.get();
        Await.until("checked I/O " + when, 120, () -> ops.get() >= before + OPS_BETWEEN);
    }

    private void awaitBound(String when) throws Exception {
        for (String c : CACHES) {
            Await.until(c + " paced by pi " + when, 120, () -> "pi".equals(status(c).get("writeback.controller.active"))
                    && "false".equals(status(c).get("writeback.controller.fallback")), () -> status(c).toString());
        }
    }

    private void awaitFallback(String when) throws Exception {
        for (String c : CACHES) {
            Await.until(c + " on its built-in controller " + when, 120,
                    () -> "builtin".equals(status(c).get("writeback.controller.active"))
                            && "true".equals(status(c).get("writeback.controller.fallback"))
                            && "pi".equals(status(c).get("writeback.controller")),
                    () -> status(c).toString());
        }
    }

    /** Bound to pi again, through a session opened since {@code before} (the new service, not the old one). */
    private void awaitRebound(String when, long[] before) throws Exception {
        for (int i = 0; i < CACHES.size(); i++) {
            String c = CACHES.get(i);
            long was = before[i];
            Await.until(c + " paced by a new pi session " + when, 120, () -> {
                Map<String, String> s = status(c);
                return "pi".equals(s.get("writeback.controller.active")) && "false".equals(s.get("writeback.controller.fallback"))
                        && Long.parseLong(s.get("writeback.controller.sessions")) > was
                        && "7".equals(s.get("writeback.controller.p_term_inverse")) // the cache's setting, not pi's 40
                        && "7".equals(s.get("writeback.p_term_inverse"));
            }, () -> status(c).toString());
        }
    }

    private long[] sessions() {
        long[] s = new long[CACHES.size()];
        for (int i = 0; i < s.length; i++) {
            s[i] = Long.parseLong(status(CACHES.get(i)).get("writeback.controller.sessions"));
        }
        return s;
    }

    private void refresh(Bundle b) throws InterruptedException {
        Bundles.refresh(context, b, "of " + BSN);
    }

    private Bundle bundle() {
        return Bundles.find(context, BSN);
    }

    private Map<String, String> status(String device) {
        try {
            return manager.status(device);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
