package dev.strata.cache.writeboost.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.strata.cache.writeboost.internal.testing.MemDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The backing device may hold data that is not durable yet when the target opens: writes of a
 * process that was killed (they sit in the OS page cache of a backing file), or of the stack
 * that used the backing device just before. Read caching may copy such data into the log as a
 * CLEAN entry; that record must not become durable before the data it copies, or a power cut
 * leaves a recovered clean copy that differs from the backing device, and the block changes
 * without a write when that copy is dropped.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReadCacheUnflushedBackingAtOpenCrashTest {
    static final int MIB = 1 << 20;
    static final int BS = 4096;

    static Tunables tunables() {
        return Tunables.DEFAULTS.with(Tunables.READ_CACHE_THRESHOLD, "1").with(Tunables.SEQUENTIAL_CUTOFF, "0")
                .with(Tunables.IO_TIMEOUT, "20000");
    }

    static byte[] read(WriteboostCache wb, long block) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(BS);
        wb.read(block * BS, b);
        return b.array();
    }

    @Test
    void aCleanCopyOfDataThatWasNotDurableAtOpenIsNotDurableBeforeThatData() throws IOException {
        MemDevice backingMem = new MemDevice("backing", 16L * MIB);
        byte[] old = new byte[16 * BS];
        new Random(1).nextBytes(old);
        backingMem.write(0, ByteBuffer.wrap(old), 0);
        backingMem.flush();
        MemDevice cacheDev = new MemDevice("cache", 17L * MIB);
        WriteboostCache.open("wb", backingMem, cacheDev, false, tunables(), WriteboostCache.Options.defaults().manual(),
                null).close();
        // what a killed process left behind: written, not flushed
        byte[] x = new byte[BS];
        new Random(2).nextBytes(x);
        backingMem.write(5L * BS, ByteBuffer.wrap(x), 0);

        WriteboostCache wb = WriteboostCache.open("wb", backingMem, cacheDev, false, tunables(),
                WriteboostCache.Options.defaults().manual(), null);
        assertArrayEquals(x, read(wb, 5));
        for (int i = 0; i < 100 && wb.injectorRunOnce(); i++) {
            // inject what was staged
        }
        assertEquals("1", wb.status().get("read_cache_injected"));
        // the record becomes durable without a client flush (as the periodic superblock record update does it)
        wb.updateRecord(Long.MIN_VALUE);
        // power cut: the cache device keeps what was flushed; the backing device loses its
        // unflushed writes (take an outcome where block 5 lost it, if there is such an outcome)
        MemDevice cacheAfter = cacheDev.copy();
        MemDevice backingAfter = null;
        Random seeds = new Random(3); // (the first draws of Randoms with small seeds are alike)
        for (int i = 0; i < 64; i++) {
            backingAfter = backingMem.crash(new Random(seeds.nextLong()));
            byte[] b5 = new byte[BS];
            backingAfter.read(5L * BS, ByteBuffer.wrap(b5));
            if (Arrays.equals(b5, Arrays.copyOfRange(old, 5 * BS, 6 * BS))) {
                break;
            }
        }
        wb.close();

        WriteboostCache wb2 = WriteboostCache.open("wb", backingAfter, cacheAfter, false, tunables(),
                WriteboostCache.Options.defaults().manual(), null);
        byte[] afterCrash = read(wb2, 5);
        // drop every clean copy (as cache:detach does) and start again: no write in between
        wb2.message("invalidate", "all");
        wb2.close();
        WriteboostCache wb3 = WriteboostCache.open("wb", backingAfter, cacheAfter, false, tunables(),
                WriteboostCache.Options.defaults().manual(), null);
        try {
            assertArrayEquals(afterCrash, read(wb3, 5),
                    "block 5 changed without a write: its recovered clean copy was not what the backing device held");
        } finally {
            wb3.close();
        }
    }
}
