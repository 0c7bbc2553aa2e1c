package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.Test;

/**
 * Black-box tests of {@code bin/strata} run as a process from a copy of the assembled
 * distribution, from another working directory.
 */
public class BinStrataIT {

    @Test
    public void commandsRunPrintTheirResultsAndExitZero() {
        Distribution d = Distribution.copy("bin-ok");
        Distribution.Result r = d.run("--no-default-stack", "-c",
                "dev:create m0 memory size=1M; dev:list; dev:info m0; echo done");
        assertEquals(r.toString(), 0, r.exit());
        assertTrue(r.toString(), r.out().contains("created m0"));
        assertTrue("dev:list's result is printed: " + r, r.out().lines().anyMatch(l -> l.startsWith("m0") && l.contains("memory")));
        assertTrue(r.toString(), r.out().contains("done"));
        assertTrue("nothing on stderr: " + r, r.errLines().isEmpty());
    }

    @Test
    public void linesPipedIntoTheShellRunAfterStartUpAndExitStopsCleanly() {
        // the shell starts only once the commands and the default stack are up, so the first
        // piped line already finds dev:list and wb0; 'exit' stops the framework with status 0
        // and without a 'gogo: InterruptedException' line
        int port = Distribution.freePort();
        Distribution d = Distribution.copy("bin-piped").defaultExportPort(port);
        Distribution.Result r = d.runWithInput("dev:list\nnbd:exports\nexit\n");
        assertEquals(r.toString(), 0, r.exit());
        assertTrue("dev:list ran: " + r, r.out().lines().anyMatch(l -> l.matches("wb0\\s+writeboost\\s+4\\.0 GiB\\s+active.*")));
        assertTrue("nbd:exports ran: " + r, r.out().lines().anyMatch(l -> l.matches("wb0\\s+wb0\\s+127\\.0\\.0\\.1:" + port + ".*serving.*")));
        assertFalse("no shell errors: " + r, r.out().contains("gogo:") || r.err().contains("gogo:"));
        assertFalse("no stack trace: " + r, r.out().contains("\tat ") || r.err().contains("\tat "));
    }

    @Test
    public void aFailingCommandStopsTheScriptWithOneLineOnStderr() {
        Distribution d = Distribution.copy("bin-bad");
        Distribution.Result r = d.run("--no-default-stack", "-c",
                "echo before; dev:create x nosuchtype size=1M; echo after");
        assertEquals(r.toString(), 1, r.exit());
        List<String> err = r.errLines();
        assertEquals("exactly one line on stderr: " + r, 1, err.size());
        assertTrue(r.toString(), err.get(0).startsWith("error: ") && err.get(0).contains("nosuchtype"));
        assertFalse("no stack trace: " + r, r.err().contains("\tat "));
        assertTrue(r.toString(), r.out().contains("before"));
        assertFalse("commands after the failure do not run: " + r, r.out().contains("after"));
    }

    @Test
    public void aMissingArgumentPrintsTheCommandsUsageWithoutClassNames() {
        Distribution d = Distribution.copy("bin-usage-line");
        Distribution.Result r = d.run("--no-default-stack", "-c", "dev:create x");
        assertEquals(r.toString(), 1, r.exit());
        assertTrue(r.toString(), r.err().contains("usage: dev:create"));
        assertFalse("Gogo's coercion message is not shown: " + r, r.err().contains("Cannot coerce"));
        assertFalse("no class names: " + r, r.err().contains("Exception") || r.err().contains("gogo:"));
    }

    @Test
    public void helpListsTheCommandsWithTheirDescriptions() {
        Distribution d = Distribution.copy("bin-help");
        Distribution.Result r = d.run("--no-default-stack", "-c", "help; help dev:status");
        assertEquals(r.toString(), 0, r.exit());
        assertTrue(r.toString(), r.out().lines().anyMatch(l -> l.matches("dev:create\\s+create a device.*")));
        assertTrue(r.toString(), r.out().lines().anyMatch(l -> l.matches("log:tail\\s+show the last lines of the log.*")));
        assertTrue(r.toString(), r.out().contains("usage: dev:status [--bytes] NAME"));
    }

