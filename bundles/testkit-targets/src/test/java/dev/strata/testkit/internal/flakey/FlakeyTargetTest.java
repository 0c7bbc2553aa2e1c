package dev.strata.testkit.internal.flakey;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceIOException;
import dev.strata.api.InvalidArgumentException;
import dev.strata.testkit.internal.common.FakeSleeper;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.target.SimpleTargetContext;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FlakeyTargetTest {
    private final CrashableDevice disk = new CrashableDevice("disk", 64 * 1024, 4096);
    private final FakeSleeper clock = new FakeSleeper();

    private FlakeyTarget flakey(String args) {
        SimpleTargetContext ctx = SimpleTargetContext.of("fl0", "device=disk " + args).with("disk", disk);
        return new FlakeyTarget("fl0", disk, FlakeyConfig.parse(ctx.arguments(), disk), clock::nanoTime);
    }

    private static ByteBuffer filled(int n, int value) {
        byte[] b = new byte[n];
        java.util.Arrays.fill(b, (byte) value);
        return ByteBuffer.wrap(b);
    }

    private byte[] diskBytes(long offset, int n) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(n);
        disk.read(offset, b);
        return b.array();
    }

    @Test
    void cyclesUpAndDownOnTheClock() throws Exception {
        FlakeyTarget t = flakey("up=100 down=50 mode=error_reads");
        List<Boolean> states = new ArrayList<>();
        for (int ms = 0; ms < 300; ms += 25) {
            states.add(t.down());
            clock.advance(25_000_000);
        }
        assertEquals(List.of(false, false, false, false, true, true, false, false, false, false, true, true), states);
    }

    @Test
    void errorReadsFailWhileDownNamingDeviceAndOffset() throws Exception {
        FlakeyTarget t = flakey("up=100 down=50 mode=error_reads");
        t.write(4096, filled(4096, 7), 0); // up: fine
        t.read(4096, ByteBuffer.allocate(4096));
        clock.advance(120_000_000);
        DeviceIOException e = assertThrows(DeviceIOException.class, () -> t.read(4096, ByteBuffer.allocate(4096)));
        assertEquals("fl0", e.device());
        assertEquals(4096, e.offset());
        assertTrue(e.getMessage().contains("injected read error (flakey down, mode error_reads)"), e.getMessage());
        t.write(0, filled(512, 1), 0); // writes still work in error_reads
        clock.advance(50_000_000);
        t.read(4096, ByteBuffer.allocate(4096)); // up again
        assertEquals("1", t.status().get("faults"));
    }

    @Test
    void errorModeFailsEverythingIncludingFlush() {
        FlakeyTarget t = flakey("");
        assertThrows(DeviceIOException.class, () -> t.read(0, ByteBuffer.allocate(512)));
        assertThrows(DeviceIOException.class, () -> t.write(0, ByteBuffer.allocate(512), 0));
        assertThrows(DeviceIOException.class, () -> t.writeZeroes(0, 512, 0));
        assertThrows(DeviceIOException.class, () -> t.discard(0, 512));
        assertEquals(-1, assertThrows(DeviceIOException.class, t::flush).offset());
        assertEquals("down", t.status().get("state"));
        assertEquals("error_reads,error_writes", t.status().get("mode"));
    }

    @Test
    void dropWritesAcknowledgesAndForgets() throws Exception {
        FlakeyTarget t = flakey("mode=drop_writes");
        ByteBuffer src = filled(4096, 9);
        t.write(0, src, BlockDevice.FUA);
        assertFalse(src.hasRemaining());
        t.flush();
        assertArrayEquals(new byte[4096], diskBytes(0, 4096));
        t.message("state", "up");
        t.write(0, filled(4096, 9), 0);
        assertArrayEquals(filled(4096, 9).array(), diskBytes(0, 4096));
    }

    @Test
    void corruptReadsChangeByteNOfEveryBlock() throws Exception {
        disk.write(0, filled(16384, 0x11), 0);
        FlakeyTarget t = flakey("mode=corrupt_reads corrupt_byte=100");
        ByteBuffer dst = ByteBuffer.allocate(8192 + 512);
        dst.position(512); // the target must respect the buffer's position
        t.read(4096, dst);
        byte[] b = dst.array();
        for (int i = 512; i < b.length; i++) {
            int inBlock = (i - 512) % 4096;
            assertEquals(inBlock == 100 ? (byte) ~0x11 : 0x11, b[i], "byte " + i);
        }
        // a request that does not contain byte 100 of any block is untouched
        ByteBuffer small = ByteBuffer.allocate(512);
        t.read(4096 + 512, small);
        assertArrayEquals(filled(512, 0x11).array(), small.array());
        assertArrayEquals(filled(16384, 0x11).array(), diskBytes(0, 16384), "corrupt_reads never changes the device");
    }

    @Test
    void corruptWritesStoreAChangedByteButLeaveTheCallersBuffer() throws Exception {
        FlakeyTarget t = flakey("mode=corrupt_writes corrupt_byte=5 corrupt_value=255");
        ByteBuffer src = filled(8192, 0);
        t.write(8192, src, 0);
        assertArrayEquals(new byte[8192], src.array());
        byte[] stored = diskBytes(8192, 8192);
        for (int i = 0; i < stored.length; i++) {
            assertEquals(i % 4096 == 5 ? (byte) 255 : 0, stored[i], "byte " + i);
        }
    }

    @Test
    void regionSkipAndCountSelectWhichRequestsFault() throws Exception {
        FlakeyTarget t = flakey("mode=error_writes region_offset=8192 region_length=4096 skip=1 count=2");
        t.write(0, filled(4096, 1), 0);          // outside the region
        t.write(8192, filled(512, 1), 0);        // first match: skipped
        assertThrows(DeviceIOException.class, () -> t.write(8192, filled(512, 1), 0));
        assertThrows(DeviceIOException.class, () -> t.write(4096, filled(8192, 1), 0)); // overlaps the region
        t.write(8192, filled(512, 1), 0);        // count exhausted
        t.flush();                               // a flush is not in the region
        assertEquals("2", t.status().get("faults"));
    }

    @Test
    void probabilityIsDeterministicFromTheSeed() throws Exception {
        List<Boolean> a = pattern("mode=error_reads probability=30 seed=5");
        assertEquals(a, pattern("mode=error_reads probability=30 seed=5"));
        long failures = a.stream().filter(x -> x).count();
        assertTrue(failures > 30 && failures < 90, "about 30% of 200 fail: " + failures);
    }

    private List<Boolean> pattern(String args) throws Exception {
        FlakeyTarget t = flakey(args);
        List<Boolean> out = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            try {
                t.read(0, ByteBuffer.allocate(512));
                out.add(false);
            } catch (DeviceIOException e) {
                out.add(true);
            }
        }
        return out;
    }

    @Test
    void stateMessageForcesUpOrDown() throws Exception {
        FlakeyTarget t = flakey("up=1000 down=1000 mode=error_reads");
        t.message("state", "down");
        assertThrows(DeviceIOException.class, () -> t.read(0, ByteBuffer.allocate(512)));
        t.message("state", "auto");
        t.read(0, ByteBuffer.allocate(512));
        assertEquals("flakey: state=sideways is unknown; use up, down or auto",
                assertThrows(InvalidArgumentException.class, () -> t.message("state", "sideways")).getMessage());
        assertThrows(InvalidArgumentException.class, () -> t.message("colour", "red"));
    }

    @Test
    void invalidSpecsAreRejectedAtCreateWithOneLineAndTouchNothing() {
        String[][] cases = {
            {"mode=flaky_reads", "flakey: mode 'flaky_reads' is unknown; use error, error_reads, error_writes, drop_writes, corrupt_reads or corrupt_writes (comma-separated)"},
            {"up=-5", "flakey: up=-5 is out of range; allowed 0 to 86400000 ms"},
            {"down=soon", "flakey: down=soon is not a number of milliseconds"},
            {"up=0 down=0", "flakey: up=0 and down=0 leave no interval; give up or down a positive number of ms"},
            {"mode=corrupt_reads corrupt_byte=4096", "flakey: corrupt_byte=4096 is beyond the device's 4096-byte block; allowed 0 to 4095"},
            {"mode=corrupt_writes corrupt_byte=-1", "flakey: corrupt_byte=-1 is beyond the device's 4096-byte block; allowed 0 to 4095"},
            {"mode=corrupt_writes", "flakey: mode corrupt_writes needs corrupt_byte=N (0 to 4095)"},
            {"mode=error_reads corrupt_byte=3", "flakey: corrupt_byte is only used with mode=corrupt_reads or mode=corrupt_writes"},
            {"mode=drop_writes,error_writes", "flakey: mode=drop_writes,error_writes combines conflicting modes; use at most one read mode (error_reads, corrupt_reads) and one write mode (error_writes, drop_writes, corrupt_writes)"},
            {"mode=corrupt_reads corrupt_byte=1 corrupt_value=256", "flakey: corrupt_value=256 is out of range; allowed 0 to 255"},
            {"region_offset=65536", "flakey: region 65536+0 is empty or reaches past the device's 65536 bytes"},
            {"region_offset=100", "flakey: region_offset and region_length must be multiples of 512"},
            {"probability=101", "flakey: probability=101 is out of range; allowed 0 to 100"},
        };
        FlakeyFactory factory = new FlakeyFactory();
        for (String[] c : cases) {
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                    () -> factory.create(SimpleTargetContext.of("fl0", "device=disk " + c[0]).with("disk", disk)), c[0]);
            assertEquals(c[1], e.getMessage(), c[0]);
            assertFalse(e.getMessage().contains("\n"));
        }
        assertTrue(disk.stats().contains("writes 0"), "nothing was written: " + disk.stats());
        assertEquals("flakey: missing argument 'device=DEVICE'",
                assertThrows(InvalidArgumentException.class, () -> factory.lowerDevices(java.util.Map.of("mode", "error"))).getMessage());
    }
}
