package dev.strata.testsupport.crash;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceIOException;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CrashableDeviceTest {

    private static ByteBuffer sectors(long writeId, int first, int n) {
        return Patterns.buffer(Patterns.tokens(writeId, first, n));
    }

    @Test
    void volatileWritesAreReadableAndLostOnDropAll() throws Exception {
        CrashableDevice d = new CrashableDevice("d", 8192, 512);
        d.write(0, sectors(1, 0, 2), 0);
        assertArrayEquals(Patterns.tokens(1, 0, 2), Patterns.read(d, 0, 2));
        d.crash(CrashMode.DROP_ALL, new Random(1));
        CrashableDevice after = d.restart();
        assertArrayEquals(new long[2], Patterns.read(after, 0, 2));
    }

    @Test
    void flushAndFuaMakeDurable() throws Exception {
        CrashableDevice d = new CrashableDevice("d", 8192, 512);
        d.write(0, sectors(1, 0, 1), 0);
        d.flush();
        d.write(512, sectors(2, 1, 1), BlockDevice.FUA);
        d.write(1024, sectors(3, 2, 1), 0);
        d.crash(CrashMode.DROP_ALL, new Random(1));
        long[] t = Patterns.read(d.restart(), 0, 3);
        assertEquals(SectorPattern.token(1, 0), t[0]);
        assertEquals(SectorPattern.token(2, 1), t[1]);
        assertEquals(SectorPattern.ZERO, t[2]);
    }

    @Test
    void fuaSupersedesOlderVolatileCopies() throws Exception {
        CrashableDevice d = new CrashableDevice("d", 8192, 512);
        d.write(0, sectors(1, 0, 1), 0);
        d.write(0, sectors(2, 0, 1), BlockDevice.FUA);
        d.crash(CrashMode.KEEP_ALL, new Random(1));
        assertEquals(SectorPattern.token(2, 0), Patterns.read(d.restart(), 0, 1)[0]);
    }

    @Test
    void tornWriteKeepsAPrefixOrSuffixAtASectorBoundary() throws Exception {
        int torn = 0;
        for (int seed = 0; seed < 20; seed++) {
            CrashableDevice d = new CrashableDevice("d", 8192, 512);
            d.write(0, sectors(1, 0, 8), 0);
            d.crash(CrashMode.TORN, new Random(seed));
            long[] t = Patterns.read(d.restart(), 0, 8);
            int written = 0;
            for (int i = 0; i < 8; i++) {
                assertTrue(t[i] == 0 || t[i] == SectorPattern.token(1, i));
                written += t[i] == 0 ? 0 : 1;
            }
            assertTrue(written > 0 && written < 8, "a torn write keeps some but not all sectors");
            boolean prefix = t[0] != 0;
            for (int i = 1; i < 8; i++) {
                // contiguous: once the kept part ends (prefix) or starts (suffix) it does not flip back
                if (prefix && t[i] != 0) {
                    assertTrue(t[i - 1] != 0);
                }
                if (!prefix && t[i - 1] != 0) {
                    assertTrue(t[i] != 0);
                }
            }
            torn++;
        }
        assertEquals(20, torn);
    }

    @Test
    void deadDeviceFailsEveryCallNamingTheDevice() {
        CrashableDevice d = new CrashableDevice("cache0", 8192, 512);
        d.crash(CrashMode.KEEP_ALL, new Random(1));
        DeviceIOException e = assertThrows(DeviceIOException.class, () -> d.write(4096, ByteBuffer.allocate(512), 0));
        assertTrue(e.getMessage().startsWith("cache0 at offset 4096"), e.getMessage());
        assertThrows(DeviceIOException.class, d::flush);
        assertThrows(IllegalStateException.class, () -> new CrashableDevice("x", 512, 512).restart());
    }

    @Test
    void sectorPatternsRoundTripAndDetectGarbage() {
        ByteBuffer b = ByteBuffer.allocate(512);
        SectorPattern.fill(b, SectorPattern.token(5, 9));
        b.flip();
        assertEquals(SectorPattern.token(5, 9), SectorPattern.decode(b));
        b.put(300, (byte) (b.get(300) ^ 1)).position(0);
        assertEquals(SectorPattern.GARBAGE, SectorPattern.decode(b));
        assertEquals(SectorPattern.ZERO, SectorPattern.decode(ByteBuffer.allocate(512)));
        assertEquals("w5@s9", SectorPattern.describe(SectorPattern.token(5, 9)));
    }
}
