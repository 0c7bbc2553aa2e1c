package dev.strata.readcache.policies.replay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The replay tool (itests/bench/readcache/replay.sh) against hand-computed tiny traces. */
class ReplayTest {
    /**
     * Keys in order: 0 1 | 1 2 | 0 | 2 (6 keys, 3 distinct). LRU with 2 keys: 0 miss, 1 miss,
     * 1 hit, 2 miss (evicts 0), 0 miss (evicts 1), 2 hit → 2 hits of 6 = 33.33 %. With 3 keys:
     * 0, 1 miss, 1 hit, 2 miss, 0 hit, 2 hit → 50.00 %. With 1 key: only the 1 after 1 hits →
     * 16.67 %.
     */
    private static final String TINY = "0 2 0 0\n1 2 0 1\n\n0 1 0 2\n   2 1 0 3\n";

    @TempDir
    Path dir;

    private String[] run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = Replay.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new String[] {Integer.toString(rc), out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8)};
    }

    @Test
    void lruOfATinyTraceIsTheHandComputedRatio() throws IOException {
        Path t = Files.writeString(dir.resolve("tiny.lis"), TINY);
        String[] r = run(t.toString(), "--sizes", "1,2,3", "--policy", "ref-lru,lru");
        assertEquals("0", r[0], r[2]);
        assertEquals("ref-lru 1 16.67\nref-lru 2 33.33\nref-lru 3 50.00\nlru 1 16.67\nlru 2 33.33\nlru 3 50.00\n", r[1]);
    }

    @Test
    void arcOfTheTinyTraceAndGzipAndPercentSizes() throws IOException {
        Path gz = dir.resolve("tiny.lis.gz");
        try (OutputStream o = new GZIPOutputStream(Files.newOutputStream(gz))) {
            o.write(TINY.getBytes(StandardCharsets.US_ASCII));
        }
        // ARC with 2 keys: 0, 1 into T1; 1 hit → T2; 2 misses: REPLACE moves 0 to B1; 0 is a B1
        // ghost hit (p = 1), REPLACE moves 1 from T2 to B2, 0 enters T2; 2 hits → 2 of 6.
        String[] r = run(gz.toString(), "--sizes=67%", "--policy=arc");
        assertEquals("0", r[0], r[2]);
        assertEquals("arc 2 33.33\n", r[1]);
        assertTrue(r[2].contains("3 distinct"), r[2]);
    }

    @Test
    void shippedLruMatchesExactLruAndArcBeatsLruOnALoopingTrace() throws IOException {
        StringBuilder sb = new StringBuilder();
        Random rnd = new Random(3);
        for (int i = 0; i < 20_000; i++) { // a hot zipf-ish set and a loop larger than the cache
            long start = rnd.nextInt(3) == 0 ? (i % 700) * 8L + 100_000 : (long) Math.abs(rnd.nextGaussian() * 300);
            sb.append(start).append(' ').append(1 + rnd.nextInt(4)).append(" 0 ").append(i).append('\n');
        }
        Path t = Files.writeString(dir.resolve("mixed.lis"), sb.toString());
        String[] r = run(t.toString(), "--sizes", "500", "--policy", "ref-lru,lru,arc");
        assertEquals("0", r[0], r[2]);
        String[] lines = r[1].split("\n");
        assertEquals(3, lines.length);
        assertEquals(lines[0].substring("ref-lru".length()), lines[1].substring("lru".length()),
                "the shipped LRU is exact LRU");
        double lru = Double.parseDouble(lines[1].split(" ")[2]);
        double arc = Double.parseDouble(lines[2].split(" ")[2]);
        assertTrue(arc > lru, "ARC " + arc + " vs LRU " + lru);
    }

    @Test
    void badInputIsOneLineAndExitStatusTwo() throws IOException {
        Path bad = Files.writeString(dir.resolve("bad.lis"), "0 2 0 0\n12 x 0 1\n");
        String[] r = run(bad.toString(), "--sizes", "2");
        assertEquals("2", r[0]);
        assertEquals("", r[1]);
        assertEquals("replay: " + bad + " line 2: expected 'start nblocks ignore reqno', got '12 x 0 1'\n", r[2]);

        r = run(bad.toString(), "--sizes", "2", "--policy", "fifo");
        assertEquals("2", r[0]);
        assertEquals("replay: unknown policy 'fifo'; known: ref-lru, arc, wtinylfu, nhit, lru\n", r[2]);

        r = run(dir.resolve("missing.lis").toString(), "--sizes", "2");
        assertEquals("replay: " + dir.resolve("missing.lis") + ": no such trace file\n", r[2]);

        r = run(bad.toString(), "--sizes", "0");
        assertTrue(r[2].startsWith("replay: size '0' is not a positive number"), r[2]);

        r = run(bad.toString(), "--sizes", "2", "--policy", "wtinylfu:window=200");
        assertEquals("replay: wtinylfu: window=200 is out of range; use 0 to 100\n", r[2]);

        r = run(bad.toString());
        assertEquals("2", r[0]);
        assertTrue(r[2].startsWith("replay: no --sizes given; usage:"), r[2]);
        assertFalse(r[2].contains("Exception"));
    }
}
