package dev.strata.cache.writecache.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.strata.cache.writecache.internal.recovery.Recovery;
import dev.strata.testsupport.crash.CrashableDevice;
import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Writeback batches of every size from 65 to 200 blocks of 512 bytes: the batch buffer grows
 * for each, to sizes that are not a multiple of 4096. An aligned buffer of such a size could come
 * out shorter than asked (the 512-byte crash model failed with "newLimit > capacity" on a batch of
 * 252 blocks); every batch must write back and read back as written.
 */
class WritebackBufferTest {
    @Test
    void batchesOfOddSizesWithSmallBlocks() throws Exception {
        int slots = 256;
        CrashableDevice backing = new CrashableDevice("backing", 1 << 20, 512);
        CrashableDevice cache = new CrashableDevice("cache", WritecacheSubject.cacheBytes(slots, 512), 512);
        try (WritecacheTarget t = Recovery.open("wc", backing, cache, "id", 512, true, Tunables.DEFAULTS,
                Options.defaults().manual())) {
            Random r = new Random(9);
            for (int n = 65; n <= 200; n++) {
                byte[] b = new byte[n * 512];
                r.nextBytes(b);
                long at = (long) (n % 7) * 512;
                t.write(at, ByteBuffer.wrap(b), 0);
                t.flush();
                assertEquals(n, t.writebackOldest(n), "batch of " + n);
                byte[] back = new byte[b.length];
                backing.read(at, ByteBuffer.wrap(back));
                assertArrayEquals(b, back, "backing after a batch of " + n);
            }
        }
    }
}
