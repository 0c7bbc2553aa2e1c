package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The black-box harness the live-change tests share ({@code LiveAttachIT}, {@code LiveDetachIT},
 * {@code LiveSwitchIT}): fio writing and verifying (crc32c) through an NBD export of {@code disk1},
 * its JSON result checked, the longest request (and the longest write inside a time window, from
 * fio's per-request latency log), a SIGKILL of the distribution's JVM, and the verify-only pass
 * after the restart.
 */
final class LiveFio {
    final String name;
    final int port;
    final long bytes;
    final int seed;
    final Path work;
    private Process process;
    private long startedNanos;

    LiveFio(String name, int port, long bytes, int seed, Path work) {
        this.name = name;
        this.port = port;
        this.bytes = bytes;
        this.seed = seed;
        this.work = work;
    }

    private List<String> command(boolean verifyOnly) {
        List<String> a = new ArrayList<>(List.of("fio", "--name=" + name, "--ioengine=nbd",
                "--uri=nbd://127.0.0.1:" + port + "/disk1", "--rw=randwrite", "--bs=4k", "--iodepth=32",
                "--size=" + (bytes >> 20) + "M", "--randseed=" + seed, "--verify=crc32c", "--do_verify=1",
                "--verify_fatal=1", "--verify_state_save=0", "--output-format=json"));
        if (verifyOnly) {
            a.add("--verify_only=1");
        } else {
            a.add("--end_fsync=1"); // a flush at the end of the writes: they must survive a SIGKILL after
            a.addAll(List.of("--write_lat_log=" + name, "--log_avg_msec=0")); // every request's latency, timed
        }
        return a;
    }

    /** Starts the writing (and verifying) run. */
    LiveFio start() throws IOException {
        process = new ProcessBuilder(command(false)).directory(work.toFile())
                .redirectOutput(work.resolve(name + ".json").toFile()).redirectError(work.resolve(name + ".err").toFile())
                .redirectInput(new File("/dev/null")).start();
        startedNanos = System.nanoTime();
        return this;
    }

    /** Ends a run that is still going (a failed test). */
    void stop() {
        if (process != null) {
            process.destroyForcibly();
        }
    }

    boolean alive() {
        return process.isAlive();
    }

    /** Milliseconds since fio started, for {@link #window}. */
    long sinceStartMs() {
        return (System.nanoTime() - startedNanos) / 1_000_000;
    }

    /** Waits for the run, checks it verified every byte it wrote; returns its JSON. */
    String finish() throws Exception {
        try {
            assertTrue("fio finished", process.waitFor(600, TimeUnit.SECONDS));
        } finally {
            process.destroyForcibly();
        }
        String json = Files.readString(work.resolve(name + ".json"), StandardCharsets.UTF_8);
        assertEquals("fio exit: " + json + Files.readString(work.resolve(name + ".err")), 0, process.exitValue());
        assertEquals("fio job error: " + json, 0, number(json, "error"));
        Matcher m = Pattern.compile("\"io_bytes\"\\s*:\\s*(\\d+)").matcher(json);
        assertTrue(json, m.find());
        long read = Long.parseLong(m.group(1));
        assertTrue(json, m.find());
        long written = Long.parseLong(m.group(1));
        assertEquals("fio wrote the whole range: " + json, bytes, written);
        assertEquals("fio verified everything it wrote: " + json, written, read);
        return json;
    }

    /** After a restart: fio reads back and verifies everything the finished run wrote. */
    void verifyOnly() throws Exception {
        Path out = work.resolve(name + "-verify.json");
        Path err = work.resolve(name + "-verify.err");
        Process fio = new ProcessBuilder(command(true)).directory(work.toFile()).redirectOutput(out.toFile())
                .redirectError(err.toFile()).redirectInput(new File("/dev/null")).start();
        try {
            assertTrue("fio verify finished", fio.waitFor(600, TimeUnit.SECONDS));
        } finally {
            fio.destroyForcibly();
        }
        String json = Files.readString(out, StandardCharsets.UTF_8);
        assertEquals("fio verify exit: " + json + Files.readString(err), 0, fio.exitValue());
        assertEquals("verify-only errors: " + json, 0, number(json, "error"));
        assertTrue("verify-only read everything: " + json, number(json, "io_bytes") >= bytes);
    }

    /** The largest {@code lat_ns.max} of the job (read = verify pass, write), in ms. */
    static double longestMs(String json) {
        Matcher m = Pattern.compile("\"lat_ns\"\\s*:\\s*\\{[^}]*?\"max\"\\s*:\\s*(\\d+)").matcher(json);
        long max = 0;
        while (m.find()) {
            max = Math.max(max, Long.parseLong(m.group(1)));
        }
        return max / 1e6;
    }

    /**
     * From fio's per-request latency log (completion time in ms since fio started, latency in ns,
     * direction): the longest write that completed while a command ran (give or take the time fio
     * took to start, 1 s either side), against the longest outside that window.
     */
    String window(String what, long fromMs, long toMs) throws IOException {
        long inside = 0;
        long outside = 0;
        long n = 0;
        for (String line : Files.readAllLines(work.resolve(name + "_lat.1.log"))) {
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
        return String.format(java.util.Locale.ROOT, "longest write around the %s %.1f ms (%d writes), elsewhere %.1f ms",
                what, inside / 1e6, n, outside / 1e6);
    }

    static long number(String json, String key) {
        Matcher m = Pattern.compile("\"" + Pattern.quote(key) + "\"\\s*:\\s*(\\d+)").matcher(json);
        assertTrue("no \"" + key + "\" in " + json, m.find());
        return Long.parseLong(m.group(1));
    }

    /** No clean stop: SIGKILL the distribution's JVM (found by its unique home directory). */
    static void kill(Distribution d, Tmux t) throws Exception {
        String home = "-Dstrata.home=" + d.home.toRealPath();
        ProcessHandle jvm = ProcessHandle.allProcesses()
                .filter(p -> p.info().commandLine().map(c -> c.contains(home + " ")).orElse(false))
                .findFirst().orElseThrow(() -> new AssertionError("no JVM of " + d.home));
        assertTrue(jvm.destroyForcibly());
        t.await("the killed JVM's shell", 60, sc -> sc.contains("STRATA-EXITED 137"));
    }

    /** After a restart: waits until the persisted export of disk1 is back. */
    static void awaitExport(Tmux t) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        String exports = ConsoleIT.run(t, "nbd:exports", 60);
        while (!exports.contains("disk1")) {
            assertTrue("the export of disk1 did not come back: " + exports, System.nanoTime() < deadline);
            exports = ConsoleIT.run(t, "nbd:exports", 60);
        }
    }
}
