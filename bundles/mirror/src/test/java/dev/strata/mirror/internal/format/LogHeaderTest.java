package dev.strata.mirror.internal.format;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

class LogHeaderTest {
    static final LogHeader SAMPLE = new LogHeader(2, 65536, 100, 7, 0b01, 0x0102030405060708L);

    /** The fixture: every field at its documented offset, little endian, CRC32C of bytes 0..4091 at 4092. */
    @Test
    void encodesTheDocumentedBytes() {
        byte[] b = new byte[LogLayout.HEADER_SIZE];
        SAMPLE.encode().get(b);
        byte[] expected = new byte[LogLayout.HEADER_SIZE];
        System.arraycopy(new byte[] {'S', 'T', 'R', 'M', 'I', 'R', 'L', 'G',
            1, 0, 0, 0, // version
            2, 0, 0, 0, // legs
            0, 0, 1, 0, 0, 0, 0, 0, // region size 65536
            100, 0, 0, 0, 0, 0, 0, 0, // regions
            7, 0, 0, 0, 0, 0, 0, 0, // sequence
            1, 0, 0, 0, // in-sync mask: leg 0 only
            8, 7, 6, 5, 4, 3, 2, 1}, 0, expected, 0, 52); // legs identity
        CRC32C crc = new CRC32C();
        crc.update(expected, 0, 4092);
        ByteBuffer.wrap(expected).order(ByteOrder.LITTLE_ENDIAN).putInt(4092, (int) crc.getValue());
        assertArrayEquals(expected, b);
    }

    @Test
    void roundTrips() throws FormatException {
        LogHeader h = LogHeader.decode(SAMPLE.encode());
        assertEquals(SAMPLE, h);
        assertTrue(h.inSync(0));
        assertTrue(!h.inSync(1));
    }

    @Test
    void everyFlippedByteIsDetected() {
        byte[] good = new byte[LogLayout.HEADER_SIZE];
        SAMPLE.encode().get(good);
        for (int i = 0; i < good.length; i++) {
            byte[] bad = good.clone();
            bad[i] ^= (byte) 0x5a;
            int at = i;
            assertThrows(FormatException.class, () -> LogHeader.decode(ByteBuffer.wrap(bad)), "byte " + at);
        }
    }

    @Test
    void blankIsRecognisedAndNotDecoded() {
        ByteBuffer blank = ByteBuffer.allocate(LogLayout.HEADER_SIZE);
        assertTrue(LogHeader.isBlank(blank));
        FormatException e = assertThrows(FormatException.class, () -> LogHeader.decode(blank));
        assertEquals("no mirror log magic", e.getMessage());
        byte[] b = new byte[LogLayout.HEADER_SIZE];
        Arrays.fill(b, (byte) 0);
        b[4000] = 1;
        assertTrue(!LogHeader.isBlank(ByteBuffer.wrap(b)));
    }

    @Test
    void legsIdentity() {
        assertEquals(0, LogHeader.legsId(java.util.Arrays.asList("u1", null)));
        assertTrue(LogHeader.legsId(java.util.List.of("u1", "u2")) != LogHeader.legsId(java.util.List.of("u2", "u1")));
        assertEquals(LogHeader.legsId(java.util.List.of("u1", "u2")), LogHeader.legsId(java.util.List.of("u1", "u2")));
    }

    @Test
    void layoutSizes() {
        assertEquals(4096, LogLayout.bitmapBytes(1));
        assertEquals(4096, LogLayout.bitmapBytes(32768));
        assertEquals(8192, LogLayout.bitmapBytes(32769));
        assertEquals(8192 + 4096, LogLayout.deviceBytes(100));
    }
}
