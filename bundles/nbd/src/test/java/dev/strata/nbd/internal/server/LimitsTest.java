package dev.strata.nbd.internal.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.nbd.internal.protocol.Nbd;
import dev.strata.nbd.internal.tls.TlsConfig;
import dev.strata.nbd.testing.MemoryDevice;
import dev.strata.nbd.testing.RawClient;
import dev.strata.nbd.testing.Tools;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Per-export connection limit, idle timeout, and stalled handshakes that must not block others. */
class LimitsTest {
    static final long SIZE = 4L << 20;
    @TempDir
    Path tmp;
    NbdServer server;
    final MemoryDevice device = new MemoryDevice(SIZE);

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    private Export export(NbdServer.Settings settings, ExportLimits limits) throws IOException {
        server = new NbdServer(settings);
        return server.addExport("d", "", device, new InetSocketAddress("127.0.0.1", 0), false, TlsConfig.OFF, limits);
    }

    @Test
    void theClientPastMaxConnectionsIsRefusedCleanly() throws Exception {
        Export e = export(NbdServer.Settings.defaults(), new ExportLimits(2, 0));
        InetSocketAddress a = new InetSocketAddress("127.0.0.1", e.port());
        try (RawClient c1 = new RawClient(a); RawClient c2 = new RawClient(a); RawClient c3 = new RawClient(a)) {
            assertEquals(SIZE, c1.go("d", false, false));
            assertEquals(SIZE, c2.go("d", false, false));
            c3.greet(Nbd.FLAG_C_FIXED_NEWSTYLE | Nbd.FLAG_C_NO_ZEROES);
            c3.option(Nbd.OPT_GO, RawClient.goData("d"));
            RawClient.OptReply r = c3.optReply();
            assertEquals(Nbd.REP_ERR_POLICY, r.type());
            assertTrue(new String(r.data(), StandardCharsets.UTF_8).contains("maximum of 2 connections"));
            // the refused client may still negotiate politely and leave
            c3.option(Nbd.OPT_ABORT, new byte[0]);
            assertEquals(Nbd.REP_ACK, c3.optReply().type());
            Tools.require("nbdinfo", "libnbd-bin");
            Tools.Result full = Tools.run(tmp, "nbdinfo", "nbd://127.0.0.1:" + e.port() + "/d");
            assertNotEquals(0, full.exit(), full.output());
            // refused with an error reply to GO (libnbd does not print the server's text), not a dropped connection
            assertTrue(full.output().contains("server replied with error to opt_go"), full.output());
            // the two admitted clients are unaffected
            c1.request(0, Nbd.CMD_WRITE, 7, 0, 4096, new byte[4096]);
            assertEquals(0, c1.simple().error());
            c2.close();
            waitFor(() -> e.connectionCount() == 1, "the closed client's place is given back");
            String json = Tools.ok(tmp, "nbdinfo", "--json", "nbd://127.0.0.1:" + e.port() + "/d");
            assertTrue(json.contains("\"export-size\": " + SIZE), json);
        }
    }

    @Test
    void anIdleConnectionIsDroppedOneWithARequestRunningIsNot() throws Exception {
        Export e = export(NbdServer.Settings.defaults(), new ExportLimits(0, 300));
        InetSocketAddress a = new InetSocketAddress("127.0.0.1", e.port());
        device.gate = new CountDownLatch(1);
        device.blockReadsAt = 8192;
        try (RawClient busy = new RawClient(a)) {
            busy.go("d", false, false);
            busy.request(0, Nbd.CMD_READ, 42, 8192, 4096, null);
            waitFor(() -> e.requests() >= 1 || e.connectionCount() == 0, "the read is running");
            // two idle clients, one after the other: while each waits to be dropped, the busy
            // connection has been without input for longer than the timeout as well
            for (int i = 0; i < 2; i++) {
                try (RawClient idle = new RawClient(a)) {
                    idle.go("d", false, false);
                    assertTrue(idle.closedByServer(), "an idle connection is dropped");
                }
            }
            device.gate.countDown();
            RawClient.Simple s = busy.simple();
            assertEquals(0, s.error());
            assertEquals(42, s.cookie());
        }
    }

    @Test
    void hundredStalledHandshakesDoNotStopAWellBehavedClient() throws Exception {
        Tools.require("nbdinfo", "libnbd-bin");
        NbdServer.Settings d = NbdServer.Settings.defaults();
        Export e = export(new NbdServer.Settings(d.workers(), 5_000, d.inputBuffer(), d.poolBudget()),
                ExportLimits.NONE);
        byte[] pattern = new byte[65536];
        java.util.Arrays.fill(pattern, (byte) 0x3c);
        device.write(0, ByteBuffer.wrap(pattern), 0);
        List<SocketChannel> stalled = new ArrayList<>();
        try {
            for (int i = 0; i < 100; i++) {
                SocketChannel c = SocketChannel.open(new InetSocketAddress("127.0.0.1", e.port()));
                if (i % 3 == 1) {
                    // past the greeting, stalled before the client flags are complete
                    c.write(ByteBuffer.wrap(new byte[] {0, 0}));
                } else if (i % 3 == 2) {
                    // past the flags, stalled inside an option header
                    c.write(ByteBuffer.allocate(4 + 6).putInt(Nbd.FLAG_C_FIXED_NEWSTYLE).put("IHAVEO".getBytes()).flip());
                }
                stalled.add(c);
            }
            String uri = "nbd://127.0.0.1:" + e.port() + "/d";
            String json = Tools.ok(tmp, "nbdinfo", "--json", uri);
            assertTrue(json.contains("\"export-size\": " + SIZE), json);
            String map = Tools.ok(tmp, "nbdinfo", "--map", uri);
            assertTrue(map.contains("data"), map);
            Tools.require("qemu-io", "qemu-utils");
            String out = Tools.ok(tmp, "qemu-io", "-r", "-f", "raw", uri, "-c", "read -P 0x3c 0 64k");
            assertTrue(!out.contains("verification failed"), out);
            for (SocketChannel c : stalled) {
                assertTrue(c.isOpen());
            }
            // the negotiation deadline then drops every stalled client (the test stops by itself)
            for (SocketChannel c : stalled) {
                c.socket().setSoTimeout(60_000);
                var in = c.socket().getInputStream();
                byte[] buf = new byte[256];
                int n;
                do {
                    n = in.read(buf);
                } while (n >= 0);
            }
        } finally {
            for (SocketChannel c : stalled) {
                c.close();
            }
        }
        waitFor(() -> e.connectionCount() == 0, "nothing is left connected");
    }

    private static void waitFor(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting: " + what);
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
    }
}
