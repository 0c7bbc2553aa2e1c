package dev.strata.itests.blackbox;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.Test;

/**
 * Socket activation, black-box: libnbd's {@code nbd_connect_systemd_socket_activation} (what
 * {@code nbdinfo -- [ CMD ]} and {@code nbdcopy -- [ CMD ]} use: a Unix socket on fd 3, and
 * SIGTERM when the client closes) and systemd's own {@code systemd-socket-activate} (a TCP
 * socket) start {@code bin/strata --daemon} on an inherited socket; data written through one
 * activated process is read back through the next; a {@code LISTEN_PID} for another process is
 * ignored; bad activation input gets one line and starts nothing.
 */
public class SocketActivationIT {
    private static final long MiB = 1L << 20;

    /** A finished process: exit status, stdout and stderr apart (stdout must stay the client's). */
    record Run(int exit, String out, String err, List<String> command) {
        List<String> errLines() {
            return err.lines().filter(l -> !l.isBlank()).toList();
        }

        @Override
        public String toString() {
            return String.join(" ", command) + "\n--- exit " + exit + "\n--- stdout:\n" + out + "--- stderr:\n" + err;
        }
    }

    private static Run run(Strata s, Map<String, String> env, String... command) throws IOException, InterruptedException {
        Path out = Files.createTempFile(s.work, "run-", ".out");
        Path err = Files.createTempFile(s.work, "run-", ".err");
        ProcessBuilder pb = new ProcessBuilder(command).directory(s.work.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile()).redirectInput(new File("/dev/null"));
        pb.environment().remove("STRATA_NO_DEFAULT_STACK");
        pb.environment().remove("LISTEN_PID");
        pb.environment().remove("LISTEN_FDS");
        pb.environment().putAll(env);
        Process p = pb.start();
        try {
            if (!p.waitFor(Strata.START_SECONDS + Strata.STOP_SECONDS, TimeUnit.SECONDS)) {
                fail("did not finish in time: " + String.join(" ", command) + "\n" + Strata.read(out) + Strata.read(err)
                        + s.logTail());
            }
            return new Run(p.exitValue(), Strata.read(out), Strata.read(err), List.of(command));
        } finally {
            Strata.kill(p);
        }
    }

    private static String[] cmd(String... parts) {
        return parts;
    }

    private static String strata(Strata s) {
        return s.home.resolve("bin/strata").toString();
    }

    /** Every activated run must have stopped cleanly on libnbd's SIGTERM: the device manager closed the devices. */
    private static void assertStoppedCleanly(Strata s, int runs) throws IOException {
        String log = Files.readString(s.var("log/strata.log"));
        long stops = log.lines().filter(l -> l.contains("device manager stopped")).count();
        assertEquals("clean stops in the log" + s.logTail(), runs, stops);
        assertFalse("no pid file left", Files.exists(s.var("strata.pid")));
    }

    @Test
    public void nbdinfoStartsTheDefaultStackOnItsSocketAndStopsItWithSigterm() throws Exception {
        Strata s = Strata.copy("activation-nbdinfo");
        Clients.require("nbdinfo");
        Run r = run(s, Map.of(), cmd("nbdinfo", "--json", "--", "[", strata(s), "--daemon", "]"));
        assertEquals(r.toString(), 0, r.exit());
        // stdout is nbdinfo's JSON alone: Strata's own lines go to stderr under activation
        assertTrue("clean JSON on stdout: " + r, r.out().strip().startsWith("{") && r.out().strip().endsWith("}"));
        assertTrue(r.toString(), r.out().contains("\"export-name\": \"wb0\""));
        assertEquals(r.toString(), 4096 * MiB, Clients.number(r.out(), "export-size", r));
        // no "strata: ready" asserted on stderr: libnbd's connection waits in the inherited socket's
        // backlog, so nbdinfo may be answered and SIGTERM Strata before --daemon prints its ready line
        assertFalse("nothing of Strata's on stdout: " + r, r.out().contains("strata:"));
        String log = Files.readString(s.var("log/strata.log"));
        assertTrue("served on the inherited Unix socket libnbd made:" + s.logTail(),
                log.contains("exported device 'wb0' as 'wb0' on inherited:unix:"));
        assertStoppedCleanly(s, 1);
    }

