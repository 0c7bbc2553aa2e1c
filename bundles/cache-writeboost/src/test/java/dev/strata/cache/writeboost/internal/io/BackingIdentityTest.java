package dev.strata.cache.writeboost.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.InvalidArgumentException;
import dev.strata.cache.writeboost.internal.format.Layout;
import dev.strata.cache.writeboost.internal.format.Superblock;
import dev.strata.cache.writeboost.internal.testing.MemDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The cache records its backing device's identity and refuses another backing device. */
class BackingIdentityTest {
    static final int MIB = 1 << 20;
    static final String A = "5f0c1c3e-8d2b-4a8e-9d47-0c6f1e2a3b4c";
    static final String B = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
    final MemDevice backing = new MemDevice("backing", 64L * MIB);
    final MemDevice cacheDev = new MemDevice("cache", 17L * MIB);

    WriteboostCache open(boolean format, String id) throws IOException {
        return WriteboostCache.open("wb", backing, cacheDev, format, Tunables.DEFAULTS,
                WriteboostCache.Options.defaults().manual(), null, id);
    }

    Superblock superblock() throws Exception {
        ByteBuffer b = ByteBuffer.allocate(4096);
        cacheDev.read(Layout.SUPERBLOCK_OFFSET, b);
        return Superblock.decode(b);
    }

    static ByteBuffer data(int v) {
        ByteBuffer b = ByteBuffer.allocate(4096);
        b.putInt(0, v);
        return b;
    }

    /** Sizes in bad-input lines are IEC, like everything else the shell shows. */
    @Test
    void aTooSmallCacheOrAnOddBackingSizeIsOneLineInIecUnits() {
        MemDevice small = new MemDevice("small", 8L * MIB);
        assertEquals("writeboost: the cache device has 8.0 MiB; at least 17 MiB are needed; use a larger cache device",
                assertThrows(InvalidArgumentException.class, () -> WriteboostCache.open("wb", backing, small, false,
                        Tunables.DEFAULTS, WriteboostCache.Options.defaults().manual(), null, A)).getMessage());
        MemDevice odd = new MemDevice("odd", 64L * MIB + 512);
        assertEquals("writeboost: the backing device's size (64.0 MiB (67,109,376 bytes)) is not a multiple of 4 KiB; "
                + "use a backing device of whole 4 KiB blocks",
                assertThrows(InvalidArgumentException.class, () -> WriteboostCache.open("wb", odd, cacheDev, false,
                        Tunables.DEFAULTS, WriteboostCache.Options.defaults().manual(), null, A)).getMessage());
        assertEquals(0, small.writes.get() + cacheDev.writes.get(), "a refused open writes nothing");
    }

    /** The same backing device (the same identity) at another size: said so, and that a format loses dirty blocks. */
    @Test
    void theSameBackingDeviceAtAnotherSizeIsRefusedSayingItsSizeChanged() throws Exception {
        WriteboostCache wb = open(false, A);
        wb.write(0, data(7), 0);
        wb.flush();
        wb.close();
        MemDevice shrunk = new MemDevice("backing", 64L * MIB - 8192);
        long before = cacheDev.writes.get();
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> WriteboostCache.open("wb",
                shrunk, cacheDev, false, Tunables.DEFAULTS, WriteboostCache.Options.defaults().manual(), null, A));
        assertEquals("writeboost: the backing device's size changed from 64.0 MiB (67,108,864 bytes) to 63.9 MiB "
                + "(67,100,672 bytes) since the cache was formatted over it (the same device, identity " + A + "); give "
                + "the backing device back its 64.0 MiB (67,108,864 bytes) to recover the cache, dirty blocks included, "
                + "or pass format=true to format it (its contents are lost, dirty blocks included)", e.getMessage());
        assertEquals(before, cacheDev.writes.get(), "a refused open writes nothing");
        WriteboostCache again = open(false, A); // the old size back: the cache and its block
        ByteBuffer got = ByteBuffer.allocate(4096);
        again.read(0, got);
        assertArrayEquals(data(7).array(), got.array());
        again.close();
    }

    @Test
    void anotherBackingDeviceIsRefusedUnlessFormatIsGiven() throws Exception {
        WriteboostCache wb = open(false, A);
        wb.write(0, data(7), 0);
        wb.flush();
        wb.close();
        assertEquals(UUID.fromString(A), superblock().backingId());
        long before = cacheDev.writes.get();
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> open(false, B));
        assertTrue(e.getMessage().contains("belongs to another backing device"), e.getMessage());
        assertTrue(e.getMessage().endsWith("pass format=true to format it (its contents are lost)"), e.getMessage());
        assertEquals(before, cacheDev.writes.get(), "a refused open writes nothing");
        // the right backing device, or a caller with no identity (tools, tests), opens it with its data
        for (String id : new String[] {A, null}) {
            WriteboostCache again = open(false, id);
            ByteBuffer got = ByteBuffer.allocate(4096);
            again.read(0, got);
            assertArrayEquals(data(7).array(), got.array());
            again.close();
        }
        // format=true over the other backing device: a new, empty cache that records it
        WriteboostCache other = open(true, B);
        assertEquals(0, other.cachedBlocks());
        other.close();
        assertEquals(UUID.fromString(B), superblock().backingId());
    }

    /** A cache formatted before identities were recorded (zeros there) opens over any backing device. */
    @Test
    void aCacheWithoutARecordedIdentityStillOpens() throws Exception {
        WriteboostCache wb = open(false, null);
        wb.write(4096, data(9), 0);
        wb.flush();
        wb.close();
        assertNull(superblock().backingId());
        WriteboostCache again = open(false, A);
        ByteBuffer got = ByteBuffer.allocate(4096);
        again.read(4096, got);
        assertArrayEquals(data(9).array(), got.array());
        again.close();
    }

    @Test
    void theIdentityRoundTripsAndIsCoveredByTheCrc() throws Exception {
        Superblock sb = Superblock.create(100, UUID.randomUUID(), 1L << 30, 5, UUID.fromString(B));
        ByteBuffer b = sb.encode();
        assertEquals(sb, Superblock.decode(b));
        assertEquals(UUID.fromString(B).getMostSignificantBits(), b.order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong(88));
        b.put(100, (byte) (b.get(100) ^ 1));
        assertThrows(dev.strata.cache.writeboost.internal.format.FormatException.class, () -> Superblock.decode(b));
        assertEquals(CacheOpener.identity("dm-7"), CacheOpener.identity(" dm-7 "), "a non-UUID identity is hashed");
    }
}
