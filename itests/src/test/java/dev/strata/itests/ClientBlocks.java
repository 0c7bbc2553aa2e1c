package dev.strata.itests;

import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;

/**
 * Blocks a connected NBD client writes through a live change and reads back: block {@code i} of
 * 4 KiB at {@code base + i × 4096}, filled with {@code fill + i}. Also how the live-change tests
 * compare {@code dev:table} lines (the store keeps no argument order).
 */
final class ClientBlocks {
    private final long base;
    private final int fill;

    ClientBlocks(long base, int fill) {
        this.base = base;
        this.fill = fill;
    }

    long offset(int i) {
        return base + i * 4096L;
    }

    byte[] block(int i) {
        byte[] b = new byte[4096];
        Arrays.fill(b, (byte) (fill + i));
        return b;
    }

    /** Block {@code i}, written, flushed and read back within 30 s. */
    void served(NbdWire wire, int i, String after) throws IOException {
        long t0 = System.nanoTime();
        wire.write(offset(i), block(i));
        wire.flush();
        assertTrue("block " + i + " read back after " + after, Arrays.equals(block(i), wire.read(offset(i), 4096)));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue("the connected client was served after " + after + " (took " + ms + " ms)", ms < 30_000);
    }

    /** Whether block {@code i} reads back as written. */
    boolean holds(NbdWire wire, int i) throws IOException {
        return Arrays.equals(block(i), wire.read(offset(i), 4096));
    }

    /** The {@code dev:table} line of {@code name}, its arguments sorted. */
    static String tableOf(String table, String name) {
        String line = table.lines().filter(l -> l.startsWith(name + " ")).findFirst()
                .orElseThrow(() -> new AssertionError("no " + name + " in dev:table: " + table)).strip();
        return String.join(" ", new TreeSet<>(List.of(line.split("\\s+"))));
    }
}