    @Test
    public void aDaemonWhoseExportPortIsTakenOrDeviceBrokenSaysWhyAndExitsNonZero() throws Exception {
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 50, java.net.InetAddress.getByName("127.0.0.1"))) {
            int port = taken.getLocalPort();
            Distribution d = Distribution.copy("bin-port-taken").defaultExportPort(port);
            // and a device of a type that does not exist: its line says why, as the console's does
            Files.writeString(d.home.resolve("deploy/dev.strata.device-bad0.cfg"), "name=bad0\ntype=nosuch\narg.size=1M\n");
            d.env.put("JAVA_OPTS", "-Dstrata.settle.timeout=5");
            Distribution.Result r = d.run("--daemon");
            assertEquals(r.toString(), 3, r.exit());
            assertTrue(r.toString(), r.err().contains("strata: export wb0: 127.0.0.1:" + port + " is in use"));
            assertTrue(r.toString(), r.err().contains("strata: device bad0: waiting for target type 'nosuch'"));
            assertFalse("one line per problem: " + r, r.err().contains("bad0: configured but not up yet"));
            assertFalse("not ready: " + r, r.out().contains("ready"));
        }
    }

    @Test
    public void logTailShowsTheLog() {
        Distribution d = Distribution.copy("bin-log");
        Distribution.Result r = d.run("--no-default-stack", "-c", "dev:create lg0 memory size=1M; log:tail 5");
        assertEquals(r.toString(), 0, r.exit());
        assertTrue(r.toString(), r.out().lines().anyMatch(l -> l.contains("created lg0 memory size=1M") && l.contains("INFO")));
    }

    @Test
    public void anUnknownCommandFailsFast() {
        Distribution d = Distribution.copy("bin-unknown");
        Distribution.Result r = d.run("--no-default-stack", "-c", "nosuch:command a b");
        assertEquals(r.toString(), 1, r.exit());
        assertEquals(r.toString(), 1, r.errLines().size());
        assertTrue(r.toString(), r.err().contains("nosuch:command"));
    }

    @Test
    public void badLauncherArgumentsExitTwo() {
        Distribution d = Distribution.copy("bin-usage");
        Distribution.Result r = d.run("--bogus");
        assertEquals(r.toString(), 2, r.exit());
        assertTrue(r.toString(), r.err().startsWith("strata: unknown argument '--bogus'"));
    }

    @Test
    public void theDefaultStackComesUpWithSparseFilesUnderVar() throws Exception {
        Distribution d = Distribution.copy("bin-default");
        Distribution.Result r = d.run("-c", "dev:status wb0; dev:list");
        assertEquals(r.toString(), 0, r.exit());
        assertTrue(r.toString(), r.out().lines().anyMatch(l -> l.matches("state\\s+active")));
        assertTrue(r.toString(), r.out().lines().anyMatch(l -> l.matches("wb0\\s+writeboost\\s+4\\.0 GiB\\s+active\\s+backing0,cache0.*")));
        Path backing = d.var("backing0.img");
        Path cache = d.var("cache0.img");
        assertEquals(4L << 30, Files.size(backing));
        assertEquals(1L << 30, Files.size(cache));
        assertTrue("created sparse: " + allocatedKiB(backing) + " KiB allocated", allocatedKiB(backing) < 1024);
        assertTrue("created sparse: " + allocatedKiB(cache) + " KiB allocated", allocatedKiB(cache) < 1024);
        assertTrue(r.toString(), r.errLines().isEmpty());
    }

    @Test
    public void withoutTheDefaultStackTheStackBuiltComesBackAfterARestart() {
        Distribution d = Distribution.copy("bin-restart");
        Distribution.Result first = d.run("--no-default-stack", "-c",
                "dev:create d1 file path=var/d1.img size=16M create=true; dev:create l1 linear device=d1 offset=1M length=4M");
        assertEquals(first.toString(), 0, first.exit());
        assertFalse("--no-default-stack: no backing0", Files.exists(d.var("backing0.img")));
        assertFalse("--no-default-stack: no cache0", Files.exists(d.var("cache0.img")));
        Distribution.Result second = d.run("--no-default-stack", "-c", "dev:table; dev:list");
        assertEquals(second.toString(), 0, second.exit());
        assertTrue(second.toString(), second.out().lines().anyMatch(l -> l.startsWith("d1 file") && l.contains("path=var/d1.img")));
        assertTrue(second.toString(), second.out().lines().anyMatch(l -> l.startsWith("l1 linear") && l.contains("device=d1")));
        assertTrue(second.toString(), second.out().lines().anyMatch(l -> l.startsWith("l1") && l.contains("4.0 MiB") && l.contains("active")));
        assertFalse(second.toString(), second.out().contains("wb0"));
    }

    @Test
    public void aCopyOfADistributionThatRanWritesItsOwnDeployFilesNotTheOriginals() throws Exception {
        // the stored configurations name the deploy/ file each came from by its absolute path; a
        // copy (cp -r, with var/) wrote its changes into the original's file, which the original
        // then applied to its own device
        Distribution a = Distribution.copy("bin-copy-a");
        Path aCfg = a.home.resolve("deploy/dev.strata.device-m0.cfg");
        Files.writeString(aCfg, "name=m0\ntype=memory\narg.size=1M\n");
        Distribution.Result first = a.run("--no-default-stack", "-c", "dev:list");
        assertEquals(first.toString(), 0, first.exit());
        String original = Files.readString(aCfg); // with the identity the first start stamped in
        Distribution b = a.copyWithState("bin-copy-b");
        Distribution.Result changed = b.run("--no-default-stack", "-c", "dev:reload m0 memory size=2M; dev:list");
        assertEquals(changed.toString(), 0, changed.exit());
        assertTrue(changed.toString(), changed.err().contains("a copied or moved distribution"));
        assertTrue("the copy's own file records its change: " + changed,
                Files.readString(b.home.resolve("deploy/dev.strata.device-m0.cfg")).matches("(?s).*arg.size\\s*=\\s*2M.*"));
        assertEquals("the original's file is untouched", original, Files.readString(aCfg));
        Distribution.Result again = a.run("--no-default-stack", "-c", "dev:list");
        assertTrue(again.toString(), again.out().lines().anyMatch(l -> l.startsWith("m0") && l.contains("1.0 MiB")));
        assertTrue("a later start of the copy says nothing more: " + changed, b.run("--no-default-stack", "-c", "dev:list").errLines().isEmpty());
    }

    @Test
    public void theConsolesFeatureListShowsTheShippedRuntimeInstalled() {
        // the console never starts gogo.shell (strata.start.never.interactive): feature:list said
        // strata-runtime was "partly installed" on the shipped distribution
        Distribution d = Distribution.copy("bin-features");
        Distribution.Result r = d.runWithInput("feature:list\nexit\n", "--no-default-stack");
        assertEquals(r.toString(), 0, r.exit());
        assertTrue(r.toString(), r.out().lines().anyMatch(l -> l.matches("strata-runtime\\s+installed\\s+.*")));
        assertFalse(r.toString(), r.out().contains("partly installed"));
    }

    @Test
    public void aCfgDeletedWhileStrataIsStoppedDoesNotComeBack() throws Exception {
        Distribution d = Distribution.copy("bin-cfg-gone");
        Path gone = d.home.resolve("deploy/dev.strata.device-gone0.cfg");
        Files.writeString(gone, "name=gone0\ntype=memory\narg.size=1M\n");
        Files.writeString(d.home.resolve("deploy/dev.strata.device-kept0.cfg"), "name=kept0\ntype=memory\narg.size=2M\n");
        Distribution.Result first = d.run("--no-default-stack", "-c", "dev:list");
        assertEquals(first.toString(), 0, first.exit());
        assertTrue(first.toString(), first.out().lines().anyMatch(l -> l.startsWith("gone0") && l.contains("active")));
        Files.delete(gone); // while Strata is stopped
        Distribution.Result second = d.run("--no-default-stack", "-c", "dev:list; dev:table");
        assertEquals(second.toString(), 0, second.exit());
        assertFalse("the device of the deleted .cfg came back: " + second, second.out().contains("gone0"));
        assertTrue(second.toString(), second.out().lines().anyMatch(l -> l.startsWith("kept0") && l.contains("2.0 MiB")));
        String log = Files.readString(d.var("log/strata.log"));
        assertTrue("the log says why:\n" + log, log.contains("device gone0: its file dev.strata.device-gone0.cfg was deleted while Strata was stopped"));
        Distribution.Result third = d.run("--no-default-stack", "-c", "dev:list");
        assertFalse("nor at a later start: " + third, third.out().contains("gone0"));
    }

    @Test
    public void aDaemonIsReadyWithItsExportsListeningAndStopsCleanlyOnSigterm() throws Exception {
        Distribution d = Distribution.copy("bin-daemon");
        int port;
        try (java.net.ServerSocket probe = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        // a device and its NBD export as .cfg files, the way the default stack grows
        Files.writeString(d.home.resolve("deploy/dev.strata.device-f0.cfg"),
                "name=f0\ntype=file\narg.path=var/f0.img\narg.size=4M\narg.create=true\n");
        Files.writeString(d.home.resolve("deploy/dev.strata.nbd.export-f0.cfg"), "device=f0\nname=f0\nport=" + port + "\n");
        Path err = d.home.getParent().resolve("daemon-stderr.txt");
        try (Distribution.Daemon daemon = new Distribution.Daemon(d, err, "--daemon", "--no-default-stack", "-c", "dev:list")) {
            String out = daemon.awaitLine("strata: ready", Distribution.RUN_TIMEOUT_SECONDS);
            assertTrue(out, out.lines().anyMatch(l -> l.startsWith("f0") && l.contains("4.0 MiB")));
            assertTrue("pid file while running", Files.exists(d.var("strata.pid")));

            // "ready" means the exports answer: a real NBD client, at once
            Process nbdinfo = new ProcessBuilder("nbdinfo", "--size", "nbd://127.0.0.1:" + port + "/f0").redirectErrorStream(true).start();
            String size = new String(nbdinfo.getInputStream().readAllBytes()).trim();
            assertTrue("nbdinfo finished", nbdinfo.waitFor(60, TimeUnit.SECONDS));
            assertEquals("nbdinfo: " + size, 0, nbdinfo.exitValue());
            assertEquals(Long.toString(4L << 20), size);

            Distribution.Result second = d.run("--no-default-stack", "-c", "echo second");
            assertEquals("one Strata per directory: " + second, 3, second.exit());
            assertTrue(second.toString(), second.err().contains("another Strata is running"));

            daemon.process.destroy(); // SIGTERM
            assertTrue("stopped within the deadline", daemon.process.waitFor(Distribution.RUN_TIMEOUT_SECONDS, TimeUnit.SECONDS));
            assertEquals(Files.readString(err), 0, daemon.process.exitValue());
            assertEquals("stderr: " + Files.readString(err), "", Files.readString(err).strip());
        }
        assertFalse("pid file removed on a clean stop", Files.exists(d.var("strata.pid")));
        String log = Files.readString(d.var("log/strata.log"));
        assertTrue("the device manager stopped cleanly:\n" + log, log.contains("device manager stopped"));
    }

    private static long allocatedKiB(Path file) throws IOException, InterruptedException {
        Process du = new ProcessBuilder("du", "-k", file.toString()).redirectErrorStream(true).start();
        String out = new String(du.getInputStream().readAllBytes()).trim();
        assertTrue("du finished", du.waitFor(30, TimeUnit.SECONDS));
        return Long.parseLong(out.split("\\s+")[0]);
    }
}
