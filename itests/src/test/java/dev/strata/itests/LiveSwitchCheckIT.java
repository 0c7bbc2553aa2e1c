package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.nio.file.Path;

import org.junit.Test;

/**
 * An in-place {@code cache:switch} (the same cache device) with a bad value of the new type, typed
 * into the console of {@code bin/strata} while fio writes and verifies (crc32c) through an NBD export
 * of {@code disk1}: each is refused in one line — before anything is drained, paused, closed or
 * stored (the in-place build used to come after the commit: the device then waited for a target,
 * fio hung, and a restart found it down) — the device keeps serving fio on its writecache, and after
 * a SIGKILL and a restart its stored definition is the one it had, and fio verifies every block.
 */
public class LiveSwitchCheckIT {
    /** The second client's blocks (clear of what fio or the setup writes). */
    private static final ClientBlocks BLOCKS = new ClientBlocks(48L << 20, 0x40);
    private static final long BYTES = 32L << 20;

    @Test
    public void aBadValueOfAnInPlaceSwitchChangesNothingUnderFio() throws Exception {
        int port = Distribution.freePort();
        Distribution d = Distribution.copy("live-switch-check").defaultExportPort(port);
        Path work = d.home.getParent();
        LiveFio fio = new LiveFio("live-switch-check", port, BYTES, 21, work);
        String table;
        int written = 0;
        try (Tmux t = ConsoleIT.console(d, "live-switch-check", "")) {
            t.await("the prompt", 120, s -> s.contains("strata> "));
            for (String name : new String[] {"disk1", "ssd1"}) {
                assertTrue(ConsoleIT.run(t, "dev:create " + name + " file path=var/" + name + ".img size=64M create=true",
                        60).startsWith("created " + name));
            }
            ConsoleIT.run(t, "nbd:export --port " + port + " disk1", 60);
            String attached = ConsoleIT.run(t, "cache:attach disk1 writecache cache=ssd1", 120);
            assertTrue(attached, attached.startsWith("disk1: writecache attached"));
            table = ClientBlocks.tableOf(ConsoleIT.run(t, "dev:table", 60), "disk1");
            fio.start();
            // a second client, connected through all the refusals, writing where fio does not (its
            // 32 MiB are the first half of disk1): each refusal is followed by a write, a flush and a read
            try (NbdWire wire = new NbdWire(port, "disk1")) {
                String[][] refusals = {
                    {"cache:switch disk1 writecache high_watermark=500",
                        "writecache: high_watermark=500 is out of range; allowed 0 to 100"},
                    {"cache:switch disk1 writecache cache=ssd1 block_size=1234",
                        "writecache: block_size=1234 is not supported; use 512 or 4096"},
                    {"cache:switch disk1 writeboost buffers=1000", "writeboost: buffers=1000 is out of range; allowed 2 to 64"},
                    {"cache:switch disk1 readcache readahead=5000", "readcache: readahead=5000 is not 0 (off)"},
                };
                for (String[] r : refusals) {
                    String out = ConsoleIT.run(t, r[0], 120);
                    System.out.println("LiveSwitchCheckIT: " + r[0] + " -> " + out);
                    assertTrue(r[0] + ": " + out, out.contains(r[1]));
                    assertEquals(r[0] + ": one line: " + out, 1, out.lines().count());
                    assertFalse(r[0] + ": " + out, out.contains("committed") || out.contains("writeback disk1:"));
                    String list = ConsoleIT.run(t, "dev:list", 60);
                    assertTrue(list, list.lines().anyMatch(l -> l.matches("disk1\\s+writecache\\s.*active.*")));
                    assertEquals("the definition is unchanged after " + r[0], table,
                            ClientBlocks.tableOf(ConsoleIT.run(t, "dev:table", 60), "disk1"));
                    BLOCKS.served(wire, ++written, r[0]);
                }
                fio.finish(); // fio was served throughout: it ends and verifies everything it wrote
            } finally {
                fio.stop();
            }
            LiveFio.kill(d, t);
        }
        try (Tmux t = ConsoleIT.console(d, "live-switch-check-2", "")) {
            t.await("the prompt", 120, s -> s.contains("strata> "));
            String list = ConsoleIT.run(t, "dev:list", 60);
            assertTrue(list, list.lines().anyMatch(l -> l.matches("disk1\\s+writecache\\s.*active.*")));
            assertEquals("the stored definition is the one before the refusals", table,
                    ClientBlocks.tableOf(ConsoleIT.run(t, "dev:table", 60), "disk1"));
            LiveFio.awaitExport(t);
            fio.verifyOnly();
            try (NbdWire wire = new NbdWire(port, "disk1")) {
                for (int i = 1; i <= written; i++) {
                    assertTrue("the second client's block " + i + " after the restart",
                            BLOCKS.holds(wire, i));
                }
            }
            ConsoleIT.exit(t);
        }
    }
}
