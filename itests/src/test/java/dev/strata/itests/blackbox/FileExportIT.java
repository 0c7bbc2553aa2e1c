package dev.strata.itests.blackbox;

import static dev.strata.itests.blackbox.Clients.MiB;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * Real NBD clients against exports of plain devices of a running {@code bin/strata --daemon}
 * (no default stack): {@code f0} (file, 1 GiB) for nbdinfo, qemu-io and fio, {@code f1} (file,
 * 64 MiB) for nbdcopy, and a read-only export {@code ro} of a memory device — all on one free port.
 */
public class FileExportIT {

    private static Strata strata;
    private static Strata.Daemon daemon;
    private static int port;

    @BeforeClass
    public static void start() throws Exception {
        strata = Strata.copy("file-export");
        port = Strata.freePort();
        daemon = strata.daemon("--no-default-stack", "-c", String.join("; ",
                "dev:create f0 file path=var/f0.img size=1G create=true",
                "dev:create f1 file path=var/f1.img size=64M create=true",
                "dev:create m0 memory size=16M",
                "nbd:export f0 --port " + port,
                "nbd:export f1 --port " + port,
                "nbd:export m0 --name ro --readonly --port " + port));
        Clients.awaitExports(strata.work, port, "f0", "f1", "ro");
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
    public void nbdinfoSeesEveryExportAndInfoSizeEqualsGoSize() throws Exception {
        Map<String, Long> all = new LinkedHashMap<>();
        all.put("f0", 1024 * MiB);
        all.put("f1", 64 * MiB);
        all.put("ro", 16 * MiB);
        Clients.nbdinfo(strata.work, port, "f0", 1024 * MiB, all);
    }

    @Test
    public void qemuIoPatternsFuaFlushZeroesDiscardLastBlockAndUnalignedIo() throws Exception {
        Clients.qemuIo(strata.work, Clients.uri(port, "f0"), 1024 * MiB, 0);
    }

    @Test
    public void nbdcopyRoundTripsRandomDataWithFourConnections() throws Exception {
        Path data = Clients.nbdcopy(strata.work, Clients.uri(port, "f1"), Clients.uri(port, "f1"), 0xf1L);
        // the file device wrote through to its file (same page cache, so visible at once)
        Clients.run(strata.work, "cmp", data.toString(), strata.var("f1.img").toString()).ok();
    }

    @Test
    public void fioVerifiesRandomWritesAtQueueDepth32AndMixedSizes() throws Exception {
        Clients.fio(strata.work, Clients.uri(port, "f0"), 128 * MiB, 64 * MiB);
    }

    @Test
    public void aReadOnlyExportServesReadsAndRefusesWrites() throws Exception {
        String uri = Clients.uri(port, "ro");
        Clients.Out info = Clients.run(strata.work, "nbdinfo", "--json", uri).ok();
        assertTrue(info.toString(), Clients.flag(info.text(), "is_read_only", info));
        Clients.run(strata.work, "qemu-io", "-r", "-f", "raw", uri, "-c", "read -P 0 0 1M").ok();
        Clients.Out write = Clients.qemuIoRaw(strata.work, uri, java.util.List.of("write -P 0x42 0 4096"));
        assertTrue("a write to a read-only export fails: " + write, write.exit() != 0);
        Clients.run(strata.work, "qemu-io", "-r", "-f", "raw", uri, "-c", "read -P 0 0 4096").ok();
    }
}
