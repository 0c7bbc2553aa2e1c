package dev.strata.cache.writecache.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;

import org.junit.jupiter.api.Test;

import dev.strata.api.CacheTarget;
import dev.strata.api.InvalidArgumentException;
import dev.strata.cache.writecache.internal.io.Options;
import dev.strata.cache.writecache.internal.io.WritecacheSubject;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.target.SimpleTargetContext;

/**
 * {@code invalidate=all}, which {@code cache:detach} and {@code cache:switch} send: refused while
 * blocks are dirty (they would be lost), accepted once written back — a writecache frees a slot as
 * soon as it is written back, so a clean one holds no copy to drop.
 */
class InvalidateAllTest {
    final WritecacheFactory factory = new WritecacheFactory(Options.defaults().manual());
    final CrashableDevice backing = new CrashableDevice("slow", 1 << 20, 512);
    final CrashableDevice cache = new CrashableDevice("fast", WritecacheSubject.cacheBytes(32, 4096), 512);

    @Test
    void refusedWhileDirtyAcceptedWhenClean() throws Exception {
        CacheTarget t = (CacheTarget) factory.create(SimpleTargetContext.of("wc0", "backing=slow cache=fast")
                .with("slow", backing).with("fast", cache));
        t.write(0, ByteBuffer.allocate(4096), 0);
        t.flush();
        assertEquals(1, t.dirtyBlocks());
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> t.message(CacheTarget.Actions.INVALIDATE, CacheTarget.Actions.ALL));
        assertTrue(e.getMessage().contains("1 blocks are dirty; write them back first"), e.getMessage());
        assertEquals(1, t.dirtyBlocks(), "nothing dropped");
        assertThrows(InvalidArgumentException.class, () -> t.message(CacheTarget.Actions.INVALIDATE, "some"));
        t.writebackAll((dirty, done) -> { });
        t.message(CacheTarget.Actions.INVALIDATE, CacheTarget.Actions.ALL);
        assertEquals(0, t.cachedBlocks());
        t.close();
    }
}
