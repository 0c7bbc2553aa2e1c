package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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

    private static final String SIZE = "96M";

    private static List<String> fio(int port, boolean verifyOnly) {
        List<String> a = new ArrayList<>(List.of("fio", "--name=live-attach", "--ioengine=nbd",
                "--uri=nbd://127.0.0.1:" + port + "/disk1", "--rw=randwrite", "--bs=4k", "--iodepth=32",
                "--size=" + SIZE, "--randseed=14", "--verify=crc32c", "--do_verify=1", "--verify_fatal=1",
                "--verify_state_save=0", "--output-format=json"));
        if (verifyOnly) {
            a.add("--verify_only=1");
        } else {
            a.addAll(List.of("--write_lat_log=attach", "--log_avg_msec=0")); // every request's latency, timed
            a.add("--end_fsync=1"); // a flush at the end of the writes: they must survive the SIGKILL below
        }
        return a;
    }

    @Test
    public void attachWhileFioWritesAndVerifiesThroughAnNbdExport() throws Exception {
        int port = Distribution.freePort();
        Distribution d = Distribution.copy("live-attach").defaultExportPort(port);
        Path work = d.home.getParent();
        try (Tmux t = ConsoleIT.console(d, "live-attach", "")) {
            t.await("the prompt", 120, s -> s.contains("strata> "));
            assertTrue(ConsoleIT.run(t, "dev:create disk1 file path=var/disk1.img size=256M create=true", 60)
                    .startsWith("created disk1"));
            assertTrue(ConsoleIT.run(t, "dev:create ssd1 file path=var/ssd1.img size=160M create=true", 60)
                    .startsWith("created ssd1"));
            ConsoleIT.run(t, "nbd:export --port " + port + " disk1", 60);

            Path out = work.resolve("fio-attach.json");
            Process fio = new ProcessBuilder(fio(port, false)).directory(work.toFile())
                    .redirectOutput(out.toFile()).redirectError(work.resolve("fio-attach.err").toFile())
                    .redirectInput(new File("/dev/null")).start();
            long fioStart = System.nanoTime();
            long attachFrom;
            long attachTo;
            try {
                // attach once fio's writes are arriving at disk1
                String status = "";
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                while (!status.matches("(?s).*io_writes\\s+[1-9][0-9]{3,}.*")) {
                    assertTrue("fio never wrote through disk1: " + status, System.nanoTime() < deadline && fio.isAlive());
                    status = ConsoleIT.run(t, "dev:status disk1", 60);
                }
                attachFrom = System.nanoTime();
                String attached = ConsoleIT.run(t, "cache:attach disk1 writeboost cache=ssd1", 120);
                attachTo = System.nanoTime();
                System.out.println("LiveAttachIT: " + attached);
                assertTrue(attached, attached.startsWith("disk1: writeboost attached (cache ssd1); its file target is "
                        + "now device disk1.file; I/O paused "));
                assertTrue("the attach happened while fio was still writing", fio.isAlive());
                assertTrue("fio finished", fio.waitFor(600, TimeUnit.SECONDS));
            } finally {
                fio.destroyForcibly();
            }
            String json = Files.readString(out, StandardCharsets.UTF_8);
            assertEquals("fio exit: " + json + Files.readString(work.resolve("fio-attach.err")), 0, fio.exitValue());
            assertFioVerified(json);
            System.out.println("LiveAttachIT: fio's longest request in the whole run: " + longestMs(json) + " ms; "
                    + window(work.resolve("attach_lat.1.log"), (attachFrom - fioStart) / 1_000_000,
                            (attachTo - fioStart) / 1_000_000));

            String list = ConsoleIT.run(t, "dev:list", 60);
            assertTrue(list, list.lines().anyMatch(l -> l.matches("disk1\\s+writeboost\\s.*disk1\\.file,ssd1.*")));
            assertTrue(list, list.lines().anyMatch(l -> l.matches("disk1\\.file\\s+file\\s.*disk1 \\(exclusive\\).*")));
            // no clean stop: SIGKILL the JVM (found by its unique distribution directory)
            String home = "-Dstrata.home=" + d.home.toRealPath();
            ProcessHandle jvm = ProcessHandle.allProcesses()
                    .filter(p -> p.info().commandLine().map(c -> c.contains(home + " ")).orElse(false))
                    .findFirst().orElseThrow(() -> new AssertionError("no JVM of " + d.home));
            assertTrue(jvm.destroyForcibly());
            t.await("the killed JVM's shell", 60, sc -> sc.contains("STRATA-EXITED 137"));
        }
        // the same stack after the SIGKILL and a restart, and fio finds every block it wrote
        try (Tmux t = ConsoleIT.console(d, "live-attach-2", "")) {
            t.await("the prompt", 120, s -> s.contains("strata> "));
            String list = ConsoleIT.run(t, "dev:list", 60);
            assertTrue(list, list.lines().anyMatch(l -> l.matches("disk1\\s+writeboost\\s.*active.*")));
            // the export is persisted too: it comes back by itself
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            String exports = ConsoleIT.run(t, "nbd:exports", 60);
            while (!exports.contains("disk1")) {
                assertTrue("the export of disk1 did not come back: " + exports, System.nanoTime() < deadline);
                exports = ConsoleIT.run(t, "nbd:exports", 60);
            }
            Path out = work.resolve("fio-verify.json");
            Process fio = new ProcessBuilder(fio(port, true)).directory(work.toFile()).redirectOutput(out.toFile())
                    .redirectError(work.resolve("fio-verify.err").toFile()).redirectInput(new File("/dev/null")).start();
            try {
                assertTrue("fio verify finished", fio.waitFor(600, TimeUnit.SECONDS));
            } finally {
                fio.destroyForcibly();
            }
            assertEquals("fio verify exit: " + Files.readString(out) + Files.readString(work.resolve("fio-verify.err")),
                    0, fio.exitValue());
            String json = Files.readString(out, StandardCharsets.UTF_8);
            assertEquals("verify-only errors: " + json, 0, number(json, "error"));
            assertTrue("verify-only read everything: " + json, number(json, "io_bytes") >= 96L << 20);
            ConsoleIT.exit(t);
        }
    }

    private static void assertFioVerified(String json) {
        assertEquals("fio job error: " + json, 0, number(json, "error"));
        Matcher m = Pattern.compile("\"io_bytes\"\\s*:\\s*(\\d+)").matcher(json);
        assertTrue(json, m.find());
        long read = Long.parseLong(m.group(1));
        assertTrue(json, m.find());
        long written = Long.parseLong(m.group(1));
        assertEquals("fio wrote the whole range: " + json, 96L << 20, written);
        assertEquals("fio verified everything it wrote: " + json, written, read);
    }

    /**
     * From fio's per-request latency log (completion time in ms since fio started, latency in ns,
     * direction): the longest write that completed while the attach command ran (give or take the
     * time fio took to start, 1 s either side), against the longest outside that window.
     */
    private static String window(Path log, long fromMs, long toMs) throws java.io.IOException {
        long inside = 0;
        long outside = 0;
        long n = 0;
        for (String line : Files.readAllLines(log)) {
            String[] f = line.split(",\\s*");
            if (f.length < 3 || !f[2].trim().equals("1")) {
                continue;
            }
            long at = Long.parseLong(f[0].trim());
            long lat = Long.parseLong(f[1].trim());
            if (at >= fromMs - 1000 && at <= toMs + 1000) {
                inside = Math.max(inside, lat);
                n++;
            } else {
                outside = Math.max(outside, lat);
            }
        }
        return String.format(java.util.Locale.ROOT, "longest write around the attach %.1f ms (%d writes), elsewhere %.1f ms",
                inside / 1e6, n, outside / 1e6);
    }

    /** The largest {@code lat_ns.max} of the job (read = verify pass, write), in ms. */
    private static double longestMs(String json) {
        Matcher m = Pattern.compile("\"lat_ns\"\\s*:\\s*\\{[^}]*?\"max\"\\s*:\\s*(\\d+)").matcher(json);
        long max = 0;
        while (m.find()) {
            max = Math.max(max, Long.parseLong(m.group(1)));
        }
        return max / 1e6;
    }

    private static long number(String json, String key) {
        Matcher m = Pattern.compile("\"" + Pattern.quote(key) + "\"\\s*:\\s*(\\d+)").matcher(json);
        assertTrue("no \"" + key + "\" in " + json, m.find());
        return Long.parseLong(m.group(1));
    }
}
