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
 * {@code cache:detach} typed into the console of {@code bin/strata} while fio writes through an
 * NBD export of a device that {@code cache:attach} made a writeboost (holding fio's writes dirty,
 * {@code writeback_threshold=0}) with crc32c verification: fio finishes without an error and
 * verifies everything it wrote, the device is its old {@code file} again and {@code disk1.file} is
 * gone; after a SIGKILL of the JVM and a restart fio verifies the same data again
 * ({@code --verify_only}; the writes ended with a flush). fio's longest request is printed, not
 * asserted on.
 */
public class LiveDetachIT {

    private static final String SIZE = "64M";

    private static List<String> fio(int port, boolean verifyOnly) {
        List<String> a = new ArrayList<>(List.of("fio", "--name=live-detach", "--ioengine=nbd",
                "--uri=nbd://127.0.0.1:" + port + "/disk1", "--rw=randwrite", "--bs=4k", "--iodepth=32",
                "--size=" + SIZE, "--randseed=15", "--verify=crc32c", "--do_verify=1", "--verify_fatal=1",
                "--verify_state_save=0", "--output-format=json"));
        if (verifyOnly) {
            a.add("--verify_only=1");
        } else {
            a.add("--end_fsync=1"); // a flush at the end of the writes: they must survive the SIGKILL below
        }
        return a;
    }

    @Test
    public void detachWhileFioWritesAndVerifiesThroughAnNbdExport() throws Exception {
        int port = Distribution.freePort();
        Distribution d = Distribution.copy("live-detach").defaultExportPort(port);
        Path work = d.home.getParent();
        try (Tmux t = ConsoleIT.console(d, "live-detach", "")) {
            t.await("the prompt", 120, s -> s.contains("strata> "));
            assertTrue(ConsoleIT.run(t, "dev:create disk1 file path=var/disk1.img size=128M create=true", 60)
                    .startsWith("created disk1"));
            assertTrue(ConsoleIT.run(t, "dev:create ssd1 file path=var/ssd1.img size=128M create=true", 60)
                    .startsWith("created ssd1"));
            ConsoleIT.run(t, "nbd:export --port " + port + " disk1", 60);
            String attached = ConsoleIT.run(t, "cache:attach disk1 writeboost cache=ssd1 writeback_threshold=0", 120);
            assertTrue(attached, attached.startsWith("disk1: writeboost attached"));

            Path out = work.resolve("fio-detach.json");
            Process fio = new ProcessBuilder(fio(port, false)).directory(work.toFile())
                    .redirectOutput(out.toFile()).redirectError(work.resolve("fio-detach.err").toFile())
                    .redirectInput(new File("/dev/null")).start();
            try {
                // detach once the cache holds a good part of fio's writes dirty
                String stats = "";
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                while (!stats.matches("(?s).*dirty_blocks\\s+[1-9][0-9]{3,}.*")) {
                    assertTrue("the cache never held fio's writes: " + stats, System.nanoTime() < deadline && fio.isAlive());
                    stats = ConsoleIT.run(t, "cache:stats --all --bytes disk1", 60);
                }
                String detached = ConsoleIT.run(t, "cache:detach disk1", 300);
                System.out.println("LiveDetachIT: " + detached.replace("\r", " | ").strip() + " (fio still writing: " + fio.isAlive() + ")");
                assertTrue(detached, detached.contains("disk1: detached; its file target is back (disk1.file is gone)"));
                assertTrue("fio finished", fio.waitFor(600, TimeUnit.SECONDS));
            } finally {
                fio.destroyForcibly();
            }
            String json = Files.readString(out, StandardCharsets.UTF_8);
            assertEquals("fio exit: " + json + Files.readString(work.resolve("fio-detach.err")), 0, fio.exitValue());
            assertFioVerified(json);
            System.out.println("LiveDetachIT: fio's longest request in the whole run: " + longestMs(json) + " ms");

            String list = ConsoleIT.run(t, "dev:list", 60);
            assertTrue(list, list.lines().anyMatch(l -> l.matches("disk1\\s+file\\s.*")));
            assertTrue(list, list.lines().noneMatch(l -> l.startsWith("disk1.file")));
            String home = "-Dstrata.home=" + d.home.toRealPath();
            ProcessHandle jvm = ProcessHandle.allProcesses()
                    .filter(p -> p.info().commandLine().map(c -> c.contains(home + " ")).orElse(false))
                    .findFirst().orElseThrow(() -> new AssertionError("no JVM of " + d.home));
            assertTrue(jvm.destroyForcibly());
            t.await("the killed JVM's shell", 60, sc -> sc.contains("STRATA-EXITED 137"));
        }
        try (Tmux t = ConsoleIT.console(d, "live-detach-2", "")) {
            t.await("the prompt", 120, s -> s.contains("strata> "));
            String list = ConsoleIT.run(t, "dev:list", 60);
            assertTrue(list, list.lines().anyMatch(l -> l.matches("disk1\\s+file\\s.*active.*")));
            assertTrue(list, list.lines().noneMatch(l -> l.startsWith("disk1.file")));
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
            assertTrue("verify-only read everything: " + json, number(json, "io_bytes") >= 64L << 20);
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
        assertEquals("fio wrote the whole range: " + json, 64L << 20, written);
        assertEquals("fio verified everything it wrote: " + json, written, read);
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
