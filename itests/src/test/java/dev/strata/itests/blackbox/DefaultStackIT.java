package dev.strata.itests.blackbox;

import static dev.strata.itests.blackbox.Clients.MiB;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

import dev.strata.itests.StrataOptions;

/**
 * Real NBD clients against the shipped default stack: {@code wb0}, a writeboost cache
 * ({@code var/cache0.img}) in front of {@code var/backing0.img}, exported as {@code wb0}. The only
 * change to the shipped files is the export's port (10809 may be in use on a shared machine);
 * {@link #theShippedExportIsWb0OnLoopbackPort10809()} checks what ships. A 64 MiB window
 * {@code wb0w} ({@code linear} over wb0's first 64 MiB, exported too) lets nbdcopy read back
 * exactly what it wrote through wb0.
 */
public class DefaultStackIT {

    static final String EXPORT_CFG = "deploy/dev.strata.nbd.export-wb0.cfg";

    private static Strata strata;
    private static Strata.Daemon daemon;
    private static int port;

    @BeforeClass
    public static void start() throws Exception {
        strata = Strata.copy("default-stack");
        port = useFreePort(strata);
        daemon = strata.daemon("-c", "dev:create wb0w linear device=wb0 offset=0 length=64M; nbd:export wb0w --port " + port);
        Clients.awaitExports(strata.work, port, "wb0", "wb0w");
    }

    /** Points the copy's shipped export at a free port; returns it. */
    static int useFreePort(Strata s) throws Exception {
        Path cfg = s.home.resolve(EXPORT_CFG);
        String text = Files.readString(cfg);
        assertTrue(text, text.lines().anyMatch("port=10809"::equals));
        int p = Strata.freePort();
        Files.writeString(cfg, text.replace("port=10809", "port=" + p));
        return p;
    }

    @AfterClass
    public static void stop() throws Exception {
        if (daemon != null) {
            try {
                assertEquals("clean stop on SIGTERM" + daemon.diagnostics(), 0, daemon.stop());
            } finally {
                daemon.close();
            }
        }
    }

    @Test
    public void theShippedExportIsWb0OnLoopbackPort10809() throws Exception {
        List<String> lines = Files.readAllLines(StrataOptions.distribution().resolve(EXPORT_CFG));
        for (String expected : List.of("device=wb0", "name=wb0", "bind=127.0.0.1", "port=10809", "readonly=false")) {
            assertTrue(expected + " in " + lines, lines.contains(expected));
        }
        for (String device : List.of("backing0", "cache0", "wb0")) {
            assertTrue(device, Files.exists(StrataOptions.distribution().resolve("deploy/dev.strata.device-" + device + ".cfg")));
        }
    }

    @Test
    public void nbdinfoSeesWb0AndInfoSizeEqualsGoSize() throws Exception {
        Map<String, Long> all = new LinkedHashMap<>();
        all.put("wb0", 4096 * MiB);
        all.put("wb0w", 64 * MiB);
        Clients.nbdinfo(strata.work, port, "wb0", 4096 * MiB, new LinkedHashMap<>(all));
    }

    @Test
    public void qemuIoPatternsFuaFlushZeroesDiscardLastBlockAndUnalignedIo() throws Exception {
        Clients.qemuIo(strata.work, Clients.uri(port, "wb0"), 4096 * MiB, 512 * MiB);
    }

    @Test
    public void nbdcopyRoundTripsRandomDataWithFourConnections() throws Exception {
        Clients.nbdcopy(strata.work, Clients.uri(port, "wb0"), Clients.uri(port, "wb0w"), 0x3b0L);
    }

    @Test
    public void fioVerifiesRandomWritesAtQueueDepth32AndMixedSizes() throws Exception {
        Clients.fio(strata.work, Clients.uri(port, "wb0"), 128 * MiB, 64 * MiB);
    }
}
