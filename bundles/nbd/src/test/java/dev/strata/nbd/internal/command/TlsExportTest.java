package dev.strata.nbd.internal.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.InvalidArgumentException;
import dev.strata.nbd.internal.protocol.Nbd;
import dev.strata.nbd.internal.server.Export;
import dev.strata.nbd.internal.server.NbdServer;
import dev.strata.nbd.internal.session.TlsMode;
import dev.strata.nbd.testing.Certs;
import dev.strata.nbd.testing.MemoryDevice;
import dev.strata.nbd.testing.RawClient;
import dev.strata.nbd.testing.SimpleDeviceManager;
import dev.strata.nbd.testing.Tools;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code nbd:export --tls/--tls-creds}: validation, what is stored, and the running export. */
class TlsExportTest {
    @TempDir
    static Path dir;
    static Certs certs;
    final SimpleDeviceManager devices = new SimpleDeviceManager();
    final MemoryExportStore store = new MemoryExportStore();
    final Map<String, ExportSpec> stored = store.stored;
    NbdServer server;
    ExportService service;

    @BeforeAll
    static void make() throws Exception {
        certs = Certs.make(dir);
    }

    @BeforeEach
    void start() {
        devices.add("disk0", new MemoryDevice(1 << 20));
        server = new NbdServer();
        service = new ExportService(devices, store, server, null, 20);
    }

    @AfterEach
    void stop() {
        service.close();
        server.close();
    }

    @Test
    void requireExportIsStoredAndServesOnlyTls() throws Exception {
        int port = ExportServiceTest.freePort();
        Export e = service.export("disk0", "", null, port, false, TlsMode.REQUIRE, certs.server().toString());
        ExportSpec spec = stored.values().iterator().next();
        assertEquals(TlsMode.REQUIRE, spec.tls());
        assertEquals(spec, ExportSpec.fromProperties(spec.toProperties()), "TLS settings survive a restart");
        assertEquals("require", service.status().get(0).get("tls"));
        try (RawClient c = new RawClient(new InetSocketAddress("127.0.0.1", e.port()))) {
            c.greet(Nbd.FLAG_C_FIXED_NEWSTYLE | Nbd.FLAG_C_NO_ZEROES);
            c.option(Nbd.OPT_GO, RawClient.goData("disk0"));
            assertEquals(Nbd.REP_ERR_TLS_REQD, c.optReply().type());
        }
        Tools.require("nbdinfo", "libnbd-bin");
        String out = Tools.ok(dir, "nbdinfo", "--size",
                "nbds://127.0.0.1:" + port + "/disk0?tls-certificates=" + certs.client());
        assertEquals(Long.toString(1 << 20), out.trim());
    }

    @Test
    void badTlsSettingsGetOneLineAndChangeNothing() throws Exception {
        int port = ExportServiceTest.freePort();
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> service.export("disk0", "", null, port, false, TlsMode.REQUIRE, ""));
        assertTrue(e.getMessage().startsWith("nbd:export: ") && e.getMessage().contains("needs --tls-creds DIR"), e.getMessage());
        e = assertThrows(InvalidArgumentException.class,
                () -> service.export("disk0", "", null, port, false, TlsMode.OFF, certs.server().toString()));
        assertTrue(e.getMessage().startsWith("nbd:export: ") && e.getMessage().contains("TLS is off"), e.getMessage());
        e = assertThrows(InvalidArgumentException.class,
                () -> service.export("disk0", "", null, port, false, TlsMode.ON, dir.resolve("nope").toString()));
        assertTrue(e.getMessage().startsWith("nbd:export: ") && e.getMessage().contains("is not a directory"), e.getMessage());
        e = assertThrows(InvalidArgumentException.class, () -> TlsMode.parse("maybe"));
        assertTrue(e.getMessage().startsWith("nbd:export: ") && e.getMessage().contains("use off, on or require"), e.getMessage());
        assertTrue(stored.isEmpty());
        assertTrue(server.exports().isEmpty());
        assertFalse(devices.holders.containsKey("nbd:disk0"), "the device is not held");
        ExportServiceTest.assertNothingListens(port);
    }

    @Test
    void allowListFromTheCommandIsStoredAndEnforced() throws Exception {
        int port = ExportServiceTest.freePort();
        service.export("disk0", "", null, port, false, TlsMode.REQUIRE, certs.server().toString(), false,
                "CN=alice; CN=bob");
        ExportSpec spec = stored.values().iterator().next();
        assertEquals(List.of("CN=alice", "CN=bob"), spec.allowList());
        assertEquals(spec, ExportSpec.fromProperties(spec.toProperties()));
        Tools.require("nbdinfo", "libnbd-bin");
        Tools.ok(dir, "nbdinfo", "--size", "nbds://127.0.0.1:" + port + "/disk0?tls-certificates=" + certs.alice());
        Tools.Result r = Tools.run(dir, "nbdinfo", "--size",
                "nbds://127.0.0.1:" + port + "/disk0?tls-certificates=" + certs.mallory());
        assertTrue(r.exit() != 0, "mallory is not on the allow-list: " + r.output());
    }

    @Test
    void clientChecksNeedRequireAndAValidList() throws Exception {
        int port = ExportServiceTest.freePort();
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> service.export("disk0", "",
                null, port, false, TlsMode.ON, certs.server().toString(), true, ""));
        assertTrue(e.getMessage().startsWith("nbd:export: ") && e.getMessage().contains("need --tls=require"), e.getMessage());
        e = assertThrows(InvalidArgumentException.class, () -> service.export("disk0", "", null, port, false,
                TlsMode.REQUIRE, certs.server().toString(), false, "alice"));
        assertTrue(e.getMessage().startsWith("nbd:export: ") && e.getMessage().contains("write CN=client-name"), e.getMessage());
        assertTrue(stored.isEmpty());
        assertFalse(devices.holders.containsKey("nbd:disk0"));
    }

    @Test
    void nonLoopbackExportWithoutRequiredTlsIsWarnedAbout() throws Exception {
        java.net.InetAddress lan = java.net.InetAddress.getByName("192.0.2.10");
        java.net.InetAddress lo = java.net.InetAddress.getByName("127.0.0.1");
        String c = certs.server().toString();
        String w = ExportService.openWarning(new ExportSpec("d", "d", "192.0.2.10", 10809, false), lan);
        assertTrue(w != null && w.contains("without --tls=require") && w.contains("in plaintext"), w);
        w = ExportService.openWarning(new ExportSpec("d", "d", "192.0.2.10", 10809, false, TlsMode.ON, c, false, ""), lan);
        assertTrue(w != null && w.contains("without TLS"), w);
        assertEquals(null, ExportService.openWarning(
                new ExportSpec("d", "d", "192.0.2.10", 10809, false, TlsMode.REQUIRE, c, false, ""), lan));
        assertEquals(null, ExportService.openWarning(new ExportSpec("d", "d", "127.0.0.1", 10809, false), lo));
    }

    @Test
    void storedConfigurationWithoutTlsKeysIsPlaintext() {
        Hashtable<String, Object> p = new Hashtable<>();
        p.put("device", "disk0");
        assertEquals(TlsMode.OFF, ExportSpec.fromProperties(p).tls());
        p.put("tls", "require");
        p.put("tls-creds", "/etc/strata/tls");
        ExportSpec s = ExportSpec.fromProperties(p);
        assertEquals(TlsMode.REQUIRE, s.tls());
        assertEquals("/etc/strata/tls", s.tlsCreds());
    }
}
