package dev.strata.cache.readcache.internal.format;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.HexFormat;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class FormatTest {
    static final UUID ID = new UUID(0x0102030405060708L, 0x1112131415161718L);
    static final Superblock SB = new Superblock(1, 4096, 300, ID, 1L << 20, "3f2a", 1_700_000_000_000L);

    @Test
    void superblockRoundTripAndFixture() throws Exception {
        ByteBuffer b = SB.encode();
        assertEquals(SB, Superblock.decode(b));
        byte[] head = new byte[96];
        b.get(0, head);
        // the layout drawn in Superblock's Javadoc, byte for byte (CRC at 8..12)
        String expected = "5354524154415342" + HexFormat.of().formatHex(head, 8, 12) + "01000000"
                + "7265616463616368650000000000000000100000" + "00000000" + "2c01000000000000" + "0200000000000000"
                + "0030000000000000" + "0807060504030201" + "1817161514131211" + "0000100000000000" + "0068e5cf8b010000";
        assertEquals(expected, HexFormat.of().formatHex(head));
        assertEquals(4, b.get(96));
        assertEquals('3', b.get(97));
    }

    @Test
    void everySuperblockByteFlippedIsRefused() {
        ByteBuffer good = SB.encode();
        for (int i = 0; i < Layout.META_BLOCK; i++) {
            ByteBuffer b = ByteBuffer.allocate(Layout.META_BLOCK);
            b.put(0, good, 0, Layout.META_BLOCK);
            b.put(i, (byte) (b.get(i) ^ 0x5a));
            int at = i;
            FormatException e = assertThrows(FormatException.class, () -> Superblock.decode(b), "byte " + at);
            assertTrue(e.kind() == FormatException.Kind.CORRUPT || e.kind() == FormatException.Kind.FOREIGN, "byte " + i + ": " + e.kind());
        }
    }

    @Test
    void blankForeignAndOtherPolicy() {
        assertEquals(FormatException.Kind.BLANK, assertThrows(FormatException.class,
                () -> Superblock.decode(ByteBuffer.allocate(4096))).kind());
        ByteBuffer b = SB.encode();
        b.put(16, "writeboost\0\0\0\0\0\0".getBytes());
        b.putInt(8, Crc.of(b, 12, 4096 - 12));
        FormatException e = assertThrows(FormatException.class, () -> Superblock.decode(b));
        assertEquals(FormatException.Kind.POLICY, e.kind());
        assertTrue(e.getMessage().contains("writeboost"));
    }

    @Test
    void entryRoundTripAndFixture() {
        ByteBuffer m = ByteBuffer.allocate(4096);
        SlotEntry.encode(m, 257, 41, 7, SB.uuidHash());
        assertEquals(41, SlotEntry.decode(m, 257, SB.uuidHash()));
        assertEquals(7, SlotEntry.seq(m, 257));
        byte[] e = new byte[12];
        m.get(16, e);
        assertArrayEquals(HexFormat.of().parseHex("2a0000000000000007000000"), e);
        SlotEntry.encode(m, 3, SlotEntry.EMPTY, 9, SB.uuidHash());
        assertEquals(SlotEntry.EMPTY, SlotEntry.decode(m, 3, SB.uuidHash()));
        // the CRC binds the entry to its slot and to the cache's identity
        assertEquals(SlotEntry.CORRUPT, SlotEntry.decode(m, 1, SB.uuidHash()));
        assertEquals(SlotEntry.CORRUPT, SlotEntry.decode(m, 257, SB.uuidHash() + 1));
        assertEquals(SlotEntry.CORRUPT, SlotEntry.decode(ByteBuffer.allocate(4096), 0, SB.uuidHash()));
    }

    @Test
    void everyEntryByteFlippedIsDetected() {
        ByteBuffer m = ByteBuffer.allocate(4096);
        for (int s = 0; s < 256; s++) {
            SlotEntry.encode(m, s, s % 3 == 0 ? SlotEntry.EMPTY : 1000 + s, s, SB.uuidHash());
        }
        for (int i = 0; i < 4096; i++) {
            for (int bit = 0; bit < 8; bit++) {
                ByteBuffer c = ByteBuffer.allocate(4096).put(0, m, 0, 4096);
                c.put(i, (byte) (c.get(i) ^ (1 << bit)));
                assertEquals(SlotEntry.CORRUPT, SlotEntry.decode(c, i / 16, SB.uuidHash()), "byte " + i + " bit " + bit);
            }
        }
    }

    @Test
    void layoutFits() {
        Layout l = Layout.fit(4096 + 4096 + 40 * 4096, 4096);
        assertEquals(40, l.slots());
        assertEquals(8192, l.dataOffset());
        assertTrue(l.usedBytes() <= 4096 + 4096 + 40 * 4096);
        Layout big = Layout.fit(1L << 30, 4096);
        assertTrue(big.usedBytes() <= 1L << 30 && Layout.fit(big.usedBytes() + 4096 + 16, 4096).slots() >= big.slots());
        assertNull(Layout.fit(4096 * 10, 4096));
    }
}
