package dev.strata.cache.writeboost.review;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import dev.strata.cache.writeboost.internal.io.Tunables;
import dev.strata.cache.writeboost.internal.io.WriteboostCache;
import dev.strata.cache.writeboost.internal.testing.MemDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code cache:detach} is: write_around=true, writeback=all, invalidate=all, then a reload to
 * {@code linear} over the backing device, which closes the writeboost target while I/O is
 * quiesced. Client I/O keeps running until that reload. Under write_around only writes that
 * cover a whole aligned 4 KiB block bypass the cache: a sub-block write (512 B, or the unaligned
 * edge of a larger one, or a small writeZeroes) is still cached as dirty data. If one lands after
 * invalidate=all, the close must not leave it behind in a cache that is about to be detached:
 * the device becomes a linear mapping of the backing device and the write is lost.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DetachRaceReviewTest {
    static final int MIB = 1 << 20;

    @Test
    void aSubBlockWriteDuringDetachReachesTheBackingDevice() throws IOException {
        MemDevice backing = new MemDevice("backing", 64L * MIB);
        MemDevice cacheDev = new MemDevice("cache", 17L * MIB);
        Random r = new Random(7);
        WriteboostCache wb = WriteboostCache.open("wb", backing, cacheDev, false, Tunables.DEFAULTS,
                WriteboostCache.Options.defaults(), null);
        byte[] model = new byte[64 * 1024];
        try {
            byte[] first = new byte[64 * 1024];
            r.nextBytes(first);
            wb.write(0, ByteBuffer.wrap(first), 0);
            System.arraycopy(first, 0, model, 0, first.length);
            // the detach sequence of CacheCommands.detach, with client I/O still running
            wb.message(Tunables.WRITE_AROUND, "true");
            wb.message("writeback", "all");
            wb.writebackAll();
            wb.message("invalidate", "all");
            byte[] late = new byte[512];
            r.nextBytes(late);
            wb.write(4096 + 1024, ByteBuffer.wrap(late), 0); // a client's 512-byte write, acknowledged
            System.arraycopy(late, 0, model, 4096 + 1024, 512);
            byte[] edge = new byte[4096];
            r.nextBytes(edge);
            wb.write(8192 + 512, ByteBuffer.wrap(edge), 0); // unaligned: both edges are sub-block
            System.arraycopy(edge, 0, model, 8192 + 512, 4096);
        } finally {
            wb.close(); // the reload to linear: quiesce, close the old target
        }
        // the device is now 'linear device=backing'
        ByteBuffer b = ByteBuffer.allocate(model.length);
        backing.read(0, b);
        assertArrayEquals(model, Arrays.copyOf(b.array(), model.length),
                "an acknowledged write made during detach is on the backing device after the cache is closed");
    }
}
