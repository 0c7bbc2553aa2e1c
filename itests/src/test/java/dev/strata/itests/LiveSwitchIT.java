package dev.strata.itests;

import static org.junit.Assert.assertTrue;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.Test;

/**
 * {@code cache:switch} typed into the console of {@code bin/strata} while fio writes and verifies
 * (crc32c) through an NBD export of {@code disk1}: a writeboost that {@code cache:attach} put there,
 * holding fio's writes dirty ({@code writeback_threshold=0}), is switched to a writecache on another
 * cache device (drain, then one short pause), then to a readcache on that same device (in place),
 * with fio still running. fio finishes without an error and verifies everything it wrote; after a
 * SIGKILL of the JVM and a restart the stack is the readcache and fio verifies the same data again.
 * The longest write fio saw around each switch is printed, not asserted on.
 */
public class LiveSwitchIT {
    private static final long BYTES = 64L << 20;

    @Test
    public void switchWhileFioWritesAndVerifiesThroughAnNbdExport() throws Exception {
        int port = Distribution.freePort();
        Distribution d = Distribution.copy("live-switch").defaultExportPort(port);
        Path work = d.home.getParent();
        LiveFio fio = new LiveFio("live-switch", port, BYTES, 16, work);
        try (Tmux t = ConsoleIT.console(d, "live-switch", "")) {
            t.await("the prompt", 120, s -> s.contains("strata> "));
            for (String dev : new String[] {"disk1 size=128M", "ssd1 size=128M", "ssd2 size=128M"}) {
                String name = dev.split(" ")[0];
                assertTrue(ConsoleIT.run(t, "dev:create " + name + " file path=var/" + name + ".img "
                        + dev.split(" ")[1] + " create=true", 60).startsWith("created " + name));
            }
            ConsoleIT.run(t, "nbd:export --port " + port + " disk1", 60);
            String attached = ConsoleIT.run(t, "cache:attach disk1 writeboost cache=ssd1 writeback_threshold=0", 120);
            assertTrue(attached, attached.startsWith("disk1: writeboost attached"));
            fio.start();
            String report;
            try {
                String stats = "";
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                while (!stats.matches("(?s).*dirty_blocks\\s+[1-9][0-9]{3,}.*")) {
                    assertTrue("the cache never held fio's writes: " + stats, System.nanoTime() < deadline && fio.alive());
                    stats = ConsoleIT.run(t, "cache:stats --all --bytes disk1", 60);
                }
                long from1 = fio.sinceStartMs();
                String toWritecache = ConsoleIT.run(t, "cache:switch disk1 writecache cache=ssd2", 300);
                long to1 = fio.sinceStartMs();
                boolean alive1 = fio.alive();
                String toReadcache = ConsoleIT.run(t, "cache:switch disk1 readcache", 300);
                long to2 = fio.sinceStartMs();
                boolean alive2 = fio.alive();
                System.out.println("LiveSwitchIT: " + toWritecache.replace("\r", " | ").strip() + " (fio still writing: "
                        + alive1 + ")");
                System.out.println("LiveSwitchIT: " + toReadcache.replace("\r", " | ").strip() + " (fio still writing: "
                        + alive2 + ")");
                assertTrue(toWritecache, toWritecache.contains("disk1: switched to writecache (cache ssd2; was writeboost "
                        + "on ssd1)"));
                assertTrue(toReadcache, toReadcache.contains("disk1: switched to readcache (cache ssd2; was writecache "
                        + "on ssd2)"));
                String json = fio.finish();
                report = "fio's longest request in the whole run " + LiveFio.longestMs(json) + " ms; "
                        + fio.window("switch to writecache", from1, to1) + "; "
                        + fio.window("switch to readcache", to1, to2);
            } finally {
                fio.stop();
            }
            System.out.println("LiveSwitchIT: " + report);
            String tree = ConsoleIT.run(t, "dev:list --tree", 60);
            System.out.println("LiveSwitchIT: dev:list --tree\n" + tree);
            assertTrue(tree, tree.lines().anyMatch(l -> l.matches("disk1\\s+-\\s+readcache\\s.*nbd:disk1.*")));
            assertTrue(tree, tree.lines().anyMatch(l -> l.matches(".*disk1\\.file\\s+origin\\s+file\\s.*")));
            assertTrue(tree, tree.lines().anyMatch(l -> l.matches(".*ssd2\\s+cache\\s+file\\s.*")));
            LiveFio.kill(d, t);
        }
        try (Tmux t = ConsoleIT.console(d, "live-switch-2", "")) {
            t.await("the prompt", 120, s -> s.contains("strata> "));
            String list = ConsoleIT.run(t, "dev:list", 60);
            assertTrue(list, list.lines().anyMatch(l -> l.matches("disk1\\s+readcache\\s.*active.*")));
            LiveFio.awaitExport(t);
            fio.verifyOnly();
            ConsoleIT.exit(t);
        }
    }

    /**
     * A SIGKILL of the JVM while {@code cache:switch} drains (its progress line on the console):
     * after the restart the device is the old writeboost (the switch had not committed) or the new
     * writecache (it had), never anything else, and fio verifies every block it wrote before.
     */
    @Test
    public void aSigkillDuringTheSwitchLosesNothing() throws Exception {
        int port = Distribution.freePort();
        Distribution d = Distribution.copy("live-switch-kill").defaultExportPort(port);
        Path work = d.home.getParent();
        LiveFio fio = new LiveFio("live-switch-kill", port, BYTES, 17, work);
        try (Tmux t = ConsoleIT.console(d, "live-switch-kill", "")) {
            t.await("the prompt", 120, s -> s.contains("strata> "));
            for (String name : new String[] {"disk1", "ssd1", "ssd2"}) {
                assertTrue(ConsoleIT.run(t, "dev:create " + name + " file path=var/" + name + ".img size=128M create=true",
                        60).startsWith("created " + name));
            }
            ConsoleIT.run(t, "nbd:export --port " + port + " disk1", 60);
            String attached = ConsoleIT.run(t, "cache:attach disk1 writeboost cache=ssd1 writeback_threshold=0", 120);
            assertTrue(attached, attached.startsWith("disk1: writeboost attached"));
            fio.start();
            try {
                fio.finish(); // everything written (and flushed) is dirty in the cache now
            } finally {
                fio.stop();
            }
            t.line("cache:switch disk1 writecache cache=ssd2");
            t.await("the drain's progress line, or the switch's end", 120,
                    s -> s.contains("writeback disk1:") || s.contains("disk1: switched"));
            LiveFio.kill(d, t);
        }
        try (Tmux t = ConsoleIT.console(d, "live-switch-kill-2", "")) {
            t.await("the prompt", 120, s -> s.contains("strata> "));
            String list = ConsoleIT.run(t, "dev:list", 60);
            System.out.println("LiveSwitchIT: after a SIGKILL during the switch:\n" + list);
            assertTrue(list, list.lines().anyMatch(l -> l.matches("disk1\\s+(writeboost|writecache)\\s.*active.*")));
            LiveFio.awaitExport(t);
            fio.verifyOnly();
            ConsoleIT.exit(t);
        }
    }
}
