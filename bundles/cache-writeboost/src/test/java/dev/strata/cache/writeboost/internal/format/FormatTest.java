package dev.strata.cache.writeboost.internal.format;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.UUID;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

class FormatTest {
    static final UUID ID = new UUID(0x0102030405060708L, 0x1112131415161718L);

    @Test
    void superblockBytesAreWhereTheDocumentSays() throws Exception {
        Superblock sb = Superblock.create(100, ID, 1L << 30, 1234567L);
        ByteBuffer b = sb.encode().order(ByteOrder.LITTLE_ENDIAN);
        assertEquals("STRATASB", new String(b.array(), 0, 8, StandardCharsets.US_ASCII));
        assertEquals(1, b.getInt(12));
        assertEquals("writeboost", new String(b.array(), 16, 10, StandardCharsets.US_ASCII));
        assertEquals(0, b.get(26));
        assertEquals(4096, b.getInt(32));
        assertEquals(1 << 20, b.getInt(36));
        assertEquals(100, b.getLong(40));
        assertEquals(1 << 20, b.getLong(48));
        assertEquals(0x0102030405060708L, b.getLong(56));
        assertEquals(0x1112131415161718L, b.getLong(64));
        assertEquals(1L << 30, b.getLong(72));
        assertEquals(1234567L, b.getLong(80));
        for (int i = 88; i < 4096; i++) {
            assertEquals(0, b.get(i), "byte " + i);
        }
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 12, 4096 - 12);
        assertEquals((int) crc.getValue(), b.getInt(8));
        // fixture: the first 16 bytes, little-endian version 1
        assertEquals("5354524154415342", HexFormat.of().formatHex(b.array(), 0, 8));
        assertEquals("01000000", HexFormat.of().formatHex(b.array(), 12, 16));
        assertEquals(sb, Superblock.decode(b));
    }

    @Test
    void everySuperblockByteFlippedIsDetected() {
        ByteBuffer good = Superblock.create(100, ID, 1L << 30, 1L).encode();
        for (int i = 0; i < 4096; i++) {
            ByteBuffer b = ByteBuffer.allocate(4096);
            b.put(0, good, 0, 4096);
            b.put(i, (byte) (b.get(i) ^ 0x01));
            final int at = i;
            FormatException e = assertThrows(FormatException.class, () -> Superblock.decode(b), "byte " + at);
            assertTrue(e.kind() == FormatException.Kind.CORRUPT || e.kind() == FormatException.Kind.FOREIGN, "byte " + at);
        }
    }

    @Test
    void superblockKinds() {
        assertEquals(FormatException.Kind.BLANK,
                assertThrows(FormatException.class, () -> Superblock.decode(ByteBuffer.allocate(4096))).kind());
        ByteBuffer foreign = ByteBuffer.allocate(4096);
        foreign.put(0, "XFSB".getBytes(StandardCharsets.US_ASCII));
        assertEquals(FormatException.Kind.FOREIGN, assertThrows(FormatException.class, () -> Superblock.decode(foreign)).kind());
        Superblock other = new Superblock(1, "writecache", 4096, 1 << 20, 100, 1 << 20, ID, 1, 1);
        assertEquals(FormatException.Kind.POLICY,
                assertThrows(FormatException.class, () -> Superblock.decode(other.encode())).kind());
        Superblock v2 = new Superblock(2, "writeboost", 4096, 1 << 20, 100, 1 << 20, ID, 1, 1);
        assertEquals(FormatException.Kind.VERSION,
                assertThrows(FormatException.class, () -> Superblock.decode(v2.encode())).kind());
        Superblock tiny = new Superblock(1, "writeboost", 4096, 1 << 20, 3, 1 << 20, ID, 1, 1);
        assertEquals(FormatException.Kind.CORRUPT,
                assertThrows(FormatException.class, () -> Superblock.decode(tiny.encode())).kind());
    }

    @Test
    void recordSlotRoundTripAndFixture() {
        SuperblockRecord r = new SuperblockRecord(7, 41, 1000, 0xCAFEBABE, 39, 990, 0x12345678, 0x55AA55AA55AA55AAL, 1234, 0x0BADF00D);
        ByteBuffer b = r.encode().order(ByteOrder.LITTLE_ENDIAN);
        assertEquals("STRATAWR", new String(b.array(), 0, 8, StandardCharsets.US_ASCII));
        assertEquals(7, b.getLong(16));
        assertEquals(41, b.getLong(24));
        assertEquals(1000, b.getLong(32));
        assertEquals(0xCAFEBABE, b.getInt(40));
        assertEquals(39, b.getLong(48));
        assertEquals(990, b.getLong(56));
        assertEquals(0x12345678, b.getInt(64));
        assertEquals(0x55AA55AA55AA55AAL, b.getLong(72));
        assertEquals(1234, b.getLong(80));
        assertEquals(0x0BADF00D, b.getInt(88));
        assertEquals(r, SuperblockRecord.decode(b, 0x55AA55AA55AA55AAL));
        assertNull(SuperblockRecord.decode(b, 1), "another cache's record");
        assertEquals(Layout.RECORD_SLOT_1, r.slotOffset());
        for (int i = 0; i < 4096; i++) {
            ByteBuffer c = ByteBuffer.allocate(4096);
            c.put(0, b, 0, 4096);
            c.put(i, (byte) (c.get(i) ^ 0x80));
            assertNull(SuperblockRecord.decode(c, 0x55AA55AA55AA55AAL), "byte " + i);
        }
        SuperblockRecord older = new SuperblockRecord(6, 40, 1, 1, 39, 1, 1, 5, 0, 0);
        assertEquals(r, SuperblockRecord.newer(older, r));
        assertEquals(r, SuperblockRecord.newer(r, null));
        assertEquals(older, SuperblockRecord.newer(null, older));
    }

    static ByteBuffer sampleHeader(int base) {
        ByteBuffer b = ByteBuffer.allocate(base + 4096 * 4);
        RecordHeader.clear(b, base);
        RecordHeader.putEntry(b, base, 0, 123456789L, 0xFF, 0, 1);
        RecordHeader.putEntry(b, base, 1, 1000L, 0, RecordHeader.ENTRY_INVALIDATE, 300);
        RecordHeader.putEntry(b, base, 2, 42L, 0x0F, RecordHeader.ENTRY_CLEAN, 1);
        for (int i = base + 4096; i < base + 3 * 4096; i++) {
            b.put(i, (byte) i);
        }
        int dataCrc = Crc.of(b, base + 4096, 2 * 4096);
        RecordHeader.seal(b, base, 0, 3, 2, 77, 5, 70, 0xABCDEF01, dataCrc, 3, 10, 0x1234, 0x99L);
        return b;
    }

    @Test
    void headerRoundTripAndFixture() {
        ByteBuffer b = sampleHeader(8192);
        ByteBuffer le = b.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        assertEquals("5357424c", HexFormat.of().formatHex(b.array(), 8192, 8196));
        assertEquals(1, le.getShort(8192 + 8));
        assertEquals(3, le.getShort(8192 + 12));
        assertEquals(2, le.getShort(8192 + 14));
        assertEquals(77, le.getLong(8192 + 16));
        assertEquals(5, le.getLong(8192 + 24));
        assertEquals(70, le.getLong(8192 + 32));
        assertEquals(0xABCDEF01, le.getInt(8192 + 40));
        assertEquals(3, le.getShort(8192 + 48));
        assertEquals(10, le.getShort(8192 + 50));
        assertEquals(0x1234, le.getInt(8192 + 52));
        assertEquals(0x99L, le.getLong(8192 + 56));
        assertEquals(123456789L, le.getLong(8192 + 64));
        assertEquals((byte) 0xFF, le.get(8192 + 72));
        assertEquals(300, le.getShort(8192 + 64 + 12 + 10));
        RecordHeader h = RecordHeader.decode(b, 8192);
        assertNotNull(h);
        assertEquals(77, h.recordId());
        assertEquals(5, h.segmentId());
        assertEquals(70, h.durableId());
        assertEquals(3, h.entryCount());
        assertEquals(2, h.dataCount());
        assertEquals(13, h.nextStart());
        assertEquals(le.getInt(8192 + 4), h.headerCrc());
        assertEquals(h.dataCrc(), Crc.of(b, 8192 + 4096, 8192));
        assertEquals(123456789L, RecordHeader.entryBlock(b, 8192, 0));
        assertEquals(RecordHeader.ENTRY_INVALIDATE, RecordHeader.entryFlags(b, 8192, 1));
        assertEquals(300, RecordHeader.entryLength(b, 8192, 1));
        assertEquals(0x0F, RecordHeader.entryValid(b, 8192, 2));
        assertEquals(RecordHeader.ENTRY_CLEAN, RecordHeader.entryFlags(b, 8192, 2));
        // the same bytes wherever the header sits
        ByteBuffer at0 = sampleHeader(0);
        assertArrayEquals(java.util.Arrays.copyOfRange(at0.array(), 0, 4096),
                java.util.Arrays.copyOfRange(b.array(), 8192, 8192 + 4096));
    }

    @Test
    void everyHeaderByteFlippedIsDetected() {
        ByteBuffer good = sampleHeader(0);
        for (int i = 0; i < 4096; i++) {
            for (int bit : new int[] {0x01, 0x80}) {
                ByteBuffer b = ByteBuffer.allocate(4096);
                b.put(0, good, 0, 4096);
                b.put(i, (byte) (b.get(i) ^ bit));
                assertNull(RecordHeader.decode(b, 0), "byte " + i + " bit " + bit);
            }
        }
    }

    @Test
    void inconsistentHeadersAreRejectedEvenWithAGoodCrc() {
        ByteBuffer b = ByteBuffer.allocate(4096);
        RecordHeader.putEntry(b, 0, 0, 1, 0xFF, 0, 1);
        // claims 2 data blocks but has one data entry
        RecordHeader.seal(b, 0, 0, 1, 2, 1, 0, 0, 0, 0, 3, 0, 0, 0);
        assertNull(RecordHeader.decode(b, 0));
        // span that does not match the data count
        RecordHeader.seal(b, 0, 0, 1, 1, 1, 0, 0, 0, 0, 5, 0, 0, 0);
        assertNull(RecordHeader.decode(b, 0));
        // crossing the end of the segment
        RecordHeader.seal(b, 0, 0, 1, 1, 1, 0, 0, 0, 0, 2, 255, 0, 0);
        assertNull(RecordHeader.decode(b, 0));
        // a pad must reach the end of the segment and have no entries
        ByteBuffer p = ByteBuffer.allocate(4096);
        RecordHeader.seal(p, 0, RecordHeader.FLAG_PAD, 0, 0, 1, 0, 0, 0, 0, 56, 200, 0, 0);
        assertNotNull(RecordHeader.decode(p, 0));
        RecordHeader.seal(p, 0, RecordHeader.FLAG_PAD, 0, 0, 1, 0, 0, 0, 0, 50, 200, 0, 0);
        assertNull(RecordHeader.decode(p, 0));
        assertEquals(Layout.SEGMENT_BLOCKS, RecordHeader.nextStart(255));
        assertEquals(254, RecordHeader.nextStart(254));
        assertEquals(336, RecordHeader.MAX_ENTRIES);
    }
}
