package dev.strata.itests.blackbox;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Real NBD clients from Debian, run as processes against {@code nbd://127.0.0.1:PORT/NAME}: each
 * check is what a storage engineer would type. A client missing from the PATH fails the test
 * with the Debian package that provides it ({@code .ci/run} installs them).
 */
final class Clients {

    static final long MiB = 1L << 20;
    /** Any one client run; they take seconds, the deadline is for a wedged server. */
    static final long CLIENT_SECONDS = 300;

    private static final Map<String, String> DEBIAN_PACKAGE = Map.of(
            "nbdinfo", "libnbd-bin", "nbdcopy", "libnbd-bin",
            "qemu-io", "qemu-utils", "qemu-img", "qemu-utils",
            "fio", "fio", "cmp", "diffutils", "systemd-socket-activate", "systemd");

    private Clients() {
    }

    static String uri(int port, String name) {
        return "nbd://127.0.0.1:" + port + "/" + name;
    }

    /** The executable's path; fails naming the Debian package when it is not installed. */
    static String require(String tool) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(File.pathSeparator)) {
            Path p = Path.of(dir.isEmpty() ? "." : dir, tool);
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        String pkg = DEBIAN_PACKAGE.getOrDefault(tool, "?");
        fail(tool + " is not installed (not on PATH): install the Debian package " + pkg + " (apt-get install -y " + pkg + ")");
        return null;
    }

    record Out(int exit, String text, List<String> command) {
        Out ok() {
            assertEquals("exit status of " + this, 0, exit);
            return this;
        }

        @Override
        public String toString() {
            return String.join(" ", command) + "\n--- exit " + exit + ", output:\n" + text;
        }
    }

    /** Runs TOOL ARGS in {@code dir} (output: stdout and stderr together), bounded. */
    static Out run(Path dir, String tool, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(require(tool));
        cmd.addAll(List.of(args));
        Path log = Files.createTempFile(dir, tool + "-", ".out");
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).redirectInput(new File("/dev/null")).start();
        try {
            if (!p.waitFor(CLIENT_SECONDS, TimeUnit.SECONDS)) {
                fail("not finished within " + CLIENT_SECONDS + " s: " + String.join(" ", cmd) + "\n" + Files.readString(log));
            }
            return new Out(p.exitValue(), Files.readString(log), cmd);
        } finally {
            Strata.kill(p);
        }
    }

    // ------------------------------------------------------------------ nbdinfo

    /** Export name to size, from {@code nbdinfo --json --list} (sizes from NBD_OPT_INFO). */
    static Map<String, Long> list(Path dir, int port) throws IOException, InterruptedException {
        Out o = run(dir, "nbdinfo", "--json", "--list", "nbd://127.0.0.1:" + port).ok();
        return exports(o);
    }

    private static Map<String, Long> exports(Out o) {
        Map<String, Long> m = new LinkedHashMap<>();
        // one object per export: "export-name" comes first, "export-size" later in the same object
        String[] parts = o.text().split("\"export-name\"\\s*:\\s*\"");
        for (int i = 1; i < parts.length; i++) {
            String name = parts[i].substring(0, parts[i].indexOf('"'));
            m.put(name, number(parts[i], "export-size", o));
        }
        return m;
    }

    static long number(String json, String key, Object context) {
        Matcher m = Pattern.compile("\"" + Pattern.quote(key) + "\"\\s*:\\s*(\\d+)").matcher(json);
        assertTrue("no \"" + key + "\" in " + context, m.find());
        return Long.parseLong(m.group(1));
    }

    static boolean flag(String json, String key, Object context) {
        Matcher m = Pattern.compile("\"" + Pattern.quote(key) + "\"\\s*:\\s*(true|false)").matcher(json);
        assertTrue("no \"" + key + "\" in " + context, m.find());
        return Boolean.parseBoolean(m.group(1));
    }

    /** Waits (bounded) until {@code nbdinfo --list} shows every export named. */
    static void awaitExports(Path dir, int port, String... names) {
        Strata.awaitPort(port);
        Strata.poll("nbdinfo --list nbd://127.0.0.1:" + port + " shows " + List.of(names), Strata.START_SECONDS, () -> {
            try {
                Out o = run(dir, "nbdinfo", "--json", "--list", "nbd://127.0.0.1:" + port);
                return o.exit() == 0 && exports(o).keySet().containsAll(List.of(names));
            } catch (IOException e) {
                return false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }, () -> "");
    }

    /**
     * {@code nbdinfo --json URI} (NBD_OPT_GO) and {@code nbdinfo --json --list} (NBD_OPT_INFO)
     * report the same size; the list holds exactly the expected exports; the export advertises
     * what a read-write block device needs.
     */
    static void nbdinfo(Path dir, int port, String name, long size, Map<String, Long> allExports) throws Exception {
        Out go = run(dir, "nbdinfo", "--json", uri(port, name)).ok();
        assertEquals("export size after NBD_OPT_GO: " + go, size, number(go.text(), "export-size", go));
        assertEquals(go.toString(), 512, number(go.text(), "block_size_minimum", go));
        assertEquals(go.toString(), 4096, number(go.text(), "block_size_preferred", go));
        assertEquals(go.toString(), 32 * MiB, number(go.text(), "block_size_maximum", go));
        for (String f : List.of("can_flush", "can_fua", "can_multi_conn", "can_trim", "can_zero")) {
            assertTrue(f + ": " + go, flag(go.text(), f, go));
        }
        assertFalse(go.toString(), flag(go.text(), "is_read_only", go));
        assertTrue("base:allocation offered: " + go, go.text().contains("\"base:allocation\""));

        Map<String, Long> listed = list(dir, port);
        assertEquals("nbdinfo --list: export names and NBD_OPT_INFO sizes", allExports, listed);
        assertEquals("INFO size == GO size", size, (long) listed.get(name));

        Out plain = run(dir, "nbdinfo", "--size", uri(port, name)).ok();
        assertEquals(plain.toString(), Long.toString(size), plain.text().trim());
    }

    // ------------------------------------------------------------------ qemu-io

    /**
     * qemu-io against a fresh (all-zero) region starting at {@code base} and the device's last
     * block: pattern writes read back with -P, a FUA write (-f), flush, write -z (with and without
     * unmap), discard, the last block/sector/byte, and 512-byte and odd-sized writes at odd
     * offsets whose neighbours must stay intact. Then everything again from a new connection, and
     * a control: a wrong pattern must be reported (so a passing verify means something).
     */
    static void qemuIo(Path dir, String uri, long size, long base) throws Exception {
        long b = base;
        long last = size - 4096;
        List<String> script = List.of(
                "write -P 0xa5 " + b + " 1M",
                "read -P 0xa5 " + b + " 1M",
                // FUA
                "write -f -P 0x5c " + (b + MiB) + " 64k",
                "read -P 0x5c " + (b + MiB) + " 64k",
                "flush",
                // write zeroes inside written data, with NO_HOLE (default) and with unmap allowed
                "write -P 0x77 " + (b + 2 * MiB) + " 1M",
                "write -z " + (b + 2 * MiB + 4096) + " 256k",
                "write -z -u " + (b + 2 * MiB + 4096 + 256 * 1024) + " 256k",
                "read -P 0x77 " + (b + 2 * MiB) + " 4096",
                "read -P 0 " + (b + 2 * MiB + 4096) + " 512k",
                "read -P 0x77 " + (b + 2 * MiB + 4096 + 512 * 1024) + " " + (MiB - 4096 - 512 * 1024),
                // discard: the contents of the range are unspecified afterwards; its neighbours are not
                "write -P 0x3c " + (b + 4 * MiB) + " 256k",
                "discard " + (b + 4 * MiB) + " 128k",
                "read -P 0x3c " + (b + 4 * MiB + 128 * 1024) + " 128k",
                "write -P 0x3d " + (b + 4 * MiB) + " 128k",
                "read -P 0x3d " + (b + 4 * MiB) + " 128k",
                // unaligned: one sector at an odd offset, zero neighbours stay zero
                "write -P 0x11 " + (b + 6 * MiB + 12345) + " 512",
                "read -P 0x11 " + (b + 6 * MiB + 12345) + " 512",
                "read -P 0 " + (b + 6 * MiB) + " 12345",
                "read -P 0 " + (b + 6 * MiB + 12857) + " " + (16384 - 12857),
                // unaligned inside written data: the rest of the block survives the read-modify-write
                "write -P 0x33 " + (b + 7 * MiB) + " 8192",
                "write -P 0x44 " + (b + 7 * MiB + 1023) + " 511",
                "read -P 0x33 " + (b + 7 * MiB) + " 1023",
                "read -P 0x44 " + (b + 7 * MiB + 1023) + " 511",
                "read -P 0x33 " + (b + 7 * MiB + 1534) + " " + (8192 - 1534),
                "write -f -P 0x55 " + (b + 7 * MiB + 8192 + 513) + " 3001",
                "read -P 0x55 " + (b + 7 * MiB + 8192 + 513) + " 3001",
                "read -P 0 " + (b + 7 * MiB + 8192) + " 513",
                // the last block, its last sector and its last byte
                "write -P 0xee " + last + " 4096",
                "read -P 0xee " + last + " 4096",
                "write -P 0xef " + (size - 512) + " 512",
                "read -P 0xee " + last + " 3584",
                "read -P 0xef " + (size - 512) + " 512",
                "write -P 0xf1 " + (size - 1) + " 1",
                "read -P 0xef " + (size - 512) + " 511",
                "read -P 0xf1 " + (size - 1) + " 1",
                "flush");
        qemuIoScript(dir, uri, script);

        // a new connection sees the same data
        qemuIoScript(dir, uri, List.of(
                "read -P 0xa5 " + b + " 1M",
                "read -P 0x5c " + (b + MiB) + " 64k",
                "read -P 0 " + (b + 2 * MiB + 4096) + " 512k",
                "read -P 0x3d " + (b + 4 * MiB) + " 128k",
                "read -P 0x11 " + (b + 6 * MiB + 12345) + " 512",
                "read -P 0x44 " + (b + 7 * MiB + 1023) + " 511",
                "read -P 0x55 " + (b + 7 * MiB + 8192 + 513) + " 3001",
                "read -P 0xee " + last + " 3584",
                "read -P 0xf1 " + (size - 1) + " 1"));

        // control: qemu-io does report a mismatch
        Out wrong = qemuIoRaw(dir, uri, List.of("read -P 0xa5 " + (b + 2 * MiB + 4096) + " 4096"));
        assertTrue("qemu-io must flag a wrong pattern: " + wrong, wrong.exit() != 0 && wrong.text().contains("Pattern verification failed"));
    }

    static Out qemuIoScript(Path dir, String uri, List<String> commands) throws Exception {
        Out o = qemuIoRaw(dir, uri, commands);
        assertEquals("qemu-io: " + o, 0, o.exit());
        assertFalse("qemu-io reported a failure: " + o, o.text().contains("failed"));
        return o;
    }

    static Out qemuIoRaw(Path dir, String uri, List<String> commands) throws Exception {
        List<String> args = new ArrayList<>(List.of("-f", "raw", uri));
        for (String c : commands) {
            args.add("-c");
            args.add(c);
        }
        return run(dir, "qemu-io", args.toArray(String[]::new));
    }

    // ------------------------------------------------------------------ nbdcopy

    /**
     * 64 MiB of random data into {@code in} and back out of {@code out} (a 64 MiB export showing
     * the same bytes), 4 connections each way; {@code cmp} says they are equal. Returns the data file.
     */
    static Path nbdcopy(Path dir, String in, String out, long seed) throws Exception {
        Path data = dir.resolve("nbdcopy-in.img");
        randomFile(data, 64 * MiB, seed);
        Path back = dir.resolve("nbdcopy-out.img");
        Files.deleteIfExists(back);
        run(dir, "nbdcopy", "-C", "4", "--flush", data.toString(), in).ok();
        run(dir, "nbdcopy", "-C", "4", out, back.toString()).ok();
        assertEquals("what came out is as long as what went in", 64 * MiB, Files.size(back));
        run(dir, "cmp", data.toString(), back.toString()).ok();
        return data;
    }

    static void randomFile(Path file, long size, long seed) throws IOException {
        Random r = new Random(seed);
        byte[] buf = new byte[(int) MiB];
        try (OutputStream os = Files.newOutputStream(file)) {
            for (long done = 0; done < size; done += buf.length) {
                r.nextBytes(buf);
                os.write(buf, 0, (int) Math.min(buf.length, size - done));
            }
        }
    }

    // ------------------------------------------------------------------ fio

    /**
     * fio's nbd engine with crc32c verification: 4 KiB random writes at queue depth 32 over
     * {@code [offset, offset+size)}, then random writes of 4 KiB–1 MiB over the next
     * {@code 2*size} bytes; every byte written is read back and checked.
     */
    static void fio(Path dir, String uri, long offset, long size) throws Exception {
        fioJob(dir, uri, "randwrite-4k-qd32", offset, size, "--bs=4k", "--iodepth=32");
        fioJob(dir, uri, "randwrite-4k-1m", offset + size, 2 * size, "--bsrange=4k-1m", "--iodepth=8");
    }

    private static void fioJob(Path dir, String uri, String name, long offset, long size, String... extra) throws Exception {
        List<String> args = new ArrayList<>(List.of("--name=" + name, "--ioengine=nbd", "--uri=" + uri, "--rw=randwrite",
                "--offset=" + offset, "--size=" + size, "--verify=crc32c", "--do_verify=1", "--verify_fatal=1",
                "--verify_state_save=0", "--output-format=json"));
        args.addAll(List.of(extra));
        Out o = run(dir, "fio", args.toArray(String[]::new)).ok();
        assertEquals("fio job error: " + o, 0, number(o.text(), "error", o));
        // sections in order: read (the verify pass), write, trim
        Matcher m = Pattern.compile("\"io_bytes\"\\s*:\\s*(\\d+)").matcher(o.text());
        assertTrue(o.toString(), m.find());
        long read = Long.parseLong(m.group(1));
        assertTrue(o.toString(), m.find());
        long written = Long.parseLong(m.group(1));
        assertEquals("fio wrote the whole range: " + o, size, written);
        assertEquals("fio verified everything it wrote: " + o, written, read);
    }
}
