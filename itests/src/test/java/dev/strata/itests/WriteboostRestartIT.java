package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.Test;
import org.osgi.framework.launch.Framework;

import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager;
import dev.strata.api.DeviceState;

/**
 * Issue 5, "restart with a full dirty log and verify all data": a writeboost cache whose log is
 * full of dirty data (background writeback off: {@code writeback_threshold=0}, so only reclaim
 * of a full log writes back, one segment per batch: {@code nr_max_batched_writeback=1}; two log
 * buffers, so the headroom reclaim keeps is small) survives a framework stop and a new framework on the same
 * Configuration Admin directory — the stack comes back by itself, the dirty data is still dirty
 * (recovered from the log, not written back at shutdown) and every block reads back as last
 * written; after {@code writeback=all} the backing file holds it all. Launches Felix itself, as
 * {@link RestartIT} does.
 */
public class WriteboostRestartIT {

    private static final int BLOCKS = 16384; // 64 MiB working set over a cache of ≈ 8400 blocks

    @Test
    public void aFullDirtyLogSurvivesAFrameworkRestart() throws Exception {
        Path work = StrataOptions.workDir("writeboost-restart");
        Path backingFile = work.resolve("slow.img");
        AtomicLong mismatches = new AtomicLong();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        CheckedBlocks region = new CheckedBlocks(0, BLOCKS, null, new AtomicBoolean(true), new AtomicLong(), mismatches, errors,
                new CountDownLatch(1));
        long dirtyBefore;

        Framework first = RestartIT.launch(work);
        try {
            DeviceManager m = RestartIT.service(first, DeviceManager.class);
            Await.until("the file and writeboost target types", 60,
                    () -> m.targetTypes().stream().filter(t -> t.type().equals("file") || t.type().equals("writeboost")).count() == 2);
            m.create("slow", "file", Map.of("path", backingFile.toString(), "size", "80M", "create", "true"));
            m.create("fast", "file", Map.of("path", work.resolve("fast.img").toString(), "size", "34M", "create", "true"));
            m.create("wb", "writeboost", Map.of("backing", "slow", "cache", "fast", "buffers", "2",
                    "writeback_threshold", "0", "nr_max_batched_writeback", "1"));
            long capacity = Long.parseLong(m.status("wb").get("capacity_blocks"));
            assertTrue("the working set is larger than the cache: " + capacity, capacity < BLOCKS * 3L / 4);
            try (DeviceHandle h = m.open("wb", "itest:writeboost-restart")) {
                region.use(h);
                // 1.5 × the cache's capacity in distinct blocks, in random order (no sequential bypass),
                // then overwrites of a few: the log fills, and only reclaim of the full log writes back
                int[] order = shuffled(BLOCKS, new SplittableRandom(11));
                int distinct = (int) (capacity * 3 / 2);
                for (int i = 0; i < distinct; i++) {
                    region.writeNext(order[i]);
                }
                SplittableRandom random = new SplittableRandom(12);
                for (int i = 0; i < capacity / 16; i++) {
                    region.writeNext(order[random.nextInt(distinct)]);
                }
                h.flush();
                assertEquals("through the cache before the restart", 0, region.verifyAll());
            }
            Map<String, String> s = m.status("wb");
            dirtyBefore = Long.parseLong(s.get("dirty_blocks"));
            System.out.println("WriteboostRestartIT: before the restart " + dirtyBefore + " dirty blocks of a capacity of " + capacity
                    + " (segments used " + s.get("segments_used") + "/" + s.get("segments_total") + ", written back "
                    + s.get("written_back_blocks") + ")");
            // urgent writeback keeps 2 × buffers segments of headroom written back ahead of the head
            // (WriteboostCache), so "full" is: all but that headroom not yet written back. Not
            // segments_used: the record updater may reclaim written-back segments early
            long notWrittenBack = Long.parseLong(s.get("head_segment")) - Long.parseLong(s.get("written_back_segment"));
            assertTrue("the log is full: " + s, notWrittenBack >= Long.parseLong(s.get("segments_total")) - 2 * 2 - 1);
            assertTrue("the log is full of dirty data: " + s, dirtyBefore >= capacity * 2 / 3);
            assertTrue("reclaim of the full log wrote back: " + s, Long.parseLong(s.get("written_back_blocks")) > 0);
        } finally {
            RestartIT.stop(first);
        }

        Framework second = RestartIT.launch(work);
        try {
            DeviceManager m = RestartIT.service(second, DeviceManager.class);
            Await.until("slow, fast and wb back and up", 120, () -> up(m, "slow") && up(m, "fast") && up(m, "wb"),
                    () -> m.list().toString());
            DeviceInfo wb = m.info("wb").orElseThrow();
            assertEquals("writeboost", wb.type());
            assertEquals(Set.of("slow", "fast"), Set.copyOf(wb.lower()));
            assertEquals("the dirty data is recovered from the log, not lost or written back at shutdown", dirtyBefore,
                    Long.parseLong(m.status("wb").get("dirty_blocks")));
            try (DeviceHandle h = m.open("wb", "itest:writeboost-restart")) {
                region.use(h);
                assertEquals("every block as last written, after the restart", 0, region.verifyAll());
            }
            m.message("wb", "writeback", "all");
            Await.until("wb clean", 300, () -> dirty(m, "wb") == 0, () -> status(m, "wb").toString());
            assertEquals("the backing file after writeback", 0, region.verifyFile(backingFile));
            assertTrue("no I/O errors: " + errors, errors.isEmpty());
            assertEquals(0, mismatches.get());
        } finally {
            RestartIT.stop(second);
        }
    }

    private static int[] shuffled(int n, SplittableRandom random) {
        int[] a = new int[n];
        for (int i = 0; i < n; i++) {
            a[i] = i;
        }
        for (int i = n - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
        return a;
    }

    private static boolean up(DeviceManager m, String name) {
        return m.info(name).map(d -> d.state() == DeviceState.ACTIVE && d.size() > 0).orElse(false);
    }

    private static long dirty(DeviceManager m, String device) {
        return Long.parseLong(status(m, device).get("dirty_blocks"));
    }

    private static Map<String, String> status(DeviceManager m, String device) {
        try {
            return m.status(device);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
