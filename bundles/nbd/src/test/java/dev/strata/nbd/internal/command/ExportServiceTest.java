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
import dev.strata.nbd.testing.MemoryDevice;
import dev.strata.nbd.testing.RawClient;
import dev.strata.nbd.testing.SimpleDeviceManager;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ExportServiceTest {
    final SimpleDeviceManager devices = new SimpleDeviceManager();
    final MemoryExportStore store = new MemoryExportStore();
    final Map<String, ExportSpec> stored = store.stored;
    NbdServer server;
    ExportService service;

    @BeforeEach
    void start() {
        devices.add("disk0", new MemoryDevice(1 << 20));
        devices.add("disk1", new MemoryDevice(2 << 20));
        server = new NbdServer();
        service = new ExportService(devices, store, server, null, 20);
    }

    @AfterEach
    void stop() {
        service.close();
        server.close();
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Test
    void exportDefaultsStoresAndHoldsTheDevice() throws IOException {
        int port = freePort();
        Export e = service.export("disk0", "", null, port, false);
        assertEquals("disk0", e.name());
        assertEquals("127.0.0.1", e.bindAddress());
        assertEquals(port, e.port());
        assertEquals(List.of(new ExportSpec("disk0", "disk0", "127.0.0.1", port, false)), List.copyOf(stored.values()));
        assertEquals("disk0", devices.holders.get("nbd:disk0"));
        assertThrows(InvalidArgumentException.class, () -> devices.remove("disk0"));
        try (RawClient c = new RawClient(new InetSocketAddress("127.0.0.1", port))) {
            assertEquals(1 << 20, c.go("disk0", false, false));
        }
    }

    @Test
    void theExportOfATransientDeviceIsServedButNotStored() throws IOException {
        devices.transients.add("disk1"); // dev:create --transient: gone after a restart
        int port = freePort();
        Export e = service.export("disk1", "", null, port, false);
        assertEquals(List.of(), List.copyOf(stored.values()), "stored, it would wait for its device at every later start");
        assertFalse(service.stored("disk1"));
        try (RawClient c = new RawClient(new InetSocketAddress("127.0.0.1", port))) {
            assertEquals(2 << 20, c.go("disk1", false, false));
        }
        service.unexport(e.name());
        assertEquals("disk0", service.export("disk0", "", null, port, false).name());
        assertTrue(service.stored("disk0"));
        assertEquals(1, stored.size());
    }

    @Test
    void anInheritedExportOfAProcessNotStartedBySocketActivationListensOnItsAddress() throws IOException {
        int port = freePort();
        Export e = service.export("disk0", "", null, port, false, TlsMode.OFF, "", false, "", "", "", 0, 0, "", true);
        assertFalse(e.inherited());
        assertEquals(port, e.port());
        ExportSpec spec = stored.values().iterator().next();
        assertTrue(spec.inherited());
        assertEquals(spec, ExportSpec.fromProperties(spec.toProperties()), "inherited survives a restart");
        java.util.Hashtable<String, Object> fromFile = new java.util.Hashtable<>(Map.of("device", "disk0", "inherited", "true"));
        assertTrue(ExportSpec.fromProperties(fromFile).inherited(), "as FileInstall gives it: a string");
        fromFile.remove("inherited");
        assertFalse(ExportSpec.fromProperties(fromFile).inherited(), "off unless asked for");
        assertEquals("127.0.0.1:" + port, service.status().get(0).get("address"));
        try (RawClient c = new RawClient(new InetSocketAddress("127.0.0.1", port))) {
            assertEquals(1 << 20, c.go("disk0", false, false));
        }
    }

    @Test
    void twoExportsShareOnePortChosenByName() throws IOException {
        int port = freePort();
        service.export("disk0", "a", null, port, false);
        service.export("disk1", "b", null, port, true);
        try (RawClient c = new RawClient(new InetSocketAddress("127.0.0.1", port))) {
            assertEquals(2 << 20, c.go("b", false, false));
        }
        try (RawClient c = new RawClient(new InetSocketAddress("127.0.0.1", port))) {
            assertEquals(1 << 20, c.go("a", false, false));
            c.request(0, Nbd.CMD_WRITE, 1, 0, 4096, new byte[4096]);
            assertEquals(0, c.simple().error());
            Map<String, String> a = service.status().get(0);
            assertEquals("a", a.get("name"));
            assertEquals("1", a.get("connections"));
            assertEquals("4096", a.get("bytes_written"));
            assertEquals("serving", a.get("state"));
        }
        assertEquals("true", service.status().get(1).get("readonly"));
    }

    @Test
    void badInputStartsNothing() throws IOException {
        int port = freePort();
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> service.export("nope", "", null, port, false));
        assertTrue(e.getMessage().startsWith("nbd:export: ") && e.getMessage().contains("no device 'nope'"), e.getMessage());
        assertNothingListens(port);
        try (ServerSocket busy = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            e = assertThrows(InvalidArgumentException.class,
                    () -> service.export("disk0", "", null, busy.getLocalPort(), false));
            assertTrue(e.getMessage().startsWith("nbd:export: ") && e.getMessage().contains("cannot listen on 127.0.0.1:" + busy.getLocalPort()), e.getMessage());
        }
        assertTrue(devices.holders.isEmpty(), "the device handle was closed again");
        service.export("disk0", "x", null, port, false);
        e = assertThrows(InvalidArgumentException.class, () -> service.export("disk1", "x", null, port, false));
        assertTrue(e.getMessage().startsWith("nbd:export: ") && e.getMessage().contains("exists already"), e.getMessage());
        e = assertThrows(InvalidArgumentException.class, () -> service.export("disk1", "y", null, 70000, false));
        assertTrue(e.getMessage().startsWith("nbd:export: ") && e.getMessage().contains("out of range"), e.getMessage());
        e = assertThrows(InvalidArgumentException.class, () -> service.export("disk1", "y", "no.such.host.invalid", port, false));
        assertTrue(e.getMessage().startsWith("nbd:export: ") && e.getMessage().contains("cannot resolve"), e.getMessage());
        e = assertThrows(InvalidArgumentException.class, () -> service.unexport("y"));
        assertTrue(e.getMessage().startsWith("nbd:unexport: no export named 'y'"), e.getMessage());
        assertEquals(1, stored.size());
        assertEquals(1, server.exports().size());
    }

    @Test
    void nonLoopbackDefaultNeedsAnExplicitBind() throws IOException {
        service.close();
        service = new ExportService(devices, store, server, "0.0.0.0", 20);
        int port = freePort();
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> service.export("disk0", "", null, port, false));
        assertTrue(e.getMessage().startsWith("nbd:export: ") && e.getMessage().contains("not a loopback address"), e.getMessage());
        assertNothingListens(port);
        assertTrue(stored.isEmpty());
        Export x = service.export("disk0", "", "0.0.0.0", port, false);
        assertTrue(java.net.InetAddress.getByName(x.bindAddress()).isAnyLocalAddress(), x.bindAddress());
    }

    @Test
    void unexportStopsForgetsAndReleases() throws IOException {
        int port = freePort();
        service.export("disk0", "", null, port, false);
        RawClient c = new RawClient(new InetSocketAddress("127.0.0.1", port));
        c.go("disk0", false, false);
        service.unexport("disk0");
        assertTrue(c.closedByServer(), "connections are dropped");
        c.close();
        assertTrue(stored.isEmpty());
        assertTrue(devices.holders.isEmpty());
        assertNothingListens(port);
        devices.remove("disk0");
    }

    @Test
    void storedExportWaitsForItsDevice() throws Exception {
        int port = freePort();
        service.configured("pid-1", new ExportSpec("later", "later", "127.0.0.1", port, false));
        assertTrue(service.status().get(0).get("state").startsWith("waiting: device 'later' does not exist yet"));
        assertNothingListens(port);
        devices.add("later", new MemoryDevice(1 << 20));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!service.status().get(0).get("state").equals("serving")) {
            assertTrue(System.nanoTime() < deadline, "export never started");
            synchronized (this) {
                wait(10);
            }
        }
        try (RawClient c = new RawClient(new InetSocketAddress("127.0.0.1", port))) {
            assertEquals(1 << 20, c.go("later", false, false));
        }
        // the same configuration again changes nothing; deleting it unexports
        service.configured("pid-1", new ExportSpec("later", "later", "127.0.0.1", port, false));
        assertEquals(1, server.exports().size());
        service.deleted("pid-1");
        assertTrue(server.exports().isEmpty());
        assertNothingListens(port);
    }

    @Test
    void configurationFromFileInstallStrings() {
        java.util.Hashtable<String, Object> p = new java.util.Hashtable<>();
        p.put("device", "disk0");
        p.put("port", " 10810");
        p.put("readonly", "true");
        assertEquals(new ExportSpec("disk0", "disk0", "127.0.0.1", 10810, true), ExportSpec.fromProperties(p));
        p.put("port", "x");
        assertThrows(InvalidArgumentException.class, () -> ExportSpec.fromProperties(p));
    }

    @Test
    void commandsRenderTheTable() throws IOException {
        String t = NbdCommands.Render.table(List.of(Map.of("name", "a", "device", "dev")), List.of("name", "device"));
        assertEquals("name  device\na     dev", t);
        assertEquals("no exports", NbdCommands.Render.table(List.of(), List.of("name")));
    }

    static void assertNothingListens(int port) {
        assertThrows(ConnectException.class, () -> new java.net.Socket("127.0.0.1", port).close());
    }
}
