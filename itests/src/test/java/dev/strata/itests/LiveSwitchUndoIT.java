package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;


import org.junit.Test;

/**
 * {@code cache:switch rc0 readcache block_size=8192} typed into {@code bin/strata} on a readcache
 * formatted with 4096-byte blocks, over real files, with an NBD client connected: the switch adopts
 * (same devices, no format), so only the open over the cache device sees the mismatch, after the old
 * readcache was closed. It used to commit the new definition and leave rc0 waiting for a target (the
 * client hung, and a restart found it down). Now the build is undone: one line, rc0 still a
 * readcache serving the client, {@code dev:table} unchanged, and after a SIGKILL and a restart still
 * the old readcache with the client's blocks.
 */
public class LiveSwitchUndoIT {
    /** The second client's blocks (clear of what fio or the setup writes). */
    private static final ClientBlocks BLOCKS = new ClientBlocks(1L << 20, 0x50);
    private static final String REFUSAL = "rc0: switch to readcache refused: readcache: the cache device is formatted "
            + "with block_size=4096, not 8192; omit block_size, or use format=true to reformat it (its contents are "
            + "lost); rc0 stays readcache as it was";

    @Test
    public void aBlockSizeTheCacheWasNotFormattedWithIsRefusedAndUndone() throws Exception {
        int port = Distribution.freePort();
        Distribution d = Distribution.copy("live-switch-undo").defaultExportPort(port);
        String table;
        try (Tmux t = ConsoleIT.console(d, "live-switch-undo", "")) {
            t.await("the prompt", 120, s -> s.contains("strata> "));
            for (String name : new String[] {"rc0", "ssd1"}) {
                assertTrue(ConsoleIT.run(t, "dev:create " + name + " file path=var/" + name + ".img size=32M create=true",
                        60).startsWith("created " + name));
            }
            ConsoleIT.run(t, "nbd:export --port " + port + " rc0", 60);
            String attached = ConsoleIT.run(t, "cache:attach rc0 readcache cache=ssd1", 120);
            assertTrue(attached, attached.startsWith("rc0: readcache attached"));
            table = ClientBlocks.tableOf(ConsoleIT.run(t, "dev:table", 60), "rc0");
            try (NbdWire wire = new NbdWire(port, "rc0")) {
                BLOCKS.served(wire, 1, "the attach");
                for (int i = 2; i <= 4; i++) {
                    wire.read(BLOCKS.offset(1), 4096); // a few reads, so the readcache holds copies
                }
                String cmd = "cache:switch rc0 readcache block_size=8192";
                String out = ConsoleIT.run(t, cmd, 120);
                System.out.println("LiveSwitchUndoIT: " + cmd + " -> " + out);
                assertTrue(out, out.contains(REFUSAL));
                assertEquals("one line: " + out, 1, out.lines().count());
                assertFalse(out, out.contains("committed") || out.contains("waits"));
                String list = ConsoleIT.run(t, "dev:list", 60);
                assertTrue(list, list.lines().anyMatch(l -> l.matches("rc0\\s+readcache\\s.*active.*")));
                assertEquals("the definition is unchanged", table, ClientBlocks.tableOf(ConsoleIT.run(t, "dev:table", 60), "rc0"));
                assertTrue("the client's block after the refusal", BLOCKS.holds(wire, 1));
                BLOCKS.served(wire, 2, "the refusal"); // the client connected through it is still served
            }
            LiveFio.kill(d, t);
        }
        try (Tmux t = ConsoleIT.console(d, "live-switch-undo-2", "")) {
            t.await("the prompt", 120, s -> s.contains("strata> "));
            String list = ConsoleIT.run(t, "dev:list", 60);
            assertTrue(list, list.lines().anyMatch(l -> l.matches("rc0\\s+readcache\\s.*active.*")));
            assertEquals("the stored definition is the one before the refusal", table,
                    ClientBlocks.tableOf(ConsoleIT.run(t, "dev:table", 60), "rc0"));
            awaitExport(t);
            try (NbdWire wire = new NbdWire(port, "rc0")) {
                for (int i = 1; i <= 2; i++) {
                    assertTrue("the client's block " + i + " after the restart",
                            BLOCKS.holds(wire, i));
                }
            }
            ConsoleIT.exit(t);
        }
    }

    /** Waits, with a deadline, until {@code nbd:exports} lists rc0 again after the restart. */
    private static void awaitExport(Tmux t) {
        String[] exports = {""};
        Await.until("the export of rc0 to come back", 120, () -> {
            try {
                exports[0] = ConsoleIT.run(t, "nbd:exports", 60);
            } catch (Exception e) {
                throw new AssertionError("nbd:exports: " + e.getMessage(), e);
            }
            return exports[0].contains("rc0");
        }, () -> exports[0]);
    }
}
