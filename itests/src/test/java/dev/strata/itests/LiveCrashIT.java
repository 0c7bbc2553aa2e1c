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
 * SIGKILL of {@code bin/strata}'s JVM in the middle of live changes, black box, with fio writing
 * and verifying (crc32c) through an NBD export: during a {@code cache:attach} (killed as soon as
 * the command is typed), during a {@code cache:detach}'s drain (the slow device is a {@code delay}
 * device, 2 ms a write, so the drain takes seconds: killed while its progress line runs), and as
 * the drain ends (around the final swap). After each restart the device is up in one consistent
 * state — the old one or the new one, never a mix — and fio verifies every region it wrote and
 * flushed before ({@code --verify_only}). Which state came back is printed, not asserted: the kill
 * lands where it lands; the in-process power cuts ({@code AttachCommandTest}, {@code DetachCommandTest})
 * cover every step exactly.
 */
public class LiveCrashIT {

    private static List<String> fio(int port, String offset, int seed, boolean verifyOnly) {
        List<String> a = new ArrayList<>(List.of("fio", "--name=live-crash", "--ioengine=nbd",
                "--uri=nbd://127.0.0.1:" + port + "/disk1", "--rw=randwrite", "--bs=4k", "--iodepth=16",
                "--offset=" + offset, "--size=16M", "--randseed=" + seed, "--verify=crc32c", "--do_verify=1",
                "--verify_fatal=1", "--verify_state_save=0", "--output-format=json"));
        a.add(verifyOnly ? "--verify_only=1" : "--end_fsync=1");
        return a;
    }

    private static void runFio(Path work, List<String> args, String name) throws Exception {
        Path out = work.resolve(name + ".json");
        Process p = new ProcessBuilder(args).directory(work.toFile()).redirectOutput(out.toFile())
                .redirectError(work.resolve(name + ".err").toFile()).redirectInput(new File("/dev/null")).start();
        try {
            assertTrue(name + " finished", p.waitFor(600, TimeUnit.SECONDS));
        } finally {
            p.destroyForcibly();
        }
        String json = Files.readString(out, StandardCharsets.UTF_8);
        assertEquals(name + " exit: " + json + Files.readString(work.resolve(name + ".err")), 0, p.exitValue());
        assertEquals(name + " errors: " + json, 0, number(json, "error"));
    }

    private static void kill(Distribution d, Tmux t) throws Exception {
        String home = "-Dstrata.home=" + d.home.toRealPath();
        ProcessHandle jvm = ProcessHandle.allProcesses()
                .filter(p -> p.info().commandLine().map(c -> c.contains(home + " ")).orElse(false))
                .findFirst().orElseThrow(() -> new AssertionError("no JVM of " + d.home));
        assertTrue(jvm.destroyForcibly());
        t.await("the killed JVM's shell", 60, sc -> sc.contains("STRATA-EXITED 137"));
    }

    /** Restarts, waits for the export; returns disk1's dev:list line. */
    private static String restart(Tmux t) {
        t.await("the prompt", 120, s -> s.contains("strata> "));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        String exports = ConsoleIT.run(t, "nbd:exports", 60);
        while (!exports.contains("disk1")) {
            assertTrue("the export of disk1 did not come back: " + exports, System.nanoTime() < deadline);
            exports = ConsoleIT.run(t, "nbd:exports", 60);
        }
        String list = ConsoleIT.run(t, "dev:list", 60);
        String table = ConsoleIT.run(t, "dev:table", 60);
        assertTrue(table, table.lines().noneMatch(l -> l.contains("staged")));
        return list.lines().filter(l -> l.startsWith("disk1 ")).findFirst().orElseThrow(() -> new AssertionError(list))
                + " | " + table.replace('\n', ';');
    }

