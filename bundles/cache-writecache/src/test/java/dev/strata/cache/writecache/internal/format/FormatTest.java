package dev.strata.cache.writecache.internal.format;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class FormatTest {
    private static final HexFormat HEX = HexFormat.of();

    private static Superblock sample() {
        return new Superblock(1, 4096, 1000, 7, 1L << 30, "0f8e-id", 1_700_000_000_000L);
    }

    private static String hex(ByteBuffer b, int from, int to) {
        byte[] a = new byte[to - from];
        b.get(from, a);
        return HEX.formatHex(a);
    }

    @Test
    void superblockBytesAreTheDocumentedLayout() {
        ByteBuffer b = sample().encode();
        assertEquals(4096, b.remaining());
        assertEquals("5354524154415342", hex(b, 0, 8)); // STRATASB
        assertEquals("01000000", hex(b, 12, 16));
        assertEquals("7772697465636163686500000000000000", hex(b, 16, 33).substring(0, 34)); // "writecache" NUL-padded
        assertEquals("00100000" + "00000000", hex(b, 32, 40)); // block size 4096, zero
        assertEquals("e803000000000000", hex(b, 40, 48)); // 1000 slots
        assertEquals("0010000000000000", hex(b, 48, 56)); // metadata at 4096
        long data = Layout.dataOffset(4096, 1000);
        assertEquals(HEX.formatHex(java.nio.ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, data).array()), hex(b, 56, 64));
        assertEquals(24576, data); // 4096 + ceil(1000/31) = 33 sectors = 20992, rounded up to a block
        assertEquals("0700000000000000", hex(b, 64, 72));
        assertEquals("0000004000000000", hex(b, 72, 80)); // 1 GiB
        assertEquals("0700", hex(b, 88, 90));
        assertEquals("306638652d6964", hex(b, 90, 97));
        for (int i = 97; i < 4096; i++) {
            assertEquals(0, b.get(i), "byte " + i);
        }
        assertEquals(Crc.of(b, 12, 4096 - 12), b.order(ByteOrder.LITTLE_ENDIAN).getInt(8));
    }

    @Test
    void superblockRoundTrips() throws Exception {
        assertEquals(sample(), Superblock.decode(sample().encode()));
        Superblock none = new Superblock(1, 512, 1, 0, 512, null, 0);
        assertEquals("", Superblock.decode(none.encode()).backingId());
    }

    @Test
    void everySuperblockByteFlippedIsDetected() {
        ByteBuffer good = sample().encode();
        for (int i = 0; i < 4096; i++) {
            for (int bit : new int[] {0x01, 0x80}) {
                ByteBuffer b = ByteBuffer.allocate(4096);
                b.put(0, good, 0, 4096);
                b.put(i, (byte) (b.get(i) ^ bit));
                int at = i;
                FormatException e = assertThrows(FormatException.class, () -> Superblock.decode(b), "byte " + at);
                assertTrue(e.kind() == FormatException.Kind.FOREIGN || e.kind() == FormatException.Kind.CORRUPT,
                        "byte " + i + ": " + e.kind());
            }
        }
    }

    @Test
    void blankForeignPolicyAndVersionAreTold() {
        assertEquals(FormatException.Kind.BLANK,
                assertThrows(FormatException.class, () -> Superblock.decode(ByteBuffer.allocate(4096))).kind());
        ByteBuffer wb = sample().encode();
        wb.put(16, "writeboost".getBytes());
        wb.order(ByteOrder.LITTLE_ENDIAN).putInt(8, Crc.of(wb, 12, 4096 - 12));
        FormatException p = assertThrows(FormatException.class, () -> Superblock.decode(wb));
        assertEquals(FormatException.Kind.POLICY, p.kind());
        assertEquals("the cache device is formatted for the 'writeboost' policy, not writecache", p.getMessage());
        ByteBuffer v2 = sample().encode().order(ByteOrder.LITTLE_ENDIAN);
        v2.putInt(12, 2);
        v2.putInt(8, Crc.of(v2, 12, 4096 - 12));
        assertEquals(FormatException.Kind.VERSION, assertThrows(FormatException.class, () -> Superblock.decode(v2)).kind());
    }

    private static ByteBuffer sector(long index) {
        ByteBuffer b = ByteBuffer.allocate(512);
        for (int k = 0; k < Layout.ENTRIES_PER_SECTOR; k++) {
            MetadataSector.putEntry(b, 0, k, k % 3 == 0 ? MetadataSector.FREE : 100 + k, k);
        }
        MetadataSector.seal(b, 0, index);
        return b;
    }

    @Test
    void metadataSectorBytesAreTheDocumentedLayout() throws Exception {
        ByteBuffer b = sector(5);
        assertEquals("5357434d", hex(b, 0, 4)); // SWCM
        assertEquals("0500000000000000", hex(b, 8, 16));
        assertEquals("ffffffffffffffff" + "0000000000000000", hex(b, 16, 32)); // entry 0 free
        assertEquals("6500000000000000" + "0100000000000000", hex(b, 32, 48)); // entry 1: block 101, seq 1
        assertEquals(31, Layout.ENTRIES_PER_SECTOR);
        MetadataSector.check(b, 0, 5, 1000, 1000);
        assertEquals(101, MetadataSector.entryBlock(b, 0, 1));
        assertEquals(1, MetadataSector.entrySeq(b, 0, 1));
        assertEquals(MetadataSector.FREE, MetadataSector.entryBlock(b, 0, 3));
    }

    @Test
    void everyMetadataByteFlippedIsDetected() {
        ByteBuffer good = sector(2);
        for (int i = 0; i < 512; i++) {
            for (int bit : new int[] {0x01, 0x80}) {
                ByteBuffer b = ByteBuffer.allocate(512);
                b.put(0, good, 0, 512);
                b.put(i, (byte) (b.get(i) ^ bit));
                assertThrows(FormatException.class, () -> MetadataSector.check(b, 0, 2, 1000, 1000), "byte " + i);
            }
        }
    }

    @Test
    void misplacedAndImpossibleSectorsAreDetected() {
        assertThrows(FormatException.class, () -> MetadataSector.check(sector(2), 0, 3, 1000, 1000)); // wrong place
        assertThrows(FormatException.class, () -> MetadataSector.check(sector(2), 0, 2, 1000, 110)); // block past the end
        assertThrows(FormatException.class, () -> MetadataSector.check(sector(2), 0, 2, 70, 1000)); // entry past the last slot
    }

    @Test
    void layoutFitsTheDevice() {
        assertNull(Layout.fit(4096, 8192));
        assertEquals(Layout.minimumCacheBytes(4096), 3 * 4096L);
        assertEquals(1, Layout.fit(4096, 3 * 4096).slots());
        assertEquals(1, Layout.fit(512, 4096 + 1024).slots());
        for (long size = 12288; size < 40 << 20; size = size * 3 / 2 + 512) {
            for (int bs : new int[] {512, 4096}) {
                Layout l = Layout.fit(bs, size);
                if (l == null) {
                    continue;
                }
                assertTrue(l.usedBytes() <= size, size + "/" + bs);
                assertTrue(Layout.dataOffset(bs, l.slots() + 1) + (l.slots() + 1) * bs > size, "not the most slots: " + size);
                assertEquals(0, l.dataOffset() % bs);
                assertTrue(l.dataOffset() >= Layout.sectorOffset(l.metadataSectors()));
            }
        }
    }

    @Test
    void superblockEncodingIsStable() {
        assertArrayEquals(sample().encode().array(), sample().encode().array());
    }
}
