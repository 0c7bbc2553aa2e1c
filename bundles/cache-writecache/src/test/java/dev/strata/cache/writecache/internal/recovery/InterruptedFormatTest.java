package dev.strata.cache.writecache.internal.recovery;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.cache.writecache.internal.format.FormatException;
import dev.strata.cache.writecache.internal.format.Layout;
import dev.strata.cache.writecache.internal.format.Superblock;
import dev.strata.cache.writecache.internal.io.Options;
import dev.strata.cache.writecache.internal.io.Tunables;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.target.ForwardingBlockDevice;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Ctrl-C during the format of a large cache device (dev:create of a writecache over 200 GiB writes
 * its whole metadata array) stops it: before its first write the device is unchanged; after it the
 * device is left unformatted (blank superblock), never a valid superblock over a half-written
 * array, and nothing more is written once the interrupt is seen. The devices here ignore
 * interrupts (as a memory device does), so only the format's own check can stop it.
 */
class InterruptedFormatTest {
    /** 1 GiB of 4 KiB slots: 4.1 MiB of metadata, 17 writes of it; only the head is stored. */
    final BlockDevice head = new FullCacheOpenTest.HeadOnlyDevice(1L << 30, 8 << 20);
    final AtomicInteger writes = new AtomicInteger();
    /** Interrupts the writing thread after this many writes (never: -1). */
    volatile int interruptAfter = -1;
    final BlockDevice cache = new ForwardingBlockDevice(head) {
        @Override
        public void write(long offset, ByteBuffer src, int flags) throws IOException {
            super.write(offset, src, flags);
            if (writes.incrementAndGet() == interruptAfter) {
                Thread.currentThread().interrupt();
            }
        }
    };
    final CrashableDevice backing = new CrashableDevice("slow", 1 << 20, 512);
    final CrashableDevice other = new CrashableDevice("other", 2 << 20, 512);

    @AfterEach
    void clear() {
        Thread.interrupted();
    }

    private byte[] superblockBytes() throws IOException {
        ByteBuffer b = ByteBuffer.allocate(Layout.SUPERBLOCK_BYTES);
        cache.read(0, b);
        return b.array();
    }

    @Test
    void anInterruptBeforeTheFirstWriteLeavesTheDeviceAsItWas() throws Exception {
        Recovery.open("wc", other, cache, "other", 0, true, Tunables.DEFAULTS, Options.defaults().manual()).close();
        byte[] before = superblockBytes();
        int written = writes.get();
        Thread.currentThread().interrupt();
        InterruptedIOException e = assertThrows(InterruptedIOException.class, () -> Recovery.open("wc", backing,
                cache, "slow", 0, true, Tunables.DEFAULTS, Options.defaults().manual()));
        assertTrue(Thread.interrupted(), "the interrupt stays set for the caller");
        assertEquals("writecache: format interrupted before it wrote anything; the cache device is unchanged",
                e.getMessage());
        assertEquals(written, writes.get(), "not one write");
        assertArrayEquals(before, superblockBytes(), "the other backing device's cache is still there");
    }

    @Test
    void anInterruptDuringTheMetadataLeavesAnUnformattedDeviceAndStopsWriting() throws Exception {
        Recovery.open("wc", other, cache, "other", 0, true, Tunables.DEFAULTS, Options.defaults().manual()).close();
        int before = writes.get();
        interruptAfter = before + 3; // the superblock zeroed, two metadata writes (256 KiB each) of seventeen
        java.util.List<String> progress = new java.util.ArrayList<>();
        InterruptedIOException e = assertThrows(InterruptedIOException.class, () -> Recovery.open("wc", backing,
                cache, "slow", 0, true, false, Tunables.DEFAULTS, Options.defaults().manual(),
                (done, total) -> progress.add(done + "/" + total)));
        assertEquals(java.util.List.of("262144/4312576", "524288/4312576"), progress, "each metadata write, then none");
        assertTrue(Thread.interrupted(), "the interrupt stays set for the caller");
        assertEquals(before + 3, writes.get(), "nothing written after the interrupt");
        assertEquals("writecache: format interrupted after 512.0 KiB of 4.1 MiB of metadata; the cache device (1.0 GiB) "
                + "is left unformatted (its superblock zeroed), not a cache", e.getMessage());
        FormatException blank = assertThrows(FormatException.class,
                () -> Superblock.decode(ByteBuffer.wrap(superblockBytes())));
        assertEquals(FormatException.Kind.BLANK, blank.kind(), "no superblock: neither the old cache nor a new one");
        // the next create formats it anew, completely
        interruptAfter = -1;
        progress.clear();
        Recovery.open("wc", backing, cache, "slow", 0, false, false, Tunables.DEFAULTS, Options.defaults().manual(),
                (done, total) -> progress.add(done + "/" + total)).close();
        assertEquals(17, progress.size(), "a progress report per metadata write: " + progress);
        assertEquals("4312576/4312576", progress.get(16));
        assertEquals(backing.size(), Superblock.decode(ByteBuffer.wrap(superblockBytes())).backingSize());
    }
}
