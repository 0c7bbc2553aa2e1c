package dev.strata.itests;

import static org.junit.Assert.assertTrue;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.Test;

/**
 * {@code cache:detach} typed into the console of {@code bin/strata} while fio writes through an
 * NBD export of a device that {@code cache:attach} made a writeboost (holding fio's writes dirty,
 * {@code writeback_threshold=0}) with crc32c verification: fio finishes without an error and
 * verifies everything it wrote, the device is its old {@code file} again and {@code disk1.file} is
 * gone; after a SIGKILL of the JVM and a restart fio verifies the same data again
 * ({@code --verify_only}; the writes ended with a flush). fio's longest request is printed, not
 * asserted on.
 */
public class LiveDetachIT {

    @Test
    public void detachWhileFioWritesAndVerifiesThroughAnNbdExport() throws Exception {
        int port = Distribution.freePort();
        Distribution d = Distribution.copy("live-detach").defaultExportPort(port);
        Path work = d.home.getParent();
        LiveFio fio = new LiveFio("live-detach", port, 64L << 20, 15, work);
        try (Tmux t = ConsoleIT.console(d, "live-detach", "")) {
            t.await("the prompt", 120, s -> s.contains("strata> "));
            assertTrue(ConsoleIT.run(t, "dev:create disk1 file path=var/disk1.img size=128M create=true", 60)
                    .startsWith("created disk1"));
            assertTrue(ConsoleIT.run(t, "dev:create ssd1 file path=var/ssd1.img size=128M create=true", 60)
                    .startsWith("created ssd1"));
            ConsoleIT.run(t, "nbd:export --port " + port + " disk1", 60);
            String attached = ConsoleIT.run(t, "cache:attach disk1 writeboost cache=ssd1 writeback_threshold=0", 120);
            assertTrue(attached, attached.startsWith("disk1: writeboost attached"));

            fio.start();
            String json;
            try {
                // detach once the cache holds a good part of fio's writes dirty
                String stats = "";
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                while (!stats.matches("(?s).*dirty_blocks\\s+[1-9][0-9]{3,}.*")) {
                    assertTrue("the cache never held fio's writes: " + stats, System.nanoTime() < deadline && fio.alive());
                    stats = ConsoleIT.run(t, "cache:stats --all --bytes disk1", 60);
                }
                String detached = ConsoleIT.run(t, "cache:detach disk1", 300);
                System.out.println("LiveDetachIT: " + detached.replace("\r", " | ").strip() + " (fio still writing: " + fio.alive() + ")");
                assertTrue(detached, detached.contains("disk1: detached; its file target is back (disk1.file is gone)"));
                json = fio.finish();
            } finally {
                fio.stop();
            }
            System.out.println("LiveDetachIT: fio's longest request in the whole run: " + LiveFio.longestMs(json) + " ms");

            String list = ConsoleIT.run(t, "dev:list", 60);
            assertTrue(list, list.lines().anyMatch(l -> l.matches("disk1\\s+file\\s.*")));
            assertTrue(list, list.lines().noneMatch(l -> l.startsWith("disk1.file")));
            LiveFio.kill(d, t);
        }
        try (Tmux t = ConsoleIT.console(d, "live-detach-2", "")) {
            t.await("the prompt", 120, s -> s.contains("strata> "));
            String list = ConsoleIT.run(t, "dev:list", 60);
            assertTrue(list, list.lines().anyMatch(l -> l.matches("disk1\\s+file\\s.*active.*")));
            assertTrue(list, list.lines().noneMatch(l -> l.startsWith("disk1.file")));
            LiveFio.awaitExport(t);
            fio.verifyOnly();
            ConsoleIT.exit(t);
        }
    }
}