    @Test
    public void nbdcopyWritesThroughOneActivatedStrataAndReadsBackThroughTheNext() throws Exception {
        Strata s = Strata.copy("activation-nbdcopy");
        Clients.require("nbdcopy");
        Path data = s.work.resolve("in.img");
        Clients.randomFile(data, 16 * MiB, 17);
        Run in = run(s, Map.of(), cmd("nbdcopy", "--", data.toString(), "[", strata(s), "--daemon", "--no-default-stack",
                "-c", "dev:create f0 file path=var/f0.img size=16M create=true; nbd:export f0 --inherited", "]"));
        assertEquals(in.toString(), 0, in.exit());
        assertTrue(in.toString(), in.err().contains("exported f0 as 'f0' on the socket inherited by socket activation (unix:"));

        // a second process: device and export come back from var/config, on the new socket
        Path back = s.work.resolve("out.img");
        Run out = run(s, Map.of(), cmd("nbdcopy", "--", "[", strata(s), "--daemon", "--no-default-stack", "]", back.toString()));
        assertEquals(out.toString(), 0, out.exit());
        assertEquals(16 * MiB, Files.size(back));
        Clients.run(s.work, "cmp", data.toString(), back.toString()).ok();
        assertStoppedCleanly(s, 2);
    }

    @Test
    public void systemdsActivatorPassesATcpSocket() throws Exception {
        Strata s = Strata.copy("activation-tcp");
        String activate = Clients.require("systemd-socket-activate");
        int port = Strata.freePort();
        int fallback = Strata.freePort();
        Path out = s.work.resolve("activate.out");
        Path err = s.work.resolve("activate.err");
        ProcessBuilder pb = new ProcessBuilder(activate, "-l", "127.0.0.1:" + port, strata(s), "--daemon", "--no-default-stack",
                "-c", "dev:create --transient m0 memory size=8M; nbd:export m0 --inherited --port " + fallback)
                .directory(s.work.toFile()).redirectOutput(out.toFile()).redirectError(err.toFile())
                .redirectInput(new File("/dev/null"));
        pb.environment().remove("STRATA_NO_DEFAULT_STACK");
        Process p = pb.start();
        try {
            Strata.poll("systemd-socket-activate listens on " + port, Strata.START_SECONDS,
                    () -> Strata.read(err).contains("Listening on"), () -> Strata.read(err));
            // the first connection makes the activator exec bin/strata; the client waits for the greeting
            String uri = Clients.uri(port, "m0");
            Clients.run(s.work, "qemu-io", "-f", "raw", uri, "-c", "write -P 0x5a 1M 1M", "-c", "read -P 0x5a 1M 1M").ok();
            Clients.Out info = Clients.run(s.work, "nbdinfo", "--size", uri).ok();
            assertEquals(info.toString(), Long.toString(8 * MiB), info.text().strip());
            assertEquals("the activator exec'd bin/strata, which exec'd the JVM: one process", 0, p.descendants().count());
            String environ = Files.readString(Path.of("/proc/" + p.pid() + "/environ"), StandardCharsets.ISO_8859_1);
            assertFalse("LISTEN_* are unset for what Strata starts: " + environ, environ.contains("LISTEN_"));
            Clients.Out busy = Clients.run(s.work, "nbdinfo", "--size", Clients.uri(fallback, "m0"));
            assertNotEquals("the fallback port is not used when activated: " + busy, 0, busy.exit());

            p.destroy(); // SIGTERM, as systemctl stop
            assertTrue("stopped within the deadline", p.waitFor(Strata.STOP_SECONDS, TimeUnit.SECONDS));
            assertEquals(Strata.read(err), 0, p.exitValue());
        } finally {
            Strata.kill(p);
        }
        assertTrue(Strata.read(err), Strata.read(err).contains("strata: ready"));
        assertStoppedCleanly(s, 1);
    }

