package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.Arrays;

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
    private static final String REFUSAL = "rc0: switch to readcache refused: readcache: the cache device is formatted "
            + "with block_size=4096, not 8192; omit block_size, or use format=true to reformat it (its contents are "
            + "lost); rc0 stays readcache as it was";

    @Test
    public void aBlockSizeTheCacheWasNotFormattedWithIsRefusedAndUndone() throws Exception {
        int port = port();
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
            table = tableOf(ConsoleIT.run(t, "dev:table", 60), "rc0");
            try (NbdWire wire = new NbdWire(port, "rc0")) {
                served(wire, 1, "the attach");
                for (int i = 2; i <= 4; i++) {
                    wire.read(offset(1), 4096); // a few reads, so the readcache holds copies
                }
                String cmd = "cache:switch rc0 readcache block_size=8192";
                String out = ConsoleIT.run(t, cmd, 120);
                System.out.println("LiveSwitchUndoIT: " + cmd + " -> " + out);
                assertTrue(out, out.contains(REFUSAL));
                assertEquals("one line: " + out, 1, out.lines().count());
                assertFalse(out, out.contains("committed") || out.contains("waits"));
                String list = ConsoleIT.run(t, "dev:list", 60);
                assertTrue(list, list.lines().anyMatch(l -> l.matches("rc0\\s+readcache\\s.*active.*")));
                assertEquals("the definition is unchanged", table, tableOf(ConsoleIT.run(t, "dev:table", 60), "rc0"));
                assertTrue("the client's block after the refusal", Arrays.equals(block(1), wire.read(offset(1), 4096)));
                served(wire, 2, "the refusal"); // the client connected through it is still served
            }
            LiveFio.kill(d, t);
        }
        try (Tmux t = ConsoleIT.console(d, "live-switch-undo-2", "")) {
            t.await("the prompt", 120, s -> s.contains("strata> "));
            String list = ConsoleIT.run(t, "dev:list", 60);
            assertTrue(list, list.lines().anyMatch(l -> l.matches("rc0\\s+readcache\\s.*active.*")));
            assertEquals("the stored definition is the one before the refusal", table,
                    tableOf(ConsoleIT.run(t, "dev:table", 60), "rc0"));
            awaitExport(t);
            try (NbdWire wire = new NbdWire(port, "rc0")) {
                for (int i = 1; i <= 2; i++) {
                    assertTrue("the client's block " + i + " after the restart",
                            Arrays.equals(block(i), wire.read(offset(i), 4096)));
                }
            }
            ConsoleIT.exit(t);
        }
    }

    private static void awaitExport(Tmux t) throws Exception {
        long deadline = System.nanoTime() + 120_000_000_000L;
        String exports = ConsoleIT.run(t, "nbd:exports", 60);
        while (!exports.contains("rc0")) {
            assertTrue("the export of rc0 did not come back: " + exports, System.nanoTime() < deadline);
            Thread.sleep(200);
            exports = ConsoleIT.run(t, "nbd:exports", 60);
        }
    }

    /** Block {@code i}, written, flushed and read back within 30 s. */
    private static void served(NbdWire wire, int i, String after) throws IOException {
        long t0 = System.nanoTime();
        wire.write(offset(i), block(i));
        wire.flush();
        assertTrue("block " + i + " read back after " + after, Arrays.equals(block(i), wire.read(offset(i), 4096)));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue("the connected client was served after " + after + " (took " + ms + " ms)", ms < 30_000);
    }

    private static long offset(int i) {
        return (1L << 20) + i * 4096L;
    }

    private static byte[] block(int i) {
        byte[] b = new byte[4096];
        Arrays.fill(b, (byte) (0x50 + i));
        return b;
    }

    /** The {@code dev:table} line of {@code name}, its arguments sorted (the store keeps no order). */
    private static String tableOf(String table, String name) {
        String line = table.lines().filter(l -> l.startsWith(name + " ")).findFirst()
                .orElseThrow(() -> new AssertionError("no " + name + " in dev:table: " + table)).strip();
        return String.join(" ", new java.util.TreeSet<>(java.util.List.of(line.split("\\s+"))));
    }

    /** A free port of the range these tests may use (10900-10999; never 10809). */
    private static int port() {
        for (int p = 10900; p <= 10999; p++) {
            try (ServerSocket s = new ServerSocket(p, 1, InetAddress.getLoopbackAddress())) {
                return p;
            } catch (IOException e) {
                // taken: the next one
            }
        }
        throw new AssertionError("no free port in 10900-10999");
    }
}