    @Test
    public void sigkillDuringAttachDuringTheDrainAndAtTheSwapOfDetach() throws Exception {
        int port = Distribution.freePort();
        Distribution d = Distribution.copy("live-crash").defaultExportPort(port);
        Path work = d.home.getParent();
        try (Tmux t = ConsoleIT.console(d, "live-crash-1", "")) {
            t.await("the prompt", 120, s -> s.contains("strata> "));
            assertTrue(ConsoleIT.run(t, "dev:create disk1f file path=var/disk1.img size=64M create=true", 60)
                    .startsWith("created disk1f"));
            assertTrue(ConsoleIT.run(t, "dev:create disk1 delay device=disk1f write_ms=2", 60).startsWith("created disk1"));
            assertTrue(ConsoleIT.run(t, "dev:create ssd1 file path=var/ssd1.img size=64M create=true", 60)
                    .startsWith("created ssd1"));
            ConsoleIT.run(t, "nbd:export --port " + port + " disk1", 60);
            runFio(work, fio(port, "0", 1, false), "fio-a");
            // 1. killed during the attach
            t.line("cache:attach disk1 writeboost cache=ssd1 writeback_threshold=0");
            t.await("the attach typed", 30, s -> s.contains("cache:attach disk1 writeboost"));
            kill(d, t);
        }
        boolean attached;
        try (Tmux t = ConsoleIT.console(d, "live-crash-2", "")) {
            String state = restart(t);
            System.out.println("LiveCrashIT: after a SIGKILL during cache:attach: " + state);
            attached = state.matches("disk1\\s+writeboost\\s.*active.*");
            assertTrue(state, attached || state.matches("disk1\\s+delay\\s.*active.*"));
            runFio(work, fio(port, "0", 1, true), "fio-a-verify-1");
            if (!attached) {
                String r = ConsoleIT.run(t, "cache:attach disk1 writeboost cache=ssd1 writeback_threshold=0 format=true", 120);
                assertTrue(r, r.startsWith("disk1: writeboost attached"));
            }
            runFio(work, fio(port, "16M", 2, false), "fio-b"); // held dirty by the cache
            // 2. killed during the detach's drain (16 MiB to a 2 ms/write device)
            t.line("cache:detach disk1");
            t.await("the drain's progress line", 120, s -> s.contains("writeback disk1: ") || s.contains("disk1: detached"));
            kill(d, t);
        }
        try (Tmux t = ConsoleIT.console(d, "live-crash-3", "")) {
            String state = restart(t);
            System.out.println("LiveCrashIT: after a SIGKILL during the drain of cache:detach: " + state);
            assertTrue(state, state.matches("disk1\\s+(writeboost|delay)\\s.*active.*"));
            runFio(work, fio(port, "0", 1, true), "fio-a-verify-2");
            runFio(work, fio(port, "16M", 2, true), "fio-b-verify-2");
            if (state.matches("disk1\\s+writeboost\\s.*")) {
                // 3. killed as the drain ends: around the final swap
                String stats = ConsoleIT.run(t, "cache:stats --all --bytes disk1", 60);
                System.out.println("LiveCrashIT: before the second detach: " + stats.lines()
                        .filter(l -> l.contains("dirty_blocks")).findFirst().orElse(stats));
                t.line("cache:detach disk1");
                t.await("the drain's end", 300, s -> Pattern.compile("writeback disk1: 0 of|disk1: detached").matcher(s).find());
                kill(d, t);
            } else {
                ConsoleIT.exit(t);
            }
        }
        try (Tmux t = ConsoleIT.console(d, "live-crash-4", "")) {
            String state = restart(t);
            System.out.println("LiveCrashIT: after a SIGKILL as the drain of cache:detach ended: " + state);
            assertTrue(state, state.matches("disk1\\s+(writeboost|delay)\\s.*active.*"));
            runFio(work, fio(port, "0", 1, true), "fio-a-verify-3");
            runFio(work, fio(port, "16M", 2, true), "fio-b-verify-3");
            ConsoleIT.exit(t);
        }
    }

    private static long number(String json, String key) {
        Matcher m = Pattern.compile("\"" + Pattern.quote(key) + "\"\\s*:\\s*(\\d+)").matcher(json);
        assertTrue("no \"" + key + "\" in " + json, m.find());
        return Long.parseLong(m.group(1));
    }
}
