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
 * {@code cache:replace} typed into the console of {@code bin/strata} while fio writes through an
 * NBD export of a writeboost device holding fio's writes dirty ({@code writeback_threshold=0}),
 * with crc32c verification: fio finishes without an error and verifies everything it wrote, the
 * device's cache is the new device, and not one byte was written to the slow device's file during
 * the replace (its size on disk and modification time stay; the writes were cached). Then a second
 * replace is started while another fio writes a second region, and the JVM is killed with SIGKILL
 * in the middle of its copy; after a restart the device is up on one of the two cache devices and
 * fio verifies the first region again ({@code --verify_only}; it ended with a flush).
 */
public class LiveReplaceIT {

    private static final String SIZE = "64M";

    private static List<String> fio(int port, boolean verifyOnly) {
        List<String> a = new ArrayList<>(List.of("fio", "--name=live-replace", "--ioengine=nbd",
                "--uri=nbd://127.0.0.1:" + port + "/disk1", "--rw=randwrite", "--bs=4k", "--iodepth=32",
                "--size=" + SIZE, "--randseed=21", "--verify=crc32c", "--do_verify=1", "--verify_fatal=1",
                "--verify_state_save=0", "--output-format=json"));
        if (verifyOnly) {
            a.add("--verify_only=1");
        } else {
            a.add("--end_fsync=1"); // a flush at the end of the writes: they must survive the SIGKILL below
        }
        return a;
    }

    /** Writes into the second half of disk1 until it is killed (its data is not checked: never flushed). */
    private static List<String> fioBackground(int port) {
        return List.of("fio", "--name=live-replace-bg", "--ioengine=nbd", "--uri=nbd://127.0.0.1:" + port + "/disk1",
                "--rw=randwrite", "--bs=4k", "--iodepth=8", "--offset=64M", "--size=64M", "--time_based",
                "--runtime=300", "--randseed=5", "--output-format=json");
    }

