package dev.strata.cache.readcache.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.strata.api.CacheTarget;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.ReadCachePolicy;
import dev.strata.readcache.policies.internal.LruPolicy;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.target.SimpleTargetContext;

/**
 * {@code invalidate=all} (the cache API's action, used before a cache is detached or switched away
 * from): every cached copy dropped, durably — a readcache reopened over the same devices holds none,
 * and reads still return the origin's data.
 */
class InvalidateAllTest {
    final ReadcacheFactory factory = new ReadcacheFactory();
    final CrashableDevice origin = new CrashableDevice("o", 1 << 20, 4096);
    final CrashableDevice cache = new CrashableDevice("c", 8192 + 64 * 4096, 4096);

    InvalidateAllTest() {
        factory.addPolicy(new LruPolicy(), Map.of(ReadCachePolicy.NAME, "lru"));
    }

    CacheTarget open() throws Exception {
        return (CacheTarget) factory.create(SimpleTargetContext.of("rc0", "origin=o cache=c policy=lru")
                .with("o", origin).with("c", cache));
    }

    @Test
    void everyCopyIsDroppedDurably() throws Exception {
        ByteBuffer b = ByteBuffer.allocate(4096);
        for (int block = 0; block < 16; block++) {
            b.clear();
            while (b.hasRemaining()) {
                b.put((byte) (block + 1));
            }
            origin.write(block * 4096L, b.flip(), 0);
        }
        origin.flush();
        CacheTarget t = open();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (t.cachedBlocks() < 16) {
            if (System.nanoTime() > deadline) {
                fail("reads were not promoted: " + t.cachedBlocks());
            }
            for (int block = 0; block < 16; block++) {
                t.read(block * 4096L, b.clear());
            }
            t.flush(); // promotions become durable (recorded) with the origin's flush
        }
        assertThrows(InvalidArgumentException.class, () -> t.message(CacheTarget.Actions.INVALIDATE, "some"));
        t.message(CacheTarget.Actions.INVALIDATE, CacheTarget.Actions.ALL);
        assertEquals(0, t.cachedBlocks());
        t.close();
        CacheTarget again = open();
        assertEquals(0, again.cachedBlocks(), "the invalidation was durable");
        for (int block = 0; block < 16; block++) {
            again.read(block * 4096L, b.clear());
            assertTrue(b.get(0) == block + 1 && b.get(4095) == block + 1, "block " + block + " reads the origin's data");
        }
        again.close();
    }
}
