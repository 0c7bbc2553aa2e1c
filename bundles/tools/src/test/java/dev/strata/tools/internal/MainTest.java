package dev.strata.tools.internal;

import dev.strata.tools.internal.format.*;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line over real files: exit codes, and bad input as one line with exit 2. */
class MainTest {
    @TempDir
    Path dir;

    record Out(int status, String out, String err) {
    }

    static Out main(String... args) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        int s = Main.run(args, new PrintStream(o, true, StandardCharsets.UTF_8), new PrintStream(e, true, StandardCharsets.UTF_8));
        return new Out(s, o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8));
    }

    @Test
    void checkDumpDamageRepairAndWritebackOnFiles() throws Exception {
        Images.Pair p = Images.make(new WritecacheFormat(), 3, 40, false, dev.strata.testsupport.crash.CrashMode.DROP_ALL);
        Path cache = dir.resolve("cache.img");
        Path backing = dir.resolve("backing.img");
        Files.write(cache, p.cache());
        Files.write(backing, p.backing());
        Out clean = main("check", cache.toString());
        assertEquals(0, clean.status());
        assertEquals("ok: " + cache + " holds a writecache that checks clean (its superblock and all its metadata read; "
                + dev.strata.cache.support.units.Iec.size(p.cache().length) + "; nothing written)\n", clean.out());
        Out json = main("dump", "--json", cache.toString());
        assertEquals(0, json.status(), json.err());
        assertTrue(json.out().startsWith("{\"policy\":\"writecache\""), json.out());

        byte[] damaged = p.cache().clone();
        damaged[4096 + 20] ^= 4; // an entry of metadata sector 0
        Files.write(cache, damaged);
        Out check = main("check", cache.toString());
        assertEquals(1, check.status());
        assertEquals(1, check.out().lines().count(), check.out());
        assertTrue(check.out().startsWith("metadata sector 0 (slots 0..30): byte 20 is damaged"), check.out());
        Out wbRefused = main("writeback", cache.toString(), backing.toString());
        assertEquals(1, wbRefused.status());
        assertTrue(wbRefused.out().contains("run 'strata-tool repair' first"), wbRefused.out());
        Out repair = main("repair", cache.toString());
        assertEquals(0, repair.status(), repair.out());
        assertTrue(repair.out().contains("repaired: metadata sector 0 byte 20 restored"), repair.out());
        assertTrue(repair.out().contains("nothing was lost"), repair.out());
        assertEquals(0, main("check", cache.toString()).status());

        Out wb = main("writeback", cache.toString(), backing.toString());
        assertEquals(0, wb.status(), wb.out() + wb.err());
        assertTrue(wb.out().startsWith("wrote back "), wb.out());
        assertFalse(java.util.Arrays.equals(p.backing(), Files.readAllBytes(backing)));
    }

    @Test
    void aZeroedSuperblockIsRebuiltWithTheBackingFile() throws Exception {
        Images.Pair p = Images.make(new WritecacheFormat(), 4, 40, false, dev.strata.testsupport.crash.CrashMode.DROP_ALL);
        Path cache = dir.resolve("cache.img");
        Path backing = dir.resolve("backing.img");
        byte[] damaged = p.cache().clone();
        java.util.Arrays.fill(damaged, 0, 4096, (byte) 0);
        Files.write(cache, damaged);
        Files.write(backing, p.backing());
        Out refused = main("repair", cache.toString());
        assertEquals(1, refused.status(), refused.out() + refused.err());
        assertEquals(1, refused.out().lines().count(), refused.out());
        assertTrue(refused.out().contains("pass the backing device file (strata-tool repair CACHE BACKING) or its size"), refused.out());
        assertTrue(java.util.Arrays.equals(damaged, Files.readAllBytes(cache)), "nothing was written");
        Out bad = main("repair", cache.toString(), backing.toString(), "--backing-size=4096");
        assertEquals(2, bad.status(), bad.err());
        assertTrue(bad.err().contains("differs from the backing device file's size"), bad.err());
        Out repair = main("repair", cache.toString(), backing.toString());
        assertEquals(0, repair.status(), repair.out() + repair.err());
        assertTrue(repair.out().contains("repaired: superblock rebuilt: block size 4096"), repair.out());
        assertEquals(0, main("check", cache.toString()).status());
        assertTrue(java.util.Arrays.equals(Images.contents(new WritecacheFormat(), p),
                Images.contents(new WritecacheFormat(), new Images.Pair(Files.readAllBytes(cache), p.backing()))));
    }

    @Test
    void aDeviceFileAnotherProcessHasOpenIsNotWrittenUnder() throws Exception {
        // a running Strata keeps its cache's log and record in memory: a writeback or repair under
        // it could write stale blocks to the backing device and have its record overwritten
        Images.Pair p = Images.make(new WritecacheFormat(), 3, 40, false, dev.strata.testsupport.crash.CrashMode.DROP_ALL);
        Path cache = dir.resolve("cache.img");
        Path backing = dir.resolve("backing.img");
        Files.write(cache, p.cache());
        Files.write(backing, p.backing());
        Process holder = new ProcessBuilder("sleep", "600").redirectInput(cache.toFile()).start();
        try {
            Path fd0 = Path.of("/proc", Long.toString(holder.pid()), "fd", "0");
            assertTrue(Files.isSameFile(fd0, cache), "the other process has the cache file open");
            for (String[] c : new String[][] {{"writeback", cache.toString(), backing.toString()}, {"repair", cache.toString()}}) {
                Out o = main(c);
                assertEquals(2, o.status(), o.out() + o.err());
                assertEquals(1, o.err().lines().count(), o.err());
                assertTrue(o.err().contains("is open in process " + holder.pid() + " (sleep)"), o.err());
                assertTrue(o.err().endsWith("nothing was written" + System.lineSeparator()), o.err());
            }
            assertTrue(java.util.Arrays.equals(p.cache(), Files.readAllBytes(cache)), "the cache file is untouched");
            assertTrue(java.util.Arrays.equals(p.backing(), Files.readAllBytes(backing)), "the backing file is untouched");
            Out check = main("check", cache.toString());
            assertEquals(0, check.status(), "check reads on: " + check.err());
            assertTrue(check.err().startsWith("strata-tool: warning: the cache device file"), check.err());
        } finally {
            holder.destroyForcibly().waitFor();
        }
        Out wb = main("writeback", cache.toString(), backing.toString());
        assertEquals(0, wb.status(), "once it is closed: " + wb.out() + wb.err());
    }

    @Test
    void badInputIsOneLineAndExitTwo() throws Exception {
        Path zeros = dir.resolve("zeros.img");
        Files.write(zeros, new byte[1 << 20]);
        String[][] cases = {
            {},
            {"fsck", zeros.toString()},
            {"check"},
            {"check", dir.resolve("missing.img").toString()},
            {"writeback", zeros.toString()},
            {"check", "--json", zeros.toString()},
            {"check", "--frobnicate", zeros.toString()},
            {"check", "--type=bcache", zeros.toString()},
            {"check", zeros.toString()},
            {"repair", zeros.toString(), "--backing-size=lots"},
            {"check", "--block-size=4096", zeros.toString()},
        };
        for (String[] c : cases) {
            Out o = main(c);
            String what = String.join(" ", c);
            assertEquals(2, o.status(), what + ": " + o.err());
            assertEquals(1, o.err().lines().count(), what + ": " + o.err());
            assertTrue(o.err().startsWith("strata-tool: "), what + ": " + o.err());
            assertFalse(o.err().contains("Exception"), what + ": " + o.err());
            assertEquals("", o.out(), what);
        }
    }
}