    @Test
    public void replaceWhileFioWritesAndVerifiesThenSigkillMidCopy() throws Exception {
        int port = Distribution.freePort();
        Distribution d = Distribution.copy("live-replace").defaultExportPort(port);
        Path work = d.home.getParent();
        Path slow = d.home.resolve("var/disk1.img");
        try (Tmux t = ConsoleIT.console(d, "live-replace", "")) {
            t.await("the prompt", 120, s -> s.contains("strata> "));
            assertTrue(ConsoleIT.run(t, "dev:create disk1 file path=var/disk1.img size=128M create=true", 60)
                    .startsWith("created disk1"));
            assertTrue(ConsoleIT.run(t, "dev:create ssd1 file path=var/ssd1.img size=256M create=true", 60)
                    .startsWith("created ssd1"));
            assertTrue(ConsoleIT.run(t, "dev:create ssd2 file path=var/ssd2.img size=256M create=true", 60)
                    .startsWith("created ssd2"));
            assertTrue(ConsoleIT.run(t, "dev:create ssd3 file path=var/ssd3.img size=1G create=true", 60)
                    .startsWith("created ssd3"));
            ConsoleIT.run(t, "nbd:export --port " + port + " disk1", 60);
            String attached = ConsoleIT.run(t, "cache:attach disk1 writeboost cache=ssd1 writeback_threshold=0", 120);
            assertTrue(attached, attached.startsWith("disk1: writeboost attached"));

            Path out = work.resolve("fio-replace.json");
            Process fio = new ProcessBuilder(fio(port, false)).directory(work.toFile())
                    .redirectOutput(out.toFile()).redirectError(work.resolve("fio-replace.err").toFile())
                    .redirectInput(new File("/dev/null")).start();
            long slowBytes;
            try {
                String stats = "";
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                while (!stats.matches("(?s).*dirty_blocks\\s+[1-9][0-9]{3,}.*")) {
                    assertTrue("the cache never held fio's writes: " + stats, System.nanoTime() < deadline && fio.isAlive());
                    stats = ConsoleIT.run(t, "cache:stats --all --bytes disk1", 60);
                }
                slowBytes = writtenBytes(ConsoleIT.run(t, "dev:status --bytes disk1.file", 60));
                String replaced = ConsoleIT.run(t, "cache:replace disk1 cache=ssd2", 300);
                long after = writtenBytes(ConsoleIT.run(t, "dev:status --bytes disk1.file", 60));
                System.out.println("LiveReplaceIT: " + replaced.replace("\r", " | ").strip() + " (fio still writing: "
                        + fio.isAlive() + "; bytes written to the slow device during the replace: " + (after - slowBytes) + ")");
                assertTrue(replaced, replaced.contains("disk1: cache moved from ssd1 to ssd2 ("));
                assertEquals("bytes written to the slow device during the replace", slowBytes, after);
                assertTrue("fio finished", fio.waitFor(600, TimeUnit.SECONDS));
            } finally {
                fio.destroyForcibly();
            }
            String json = Files.readString(out, StandardCharsets.UTF_8);
            assertEquals("fio exit: " + json + Files.readString(work.resolve("fio-replace.err")), 0, fio.exitValue());
            assertFioVerified(json);
            System.out.println("LiveReplaceIT: fio's longest request in the whole run: " + longestMs(json) + " ms");
            String info = ConsoleIT.run(t, "dev:table", 60);
            assertTrue(info, info.lines().anyMatch(l -> l.startsWith("disk1 writeboost") && l.contains("cache=ssd2")));
            assertBlank(d.home.resolve("var/ssd1.img"));

            // the second replace: killed in the middle of its copy while another fio writes
            Process bg = new ProcessBuilder(fioBackground(port)).directory(work.toFile())
                    .redirectOutput(work.resolve("fio-bg.json").toFile()).redirectError(work.resolve("fio-bg.err").toFile())
                    .redirectInput(new File("/dev/null")).start();
            try {
                t.line("cache:replace disk1 cache=ssd3");
                String screen = t.await("the copy's progress line", 120, s -> s.contains("replace disk1: ")
                        || s.contains("disk1: cache moved from ssd2 to ssd3"));
                String home = "-Dstrata.home=" + d.home.toRealPath();
                ProcessHandle jvm = ProcessHandle.allProcesses()
                        .filter(p -> p.info().commandLine().map(c -> c.contains(home + " ")).orElse(false))
                        .findFirst().orElseThrow(() -> new AssertionError("no JVM of " + d.home));
                assertTrue(jvm.destroyForcibly());
                System.out.println("LiveReplaceIT: killed during the copy: " + !screen.contains("cache moved from ssd2"));
                t.await("the killed JVM's shell", 60, sc -> sc.contains("STRATA-EXITED 137"));
            } finally {
                bg.destroyForcibly();
                bg.waitFor(60, TimeUnit.SECONDS);
            }
        }
        try (Tmux t = ConsoleIT.console(d, "live-replace-2", "")) {
            t.await("the prompt", 120, s -> s.contains("strata> "));
            String list = ConsoleIT.run(t, "dev:list", 60);
            assertTrue(list, list.lines().anyMatch(l -> l.matches("disk1\\s+writeboost\\s.*active.*")));
            String table = ConsoleIT.run(t, "dev:table", 60);
            System.out.println("LiveReplaceIT: after the restart: " + table.lines().filter(l -> l.startsWith("disk1 "))
                    .findFirst().orElse(table));
            assertTrue(table, table.lines().anyMatch(l -> l.startsWith("disk1 writeboost")
                    && (l.contains("cache=ssd2") || l.contains("cache=ssd3"))));
            // the device the cache is not on holds no copy a later open could take for a cache: its
            // first block (every policy's superblock) was zeroed, by the replace or at this start
            String left = table.lines().anyMatch(l -> l.startsWith("disk1 writeboost") && l.contains("cache=ssd3"))
                    ? "ssd2" : "ssd3";
            assertBlank(d.home.resolve("var/" + left + ".img"));
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
        assertTrue(Files.exists(slow));
    }

    /** The file's first block is all zero (a blank device to every cache policy). */
    private static void assertBlank(Path file) throws java.io.IOException {
        byte[] first = new byte[4096];
        try (java.io.InputStream in = Files.newInputStream(file)) {
            assertEquals(4096, in.readNBytes(first, 0, 4096));
        }
        for (int i = 0; i < first.length; i++) {
            assertEquals(file.getFileName() + " is blank: byte " + i, 0, first[i]);
        }
    }

    /** {@code io_written_bytes} (the device's own counter) from {@code dev:status}. */
    private static long writtenBytes(String status) {
        Matcher m = Pattern.compile("(?m)^\\s*io_written_bytes\\s*[:=]?\\s*(\\d+)").matcher(status);
        assertTrue("no io_written_bytes in " + status, m.find());
        return Long.parseLong(m.group(1));
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
