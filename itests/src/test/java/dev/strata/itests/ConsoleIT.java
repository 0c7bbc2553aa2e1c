package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;

import org.junit.Test;

/**
 * The interactive console of {@code bin/strata}, on a real pseudo-terminal (tmux): completion,
 * history, Ctrl-C, one-line errors, the start-up problems, and bundles removed from deploy/.
 */
public class ConsoleIT {

    private static final String PROMPT = "strata> ";

    static Tmux console(Distribution d, String name, String args) {
        return Tmux.start(name, d.home.getParent(), d.home.resolve("bin/strata") + " " + args + "; echo STRATA-EXITED $?");
    }

    /**
     * Runs a line and returns what it printed: the text between the typed line and the next
     * prompt (a line that is exactly the prompt, once the command has finished).
     */
    static String run(Tmux t, String command, long seconds) {
        String typed = PROMPT + command;
        int before = Tmux.occurrences(t.screen(), typed);
        t.line(command);
        String screen = t.await(command + " finished", seconds, s -> {
            int at = nth(s, typed, before + 1);
            return at >= 0 && s.substring(at + typed.length()).lines().skip(1).anyMatch(l -> l.strip().equals(PROMPT.strip()));
        });
        int at = nth(screen, typed, before + 1) + typed.length();
        StringBuilder out = new StringBuilder();
        for (String l : screen.substring(at).lines().skip(1).toList()) {
            if (l.strip().equals(PROMPT.strip())) {
                break;
            }
            out.append(l.stripTrailing()).append('\n');
        }
        return out.toString().strip();
    }

    /** The index of the n-th (1-based) occurrence of text, or -1. */
    private static int nth(String s, String text, int n) {
        int i = -1;
        for (int k = 0; k < n; k++) {
            i = s.indexOf(text, i + 1);
            if (i < 0) {
                return -1;
            }
        }
        return i;
    }

    private static void created(String output) {
        assertTrue(output, output.startsWith("created "));
    }

    static void exit(Tmux t) {
        t.line("exit");
        t.await("Strata stopped with status 0", 120, s -> s.contains("STRATA-EXITED 0"));
    }

