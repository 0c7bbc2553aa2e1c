package dev.strata.nbd.internal.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.nbd.internal.protocol.Nbd;
import dev.strata.nbd.internal.server.Export;
import dev.strata.nbd.internal.server.NbdServer;
import dev.strata.nbd.testing.MemoryDevice;
import dev.strata.nbd.testing.RawClient;
import dev.strata.nbd.testing.SimpleDeviceManager;
import dev.strata.nbd.testing.Tools;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An export whose device is not built yet (its target type missing, a cache formatting on start)
 * listens already: a client asking for it must never be told a size of 0, only the real size
 * once the device is active.
 */
class ExportReadinessTest {
    static final int SIZE = 4 << 20;
    final SimpleDeviceManager devices = new SimpleDeviceManager();
    final MemoryExportStore store = new MemoryExportStore();
    NbdServer server;
    ExportService service;

    @BeforeEach
    void start() {
        devices.add("wb0", new MemoryDevice(SIZE));
        devices.waiting.put("wb0", "waiting for target type 'writeboost'");
        server = new NbdServer();
        service = new ExportService(devices, store, server, null, 20);
    }

    @AfterEach
    void stop() {
        service.close();
        server.close();
    }

    private InetSocketAddress exportWb0(long readyWaitMillis) throws IOException {
        Export e = service.export("wb0", "", null, ExportServiceTest.freePort(), false);
        e.readyWaitMillis(readyWaitMillis);
        return new InetSocketAddress("127.0.0.1", e.port());
    }

    /** Sends GO or INFO and returns the first reply (the size info if the server tells one). */
    private static RawClient.OptReply ask(RawClient c, int option) throws IOException {
        c.greet(Nbd.FLAG_C_FIXED_NEWSTYLE | Nbd.FLAG_C_NO_ZEROES);
        c.option(option, RawClient.goData("wb0"));
        return c.optReply();
    }

    @Test
    void goAndInfoAreRefusedWithTheReasonWhileTheDeviceIsNotActive() throws IOException {
        InetSocketAddress at = exportWb0(0);
        for (int option : new int[] {Nbd.OPT_GO, Nbd.OPT_INFO}) {
            try (RawClient c = new RawClient(at)) {
                RawClient.OptReply r = ask(c, option);
                assertEquals(Nbd.REP_ERR_POLICY, r.type(), "no size may be told for a device being built");
                String msg = new String(r.data(), StandardCharsets.UTF_8);
                assertTrue(msg.contains("export 'wb0' is not available yet"), msg);
                assertTrue(msg.contains("waiting for target type 'writeboost'"), msg);
            }
        }
        devices.waiting.remove("wb0");
        try (RawClient c = new RawClient(at)) {
            assertEquals(SIZE, c.go("wb0", false, false));
        }
    }

    @Test
    void nbdinfoIsRefusedWithTheReasonThenSeesTheRealSize() throws Exception {
        Tools.require("nbdinfo", "libnbd-bin");
        InetSocketAddress at = exportWb0(0);
        String uri = "nbd://127.0.0.1:" + at.getPort() + "/wb0";
        Tools.Result r = Tools.run(null, "nbdinfo", "--size", uri);
        assertTrue(r.exit() != 0, "nbdinfo must not get a size for a device being built:\n" + r.output());
        assertTrue(r.output().contains("policy"), r.output());
        // qemu shows the server's message, libnbd does not
        Tools.require("qemu-img", "qemu-utils");
        Tools.Result q = Tools.run(null, "qemu-img", "info", uri);
        assertTrue(q.exit() != 0, q.output());
        assertTrue(q.output().contains("waiting for target type 'writeboost'"), q.output());
        devices.waiting.remove("wb0");
        assertEquals(Long.toString(SIZE), Tools.ok(null, "nbdinfo", "--size", uri).strip());
    }

