package dev.strata.nbd.internal.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.InvalidArgumentException;
import dev.strata.nbd.internal.server.Export;
import dev.strata.nbd.internal.server.NbdServer;
import dev.strata.nbd.internal.session.TlsMode;
import dev.strata.nbd.testing.MemoryDevice;
import dev.strata.nbd.testing.PskFiles;
import dev.strata.nbd.testing.SimpleDeviceManager;
import dev.strata.nbd.testing.Tools;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code nbd:export --tls require --tls-psk FILE}: validation, what is stored, the running export, bad key files. */
class PskExportTest {
    @TempDir
    static Path dir;
    static PskFiles keys;
    @TempDir
    Path tmp;
    final SimpleDeviceManager devices = new SimpleDeviceManager();
    final MemoryExportStore store = new MemoryExportStore();
    final Map<String, ExportSpec> stored = store.stored;
    NbdServer server;
    ExportService service;

    @BeforeAll
    static void make() throws Exception {
        keys = PskFiles.make(dir);
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

    private Export export(String psk) throws Exception {
        return service.export("disk0", "", null, ExportServiceTest.freePort(), false, TlsMode.REQUIRE, "", false, "",
                "", "", 0, 0, psk, false);
    }

    @Test
    void pskExportIsStoredAndServesItsUsers() throws Exception {
        Tools.require("nbdinfo", "libnbd-bin");
        Export e = export(PskFiles.file(keys.server()).toString());
        ExportSpec spec = stored.values().iterator().next();
        assertEquals(PskFiles.file(keys.server()).toString(), spec.tlsPsk());
        assertEquals(spec, ExportSpec.fromProperties(spec.toProperties()), "the PSK setting survives a restart");
        String size = Tools.ok(tmp, "nbdinfo", "--size", "nbds://alice@127.0.0.1:" + e.port() + "/disk0?tls-psk-file="
                + PskFiles.file(keys.alice()));
        assertEquals("1048576", size.trim());
    }

    @Test
    void contradictoryOptionsAreRefusedAndStartNothing() {
        String file = PskFiles.file(keys.server()).toString();
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> service.export("disk0", "",
                null, 10809, false, TlsMode.REQUIRE, "/etc", false, "", "", "", 0, 0, file, false));
        assertTrue(e.getMessage().startsWith("nbd:export: ") && e.getMessage().contains("not both"), e.getMessage());
        e = assertThrows(InvalidArgumentException.class, () -> service.export("disk0", "", null, 10809, false,
                TlsMode.REQUIRE, "", false, "CN=alice", "", "", 0, 0, file, false));
        assertTrue(e.getMessage().startsWith("nbd:export: ") && e.getMessage().contains("users in the key file"), e.getMessage());
        e = assertThrows(InvalidArgumentException.class, () -> service.export("disk0", "", null, 10809, false,
                TlsMode.OFF, "", false, "", "", "", 0, 0, file, false));
        assertTrue(e.getMessage().startsWith("nbd:export: ") && e.getMessage().contains("TLS is off"), e.getMessage());
        assertTrue(stored.isEmpty());
        assertTrue(service.status().isEmpty());
    }

    @Test
    void badKeyFilesAreRefusedWithOneLine() throws Exception {
        Map<String, String> cases = new LinkedHashMap<>();
        cases.put("alice\n", "line 1 is not username:hexkey");
        cases.put("alice:xyz\n", "line 1 is not username:hexkey");
        cases.put("alice:00ff\n\nalice:0102\n", "line 3 repeats user 'alice'");
        cases.put("\n", "holds no key");
        int i = 0;
        for (Map.Entry<String, String> c : cases.entrySet()) {
            Path f = Files.writeString(tmp.resolve("bad" + i++ + ".psk"), c.getKey());
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> export(f.toString()));
            assertTrue(e.getMessage().startsWith("nbd:export: ") && e.getMessage().contains(c.getValue()) && !e.getMessage().contains("\n"), e.getMessage());
        }
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> export(tmp.resolve("missing.psk").toString()));
        assertTrue(e.getMessage().startsWith("nbd:export: ") && e.getMessage().contains("does not exist; make one with psktool"), e.getMessage());
        e = assertThrows(InvalidArgumentException.class, () -> export(tmp.toString()));
        assertTrue(e.getMessage().startsWith("nbd:export: ") && e.getMessage().contains("keys.psk does not exist"), "a directory stands for its keys.psk: "
                + e.getMessage());
        assertTrue(stored.isEmpty());
    }
}