    @Test
    public void aListenPidOfAnotherProcessIsIgnored() throws Exception {
        Strata s = Strata.copy("activation-otherpid");
        int port = Strata.freePort();
        Run r = run(s, Map.of("LISTEN_PID", "1", "LISTEN_FDS", "1"), cmd(strata(s), "--no-default-stack", "-c",
                "dev:create --transient m0 memory size=1M; nbd:export m0 --inherited --port " + port + "; nbd:exports"));
        assertEquals(r.toString(), 0, r.exit());
        assertTrue("an ordinary start: the export on its own port\n" + r,
                r.out().lines().anyMatch(l -> l.startsWith("m0") && l.contains("127.0.0.1:" + port) && l.contains("serving")));
        assertFalse(r.toString(), r.err().contains("socket activation"));
    }

    @Test
    public void badActivationInputGetsOneLineAndStartsNothing() throws Exception {
        Strata s = Strata.copy("activation-bad");
        // LISTEN_PID=$$: the shell's pid, which exec hands on to bin/strata
        String self = "export LISTEN_PID=$$; exec \"$0\" \"$@\"";
        Map<String, String[]> cases = Map.of(
                "LISTEN_FDS='abc' is not a number of sockets", cmd("bash", "-c", self, strata(s), "--daemon"),
                "LISTEN_FDS=2, but Strata serves one inherited socket", cmd("bash", "-c", self, strata(s), "--daemon"),
                "LISTEN_FDS=1 but file descriptor 3 is not a socket",
                cmd("bash", "-c", "export LISTEN_PID=$$; exec 3</dev/null; exec \"$0\" \"$@\"", strata(s), "--daemon"));
        Map<String, String> fds = Map.of("LISTEN_FDS='abc' is not a number of sockets", "abc",
                "LISTEN_FDS=2, but Strata serves one inherited socket", "2",
                "LISTEN_FDS=1 but file descriptor 3 is not a socket", "1");
        for (Map.Entry<String, String[]> c : cases.entrySet()) {
            Run r = run(s, Map.of("LISTEN_FDS", fds.get(c.getKey())), c.getValue());
            assertEquals(r.toString(), 2, r.exit());
            assertEquals("one line: " + r, 1, r.errLines().size());
            assertTrue(r.toString(), r.errLines().get(0).startsWith("strata: socket activation: " + c.getKey()));
            assertEquals(r.toString(), "", r.out());
        }
        assertFalse("nothing started: no log", Files.exists(s.var("log/strata.log")));

        Clients.require("nbdinfo");
        // activated without --daemon: the socket is stdin, no console or script can have it
        Run noDaemon = run(s, Map.of(), cmd("nbdinfo", "--size", "--", "[", strata(s), "-c", "dev:list", "]"));
        assertNotEquals(noDaemon.toString(), 0, noDaemon.exit());
        assertTrue(noDaemon.toString(), noDaemon.err().contains(
                "strata: socket activation: start Strata with --daemon (the inherited socket is its standard input)"));

        // activated, but no export takes the socket: say so and stop, rather than leave the client waiting
        Run noExport = run(s, Map.of(), cmd("nbdinfo", "--size", "--", "[", strata(s), "--daemon", "--no-default-stack", "]"));
        assertNotEquals(noExport.toString(), 0, noExport.exit());
        List<String> strataLines = new ArrayList<>(noExport.errLines().stream().filter(l -> l.startsWith("strata:")).toList());
        assertEquals("one line: " + noExport, List.of("strata: socket activation: no export serves on the inherited socket;"
                + " give one inherited=true in its deploy/dev.strata.nbd.export-NAME.cfg, or run nbd:export DEVICE --inherited"
                + " (docs/nbd.md, Socket activation)"), strataLines);
    }
}