    /**
     * A device waiting for something named (here a failed build, retried later) will not come up
     * within a client's patience: INFO, GO (nbdinfo sends both, one after the other) and LIST
     * are answered at once with the reason, even with a long wait for devices being built.
     */
    @Test
    void nbdinfoIsRefusedAtOnceForADeviceWaitingForASuccessfulBuild() throws Exception {
        Tools.require("nbdinfo", "libnbd-bin");
        devices.waiting.put("wb0", "waiting for a successful build: Connection refused");
        InetSocketAddress at = exportWb0(60_000); // over the cap below: a wait would fail the test
        String uri = "nbd://127.0.0.1:" + at.getPort() + "/wb0";
        // libnbd shows the server's message only in its debug output
        Tools.Result r = Tools.runWithin(30, null, "env", "LIBNBD_DEBUG=1", "nbdinfo", uri);
        assertTrue(r.exit() != 0, "nbdinfo must not get a size for a device that is not built:\n" + r.output());
        String refusal = "server error message: export 'wb0' is not available yet: device 'wb0' is not active yet: "
                + "waiting for a successful build: Connection refused; try again shortly";
        assertTrue(r.output().contains(refusal), r.output());
        assertTrue(r.output().contains("opt_info request") && r.output().contains("opt_go request"), r.output());
        Tools.Result list = Tools.runWithin(30, null, "env", "LIBNBD_DEBUG=1", "nbdinfo", "--list",
                "nbd://127.0.0.1:" + at.getPort());
        assertTrue(list.output().contains(refusal), list.output());
        try (RawClient c = new RawClient(at)) {
            RawClient.OptReply info = ask(c, Nbd.OPT_INFO);
            assertEquals(Nbd.REP_ERR_POLICY, info.type());
            c.option(Nbd.OPT_GO, RawClient.goData("wb0"));
            assertEquals(Nbd.REP_ERR_POLICY, c.optReply().type());
        }
    }

    @Test
    void aClientRefusedOnceIsNotMadeToWaitAgainOnTheSameConnection() throws Exception {
        devices.waiting.put("wb0", ""); // its first build runs: worth a wait
        InetSocketAddress at = exportWb0(300);
        try (RawClient c = new RawClient(at)) {
            assertEquals(Nbd.REP_ERR_POLICY, ask(c, Nbd.OPT_INFO).type()); // waited 300 ms, asking again and again
            devices.askedWhileWaiting = new java.util.concurrent.CountDownLatch(1000);
            c.option(Nbd.OPT_GO, RawClient.goData("wb0"));
            assertEquals(Nbd.REP_ERR_POLICY, c.optReply().type());
            assertEquals(999, devices.askedWhileWaiting.getCount(), "GO after a refused INFO asks once, without a wait");
        }
    }

    @Test
    void oldStyleExportNameIsDroppedNotToldSizeZero() throws IOException {
        InetSocketAddress at = exportWb0(0);
        try (RawClient c = new RawClient(at)) {
            c.greet(Nbd.FLAG_C_FIXED_NEWSTYLE | Nbd.FLAG_C_NO_ZEROES);
            c.option(Nbd.OPT_EXPORT_NAME, "wb0".getBytes(StandardCharsets.UTF_8));
            assertTrue(c.closedByServer(), "EXPORT_NAME has no error reply: the server must drop, not send size 0");
        }
    }

    @Test
    void aClientThatConnectsEarlyWaitsAndGetsTheRealSize() throws Exception {
        waitsAndGetsTheRealSize(""); // its first build runs: it waits for nothing named
    }

    @Test
    void aClientThatConnectsWhileThePolicyBundleIsUpdatedWaitsForIt() throws Exception {
        waitsAndGetsTheRealSize("waiting for target type 'writeboost'"); // a hot update: the type is back in a moment
    }

    private void waitsAndGetsTheRealSize(String reason) throws Exception {
        devices.waiting.put("wb0", reason);
        InetSocketAddress at = exportWb0(60_000);
        devices.askedWhileWaiting = new java.util.concurrent.CountDownLatch(2);
        try (RawClient c = new RawClient(at)) {
            CompletableFuture<RawClient.OptReply> reply = CompletableFuture.supplyAsync(() -> {
                try {
                    return ask(c, Nbd.OPT_GO);
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            });
            // the device is built while the client waits in its GO: the export asks the
            // device manager again and again until then
            assertTrue(devices.askedWhileWaiting.await(30, TimeUnit.SECONDS), "the server never asked about wb0");
            devices.waiting.remove("wb0");
            RawClient.OptReply r = reply.get(60, TimeUnit.SECONDS);
            assertEquals(Nbd.REP_INFO, r.type());
            ByteBuffer d = r.buf();
            assertEquals(Nbd.INFO_EXPORT, d.getShort());
            assertEquals(SIZE, d.getLong());
        }
    }

    @Test
    void aServerExportOfAnUnbuiltDeviceIsRefusedEvenWithoutTheService() throws IOException {
        // the moment between addExport and the service setting its readiness check: size 0 alone refuses
        MemoryDevice empty = new MemoryDevice(0);
        Export e = server.addExport("raw", "", empty, new InetSocketAddress("127.0.0.1", 0), false);
        e.readyWaitMillis(0);
        try (RawClient c = new RawClient(new InetSocketAddress("127.0.0.1", e.port()))) {
            c.greet(Nbd.FLAG_C_FIXED_NEWSTYLE | Nbd.FLAG_C_NO_ZEROES);
            c.option(Nbd.OPT_GO, RawClient.goData("raw"));
            assertEquals(Nbd.REP_ERR_POLICY, c.optReply().type());
        }
    }
}
