package dev.strata.cache.writeboost.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.strata.api.DeviceIOException;
import dev.strata.cache.writeboost.internal.testing.MemDevice;
import dev.strata.testsupport.target.ForwardingBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A bypassed write that fails after (part of) its data reached the backing device's volatile
 * cache: a read then finds that data, read caching copies it into the log as a CLEAN entry, and
 * the record must not become durable before the backing data it copies (docs/formats: "a CLEAN
 * entry never claims data the backing device does not hold"). Otherwise a power cut leaves a
 * recovered clean copy that differs from the backing device, and the block's contents change
 * without a write when that copy is dropped.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReadCacheFailedBypassCrashTest {
    static final int MIB = 1 << 20;
    static final int BS = 4096;

    static Tunables tunables() {
        return Tunables.DEFAULTS.with(Tunables.READ_CACHE_THRESHOLD, "1").with(Tunables.BYPASS_THRESHOLD, "8k")
                .with(Tunables.SEQUENTIAL_CUTOFF, "0").with(Tunables.IO_TIMEOUT, "20000");
    }

    static byte[] read(WriteboostCache wb, long block) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(BS);
        wb.read(block * BS, b);
        return b.array();
    }

    @Test
    void aCleanCopyOfDataLeftByAFailedBypassIsNotDurableBeforeThatData() throws IOException {
        MemDevice backingMem = new MemDevice("backing", 16L * MIB);
        byte[] old = new byte[16 * BS];
        new Random(1).nextBytes(old);
        backingMem.write(0, ByteBuffer.wrap(old), 0);
        backingMem.flush();
        boolean[] failAfterWrite = {false};
        // a write request that lands and then reports an error (a timeout, a lost completion)
        ForwardingBlockDevice backing = new ForwardingBlockDevice(backingMem) {
            @Override
            public void write(long offset, ByteBuffer src, int flags) throws IOException {
                super.write(offset, src, flags);
                if (failAfterWrite[0]) {
                    throw new DeviceIOException("backing", offset, "injected error after the write landed");
                }
            }
        };
        MemDevice cacheDev = new MemDevice("cache", 17L * MIB);
        WriteboostCache wb = WriteboostCache.open("wb", backing, cacheDev, false, tunables(),
                WriteboostCache.Options.defaults().manual(), null);
        byte[] y = new byte[2 * BS];
        new Random(2).nextBytes(y);
        failAfterWrite[0] = true;
        assertThrows(IOException.class, () -> wb.write(4L * BS, ByteBuffer.wrap(y), 0), "bypassed, and failed");
        failAfterWrite[0] = false;
        assertArrayEquals(Arrays.copyOfRange(y, BS, 2 * BS), read(wb, 5), "the data landed");
        for (int i = 0; i < 100 && wb.injectorRunOnce(); i++) {
            // inject what was staged
        }
        assertEquals("1", wb.status().get("read_cache_injected"));
        wb.flush();
        // power cut: the cache device keeps what was flushed; the backing device loses its
        // unflushed writes (take an outcome where block 5 lost it, if there is such an outcome)
        MemDevice cacheAfter = cacheDev.copy();
        MemDevice backingAfter = null;
        for (int seed = 0; seed < 64; seed++) {
            backingAfter = backingMem.crash(new Random(seed));
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