    @Test
    public void tabCompletesCommandsAndDevicesUpRecallsHistoryErrorsAreOneLine() throws Exception {
        Distribution d = Distribution.copy("console-basic").defaultExportPort(Distribution.freePort());
        try (Tmux t = console(d, "basic", "")) {
            t.await("the prompt", 120, s -> s.contains(PROMPT));
            // a command: dev:li<Tab> → dev:list
            t.type("dev:li");
            t.keys("Tab");
            t.await("dev:li completed", 20, s -> s.contains(PROMPT + "dev:list "));
            t.keys("Enter");
            t.await("dev:list ran", 30, s -> s.lines().anyMatch(l -> l.matches("wb0\\s+writeboost.*active.*")));
            // a device name, from the device manager: dev:status cach<Tab> → cache0
            t.type("dev:status cach");
            t.keys("Tab");
            t.await("cach completed", 20, s -> s.contains(PROMPT + "dev:status cache0 "));
            t.keys("C-u");
            // a target type: dev:create m9 memo<Tab> → memory, then its key: s<Tab> → size=
            t.type("dev:create m9 memo");
            t.keys("Tab");
            t.await("memo completed", 20, s -> s.contains(PROMPT + "dev:create m9 memory "));
            t.type("s");
            t.keys("Tab");
            t.await("s completed to size=", 20, s -> s.contains(PROMPT + "dev:create m9 memory size="));
            t.keys("C-u");
            // a tunable key, from the usage line of the device's type: dev:message wb0 sequential_c<Tab>
            t.type("dev:message wb0 sequential_c");
            t.keys("Tab");
            t.await("tunable key completed", 20, s -> s.contains(PROMPT + "dev:message wb0 sequential_cutoff "));
            t.keys("C-u");
            // an option: nbd:export --po<Tab> → --port
            t.type("nbd:export --po");
            t.keys("Tab");
            t.await("option completed", 20, s -> s.contains(PROMPT + "nbd:export --port "));
            t.keys("C-u");
            // mirror: commands complete mirrors only, then the mirror's legs only (mb2 is no leg)
            for (String c : List.of("dev:create ma1 memory size=1M", "dev:create mb1 memory size=1M",
                    "dev:create mb2 memory size=1M", "dev:create mz mirror legs=ma1,mb1 region_size=64k log=core")) {
                created(run(t, c, 60));
            }
            t.type("mirror:status ");
            t.keys("Tab");
            t.await("the only mirror completed", 20, s -> s.contains(PROMPT + "mirror:status mz "));
            t.keys("C-u");
            t.type("mirror:fail mz mb");
            t.keys("Tab");
            t.await("the leg completed", 20, s -> s.contains(PROMPT + "mirror:fail mz mb1 "));
            t.keys("C-u");

            // a missing argument prints the command's usage, not Gogo's "Cannot coerce"
            String usage = run(t, "dev:create x", 30);
            assertTrue(usage, usage.contains("usage: dev:create"));
            assertFalse(usage, usage.contains("Cannot coerce"));
            String unknown = run(t, "dev:lst", 30);
            assertEquals("unknown command 'dev:lst': 'help' lists the commands", unknown);
            String bad = run(t, "dev:create y nosuchtype size=1M", 30);
            assertEquals("one line: " + bad, 1, bad.lines().count());
            assertTrue(bad, bad.startsWith("error: ") && bad.contains("nosuchtype"));
            // a word Gogo cannot convert: one line naming the command, the option or parameter and what is expected
            assertEquals("error: log:tail: NUMBER \"abc\" is not a number; give the number of lines as a whole number, e.g. 20",
                    run(t, "log:tail abc", 30));
            assertEquals("error: nbd:export: --port \"abc\" is not a number; give the TCP port as a whole number, e.g. 10809",
                    run(t, "nbd:export wb0 --port abc", 30));
            assertEquals("error: nbd:export: missing DEVICE (the device to export); 'help nbd:export' shows the usage",
                    run(t, "nbd:export", 30));
            String help = run(t, "help", 30);
            assertTrue("help has descriptions: " + help, help.lines().anyMatch(l -> l.matches("dev:create\\s+create a device")));
            // Strata's commands first; the built-ins after them, under one heading, one line per scope
            int builtIns = help.indexOf("Built-in shell and framework commands");
            assertTrue(help, builtIns > help.indexOf("strata:health") && builtIns < help.indexOf("  gogo:"));
            assertFalse("no bare built-in lines among Strata's: " + help, help.substring(0, builtIns).contains("gogo:cat"));

            // Up recalls the last line
            t.line("echo first-line");
            t.awaitCount("first-line", 2, 30);
            t.keys("Up");
            t.awaitCount(PROMPT + "echo first-line", 2, 20);
            t.keys("C-u");
            String screen = t.screen();
            // Gogo's own error lines start with "gogo: "; help indents its "  gogo:" names
            assertFalse("no class names: " + screen, screen.contains("Exception") || screen.lines().anyMatch(l -> l.startsWith("gogo: ")));
            // Ctrl-L clears the screen (the prompt is the top line); nothing is run for it
            t.keys("C-l");
            t.await("cleared", 20, s -> t.visible().startsWith(PROMPT.strip()));
            assertFalse(t.screen(), t.visible().contains("Command not found"));
            exit(t);
        }
        // the history is kept in var/ across restarts
        assertTrue(Files.readString(d.var("history")).contains("echo first-line"));
        try (Tmux t = console(d, "basic2", "")) {
            t.await("the prompt", 120, s -> s.contains(PROMPT));
            t.keys("Up", "Up"); // "exit", then the line before it
            t.await("history of the last run", 20, s -> s.contains(PROMPT + "echo first-line"));
            t.keys("C-u");
            exit(t);
        }
    }

    @Test
    public void ctrlCInterruptsTheRunningCommandAndNeverTheFramework() throws Exception {
        Distribution d = Distribution.copy("console-ctrlc");
        int port = Distribution.freePort();
        try (Tmux t = console(d, "ctrlc", "--no-default-stack")) {
            t.await("the prompt", 120, s -> s.contains(PROMPT));
            // a writeboost cache over a slow backing device (200 ms per write)
            created(run(t, "dev:create slowm memory size=64M", 60));
            created(run(t, "dev:create slow delay device=slowm write_ms=200", 60));
            created(run(t, "dev:create fastm memory size=64M", 60));
            created(run(t, "dev:create wbx writeboost backing=slow cache=fastm", 60));
            String exported = run(t, "nbd:export --port " + port + " wbx", 60);
            assertTrue(exported, exported.contains("exported"));
            // thousands of dirty blocks: random 4 KiB writes through a real NBD client
            dirty(port, 3000);

            t.line("cache:writeback wbx");
            t.await("writeback running", 60, s -> s.contains("writeback wbx:"));
            t.keys("C-c");
            t.await("the command was interrupted", 60, s -> s.substring(s.lastIndexOf("cache:writeback wbx")).contains("interrupted"));
            // the framework is alive and the next lines run
            String alive = run(t, "echo still-alive", 60);
            assertEquals("still-alive", alive);
            String list = run(t, "dev:list", 60);
            assertTrue(list, list.lines().anyMatch(l -> l.startsWith("wbx")));
            String screen = t.screen();
            assertFalse("no class names: " + screen, screen.contains("InterruptedException") || screen.contains("gogo:"));
            assertFalse("the framework kept running", t.exited());
            exit(t);
        }
    }

