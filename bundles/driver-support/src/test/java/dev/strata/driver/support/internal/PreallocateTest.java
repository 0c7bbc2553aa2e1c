package dev.strata.driver.support.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.InvalidArgumentException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code preallocate=true}: the bytes {@code create=true} creates or grows are written (the file
 * has no holes: its allocated blocks, read with stat(1), cover its size), with progress per 8 MiB
 * chunk; Ctrl-C between chunks puts the file back as it was; bad input is one line and creates
 * nothing.
 */
class PreallocateTest {
    static final long MIB = 1L << 20;
    @TempDir
    Path dir;

    @AfterEach
    void clear() {
        Thread.interrupted();
    }

    /** Bytes the file system allocated for {@code p} (st_blocks × 512): the JDK does not tell. */
    static long allocated(Path p) throws Exception {
        Process pr = new ProcessBuilder("stat", "-c", "%b %B", p.toString()).redirectErrorStream(true).start();
        String[] out = new String(pr.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim().split(" ");
        assertEquals(0, pr.waitFor(), String.join(" ", out));
        return Long.parseLong(out[0]) * Long.parseLong(out[1]);
    }

    private static FileSpec spec(Path p, String size, boolean preallocate) {
        return FileSpec.parse("file", Map.of("path", p.toString(), "size", size, "create", "true", "preallocate",
                Boolean.toString(preallocate)));
    }

    @Test
    void aCreatedFileHasNoHoles() throws Exception {
        Path sparse = dir.resolve("sparse.img");
        FileSpec s = spec(sparse, "20M", false);
        s.prepare(s.check());
        assertTrue(allocated(sparse) < MIB, "without it the file is sparse: " + allocated(sparse));

        Path p = dir.resolve("full.img");
        List<String> progress = new ArrayList<>();
        FileSpec f = spec(p, "20M", true);
        f.prepare(f.check(), (done, total) -> progress.add(done / MIB + "/" + total / MIB));
        assertEquals(20 * MIB, Files.size(p));
        assertTrue(allocated(p) >= 20 * MIB, "every block allocated: " + allocated(p));
        assertEquals(List.of("8/20", "16/20", "20/20"), progress);
        assertArrayEquals(new byte[(int) (20 * MIB)], Files.readAllBytes(p));
    }

    @Test
    void aGrownFileKeepsItsDataAndHasNoHolesInWhatWasAdded() throws Exception {
        Path p = dir.resolve("grow.img");
        byte[] head = new byte[(int) MIB];
        java.util.Arrays.fill(head, (byte) 7);
        Files.write(p, head);
        FileSpec f = spec(p, "12M", true);
        f.prepare(f.check());
        assertEquals(12 * MIB, Files.size(p));
        assertTrue(allocated(p) >= 12 * MIB, "every block allocated: " + allocated(p));
        byte[] all = Files.readAllBytes(p);
        assertArrayEquals(head, java.util.Arrays.copyOf(all, (int) MIB), "the old data untouched");
    }

    @Test
    void ctrlCBetweenChunksPutsTheFileBackAsItWas() throws Exception {
        Path p = dir.resolve("cut.img");
        FileSpec f = spec(p, "64M", true);
        InterruptedIOException e = assertThrows(InterruptedIOException.class, () -> f.prepare(f.check(),
                (done, total) -> Thread.currentThread().interrupt()));
        assertTrue(Thread.interrupted(), "the interrupt stays set for the caller");
        assertEquals("file: preallocation of " + p + " interrupted after 8388608 of 67108864 bytes; the file is put "
                + "back as it was", e.getMessage());
        assertFalse(Files.exists(p), "the file it created is removed");

        Path g = dir.resolve("cut-grow.img");
        Files.write(g, new byte[(int) MIB]);
        FileSpec grow = spec(g, "64M", true);
        assertThrows(InterruptedIOException.class, () -> grow.prepare(grow.check(),
                (done, total) -> Thread.currentThread().interrupt()));
        Thread.interrupted();
        assertEquals(MIB, Files.size(g), "cut back to its old length");
    }

    @Test
    void badInputIsOneLineAndCreatesNothing() throws IOException {
        Path p = dir.resolve("none.img");
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> FileSpec.parse("file",
                Map.of("path", p.toString(), "size", "1M", "create", "true", "preallocate", "maybe")));
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
        assertTrue(e.getMessage().contains("preallocate"), e.getMessage());
        e = assertThrows(InvalidArgumentException.class, () -> FileSpec.parse("file",
                Map.of("path", p.toString(), "size", "1M", "preallocate", "true")));
        assertEquals("file: preallocate=true goes with create=true (it allocates what create=true creates or grows); "
                + "an existing file is used as it is", e.getMessage());
        assertFalse(Files.exists(p));
    }
}
