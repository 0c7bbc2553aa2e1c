package dev.strata.itests.blackbox;

import static dev.strata.itests.blackbox.Clients.MiB;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import org.junit.Test;

/**
 * Data written through the default stack's {@code wb0} export survives {@code bin/strata} being
 * stopped and started again, and {@code cache:writeback wb0} puts exactly those bytes into
 * {@code var/backing0.img}.
 *
 * <p>Background writeback is turned off for the first run ({@code cache:set wb0
 * writeback_threshold 0}), so at the first stop the data lives only in the cache's log
 * ({@code var/cache0.img}) — checked on the backing file — and the second run must recover it
 * from there.
 */
public class WriteboostPersistenceIT {

    private static final long WINDOW = 64 * MiB;

    @Test
    public void dataWrittenThroughWb0SurvivesARestartAndWritebackPutsItOnTheBackingFile() throws Exception {
        Strata strata = Strata.copy("wb-persistence");
        int port = DefaultStackIT.useFreePort(strata);
        Path dir = strata.work;
        String wb0 = Clients.uri(port, "wb0");
        String window = Clients.uri(port, "wb0w");

        // 1. scattered random writes (512 B .. 192 KiB, sector-aligned, some overlapping) through wb0
        byte[] expected = new byte[(int) WINDOW];
        List<String> writes = new ArrayList<>();
        Random r = new Random(0x5eed);
        for (int i = 0; i < 80; i++) {
            int len = 512 * (1 + r.nextInt(384));
            long off = 512L * r.nextInt((int) ((WINDOW - len) / 512));
            byte[] chunk = new byte[len];
            r.nextBytes(chunk);
            Path f = dir.resolve("chunk-" + i + ".bin");
            Files.write(f, chunk);
            System.arraycopy(chunk, 0, expected, (int) off, len);
            writes.add("write -s " + f + " " + off + " " + len);
        }
        writes.add("flush");
        Path expectedImg = dir.resolve("expected.img");
        Files.write(expectedImg, expected);

        try (Strata.Daemon first = strata.daemon("-c", String.join("; ",
                "cache:set wb0 writeback_threshold 0",
                "dev:create wb0w linear device=wb0 offset=0 length=64M",
                "nbd:export wb0w --port " + port))) {
            Clients.awaitExports(dir, port, "wb0", "wb0w");
            Clients.qemuIoScript(dir, wb0, writes);
            compare(dir, expectedImg, window);
            assertEquals("clean stop" + first.diagnostics(), 0, first.stop());
        }
        assertFalse("with background writeback off, the data is only in the cache log at the first stop",
                Arrays.equals(expected, head(strata.var("backing0.img"))));

        // 2. a new start recovers the log: the same bytes are read back
        try (Strata.Daemon second = strata.daemon()) {
            Clients.awaitExports(dir, port, "wb0", "wb0w");
            compare(dir, expectedImg, window);
            assertEquals("clean stop" + second.diagnostics(), 0, second.stop());
        }

        // 3. write everything back, then the backing file holds exactly what was written
        Strata.Result wb = strata.run("-c", "cache:writeback wb0; cache:stats --all --bytes wb0");
        assertEquals(wb.toString(), 0, wb.exit());
        assertTrue(wb.toString(), wb.out().contains("wb0: clean"));
        assertTrue(wb.toString(), wb.out().lines().anyMatch(l -> l.matches("\\s*dirty_blocks\\s+0")));
        Clients.run(dir, "cmp", "-n", Long.toString(WINDOW), expectedImg.toString(), strata.var("backing0.img").toString()).ok();
    }

    /** qemu-img compare: the window export shows exactly the expected image. */
    private static void compare(Path dir, Path expectedImg, String window) throws Exception {
        Clients.run(dir, "qemu-img", "compare", "-f", "raw", "-F", "raw", expectedImg.toString(), window).ok();
    }

    private static byte[] head(Path file) throws IOException {
        byte[] b = new byte[(int) WINDOW];
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
            f.readFully(b);
        }
        return b;
    }
}
