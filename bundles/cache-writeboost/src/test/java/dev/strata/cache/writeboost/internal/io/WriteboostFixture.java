package dev.strata.cache.writeboost.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.cache.writeboost.internal.testing.MemDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;

/**
 * What the writeboost cache tests share: a 64 MiB backing and a 17 MiB cache memory device, the
 * cache opened over them (closed after each test), and a byte model written, read and verified.
 */
abstract class WriteboostFixture {
    static final int MIB = 1 << 20;
    MemDevice backing = new MemDevice("backing", 64L * MIB);
    MemDevice cacheDev = new MemDevice("cache", 17L * MIB);
    WriteboostCache wb;

    @AfterEach
    void close() throws IOException {
        if (wb != null) {
            wb.close();
            assertTrue(wb.runningDaemons().isEmpty(), "no daemon survives close: " + wb.runningDaemons());
        }
    }

    WriteboostCache open(Tunables t, WriteboostCache.Options o) throws IOException {
        return WriteboostCache.open("wb", backing, cacheDev, false, t, o, null);
    }

    static Tunables noBypass() {
        return Tunables.DEFAULTS.with(Tunables.BYPASS_THRESHOLD, "0").with(Tunables.SEQUENTIAL_CUTOFF, "0");
    }

    static byte[] random(Random r, int n) {
        byte[] b = new byte[n];
        r.nextBytes(b);
        return b;
    }

    static byte[] read(BlockDevice d, long off, int len) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(len);
        d.read(off, b);
        assertEquals(len, b.position());
        return b.array();
    }

    static void write(BlockDevice d, long off, byte[] data) throws IOException {
        d.write(off, ByteBuffer.wrap(data), 0);
    }

    /** Random writes and reads against a model, any size and alignment (512). */
    void modelRun(Random r, byte[] model, int ops, int maxLen) throws IOException {
        for (int i = 0; i < ops; i++) {
            int len = (1 + r.nextInt(maxLen / 512)) * 512;
            long off = (long) r.nextInt((int) ((model.length - len) / 512)) * 512;
            if (r.nextInt(3) > 0) {
                byte[] d = random(r, len);
                write(wb, off, d);
                System.arraycopy(d, 0, model, (int) off, len);
            } else {
                assertArrayEquals(Arrays.copyOfRange(model, (int) off, (int) off + len), read(wb, off, len),
                        "read at " + off + " +" + len);
            }
            if (r.nextInt(50) == 0) {
                wb.flush();
            }
        }
    }

    void verifyAll(byte[] model) throws IOException {
        for (int off = 0; off < model.length; off += MIB) {
            assertArrayEquals(Arrays.copyOfRange(model, off, off + MIB), read(wb, off, MIB), "MiB at " + off);
        }
    }
}