    @Test
    public void theConsoleSaysAtStartWhatIsNotUpAndStartsAnyway() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"))) {
            int port = taken.getLocalPort();
            Distribution d = Distribution.copy("console-problems").defaultExportPort(port);
            // and a device whose type does not exist: the same one-line problems as --daemon, reason included
            Files.writeString(d.home.resolve("deploy/dev.strata.device-bad0.cfg"), "name=bad0\ntype=nosuch\narg.size=1M\n");
            try (Tmux t = console(d, "problems", "")) {
                t.await("the problems and then the prompt", 120,
                        s -> s.contains("strata: export wb0: 127.0.0.1:" + port + " is in use")
                                && s.contains("strata: device bad0: waiting for target type 'nosuch'") && s.contains(PROMPT));
                assertEquals("still-alive", run(t, "echo still-alive", 60));
                exit(t);
            }
        }
    }

    @Test
    public void aJarRemovedFromDeployLeavesTheShippedBundleOfTheSameName() throws Exception {
        Distribution d = Distribution.copy("console-deploy");
        Path shipped;
        try (var s = Files.list(d.home.resolve("bundle"))) {
            shipped = s.filter(p -> p.getFileName().toString().startsWith("dev.strata.driver.memory-")).findFirst().orElseThrow();
        }
        try (Tmux t = console(d, "deploy", "--no-default-stack")) {
            t.await("the prompt", 120, s -> s.contains(PROMPT));
            // the same symbolic name and version, told apart by its Bundle-Name: FileInstall takes
            // it as an update of the shipped bundle
            Path tmp = d.home.resolve("var/mem-deployed.jar");
            renamed(shipped, tmp, "Strata memory driver (deployed)");
            Files.move(tmp, d.home.resolve("deploy/mem-deployed.jar"));
            awaitOutput(t, "lb memory", "Strata memory driver (deployed)", 60);

            Files.delete(d.home.resolve("deploy/mem-deployed.jar"));
            String lb = awaitOutput(t, "lb memory", "Strata memory driver (0.", 60);
            assertFalse(lb, lb.contains("(deployed)"));
            created(run(t, "dev:create m1 memory size=1M", 60));
            exit(t);
        }
    }

    /** Repeats a command until its output contains {@code text}; returns that output. */
    private String awaitOutput(Tmux t, String command, String text, long seconds) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        String out;
        do {
            out = run(t, command, 30);
            if (out.contains(text)) {
                return out;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(500));
        } while (System.nanoTime() - deadline < 0);
        throw new AssertionError("'" + command + "' did not show '" + text + "' within " + seconds + " s; last output:\n" + out);
    }

    /** A copy of a bundle jar with another Bundle-Name (same symbolic name and version). */
    private static void renamed(Path jar, Path to, String name) throws IOException {
        try (ZipFile in = new ZipFile(jar.toFile()); ZipOutputStream out = new ZipOutputStream(Files.newOutputStream(to))) {
            for (ZipEntry e : java.util.Collections.list(in.entries())) {
                byte[] data = in.getInputStream(e).readAllBytes();
                if (e.getName().equals("META-INF/MANIFEST.MF")) {
                    data = new String(data, StandardCharsets.UTF_8).replaceFirst("Bundle-Name: [^\\r\\n]*", "Bundle-Name: " + name)
                            .getBytes(StandardCharsets.UTF_8);
                }
                out.putNextEntry(new ZipEntry(e.getName()));
                out.write(data);
                out.closeEntry();
            }
        }
    }

    /** {@code count} random 4 KiB writes (seeded) through qemu-io. */
    private static void dirty(int port, int count) throws Exception {
        StringBuilder script = new StringBuilder();
        Random r = new Random(9);
        for (int i = 0; i < count; i++) {
            script.append("write -P 7 ").append((long) r.nextInt(16384) * 4096).append(" 4k\n");
        }
        script.append("quit\n");
        Process p = new ProcessBuilder("qemu-io", "-f", "raw", "nbd://127.0.0.1:" + port + "/wbx")
                .redirectErrorStream(true).start();
        p.getOutputStream().write(script.toString().getBytes(StandardCharsets.UTF_8));
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        assertTrue("qemu-io finished", p.waitFor(120, TimeUnit.SECONDS));
        assertEquals(new String(out, StandardCharsets.UTF_8), 0, p.exitValue());
    }
}
