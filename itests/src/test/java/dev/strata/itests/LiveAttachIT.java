package dev.strata.itests;

import static org.junit.Assert.assertTrue;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.Test;

/**
 * {@code cache:attach} typed into the console of {@code bin/strata} while fio writes through an
 * NBD export of the device with crc32c verification: fio finishes without an error and verifies
 * everything it wrote, the device is a writeboost over its old file target (now {@code disk1.file})
 * afterwards, and after a SIGKILL of the JVM and a restart fio verifies the same data again
 * ({@code --verify_only}; the writes ended with a flush). The
 * longest write latency fio saw (the pause a client sees) is printed, not asserted on. The cache
 * (160 MiB) holds all fio writes (96 MiB), so no wait for log space hides in that figure.
 */
public class LiveAttachIT {

    @Test
    public void attachWhileFioWritesAndVerifiesThroughAnNbdExport() throws Exception {
        int port = Distribution.freePort();
        Distribution d = Distribution.copy("live-attach").defaultExportPort(port);
        Path work = d.home.getParent();
        LiveFio fio = new LiveFio("live-attach", port, 96L << 20, 14, work);
        try (Tmux t = ConsoleIT.console(d, "live-attach", "")) {
            t.await("the prompt", 120, s -> s.contains("strata> "));
            assertTrue(ConsoleIT.run(t, "dev:create disk1 file path=var/disk1.img size=256M create=true", 60)
                    .startsWith("created disk1"));
            assertTrue(ConsoleIT.run(t, "dev:create ssd1 file path=var/ssd1.img size=160M create=true", 60)
                    .startsWith("created ssd1"));
            ConsoleIT.run(t, "nbd:export --port " + port + " disk1", 60);

            fio.start();
            long attachFrom;
            long attachTo;
            String json;
            try {
                // attach once fio's writes are arriving at disk1
                String status = "";
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                while (!status.matches("(?s).*io_writes\\s+[1-9][0-9]{3,}.*")) {
                    assertTrue("fio never wrote through disk1: " + status, System.nanoTime() < deadline && fio.alive());
                    status = ConsoleIT.run(t, "dev:status disk1", 60);
                }
                attachFrom = fio.sinceStartMs();
                String attached = ConsoleIT.run(t, "cache:attach disk1 writeboost cache=ssd1", 120);
                attachTo = fio.sinceStartMs();
                System.out.println("LiveAttachIT: " + attached);
                assertTrue(attached, attached.startsWith("disk1: writeboost attached (cache ssd1); its file target is "
                        + "now device disk1.file; I/O paused "));
                assertTrue("the attach happened while fio was still writing", fio.alive());
                json = fio.finish();
            } finally {
                fio.stop();
            }
            System.out.println("LiveAttachIT: fio's longest request in the whole run: " + LiveFio.longestMs(json) + " ms; "
                    + fio.window("attach", attachFrom, attachTo));

            String list = ConsoleIT.run(t, "dev:list", 60);
            assertTrue(list, list.lines().anyMatch(l -> l.matches("disk1\\s+writeboost\\s.*disk1\\.file,ssd1.*")));
            assertTrue(list, list.lines().anyMatch(l -> l.matches("disk1\\.file\\s+file\\s.*disk1 \\(exclusive\\).*")));
            LiveFio.kill(d, t); // no clean stop
        }
        // the same stack after the SIGKILL and a restart, and fio finds every block it wrote
        try (Tmux t = ConsoleIT.console(d, "live-attach-2", "")) {
            t.await("the prompt", 120, s -> s.contains("strata> "));
            String list = ConsoleIT.run(t, "dev:list", 60);
            assertTrue(list, list.lines().anyMatch(l -> l.matches("disk1\\s+writeboost\\s.*active.*")));
            LiveFio.awaitExport(t); // the export is persisted too: it comes back by itself
            fio.verifyOnly();
            ConsoleIT.exit(t);
        }
    }
}
