package dev.strata.testkit.internal.logwrites;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceIOException;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;
import dev.strata.testsupport.crash.CrashMode;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.crash.LogEntry;
import dev.strata.testsupport.crash.LogFormat;
import dev.strata.testsupport.crash.LogReplay;
import dev.strata.testsupport.target.SimpleTargetContext;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LogWritesTargetTest {

    /**
     * Random requests through the real target; after each one, the replay of the log so far must
     * equal the device below exactly: KEEP_ALL = what reads return, DROP_ALL = what is durable.
     */
    @Test
    void replayOfTheRecordedLogEqualsTheDeviceAtEveryStep() throws Exception {
        CrashableDevice disk = new CrashableDevice("disk", 256 * 1024, 4096);
        CrashableDevice logDev = new CrashableDevice("log", 16 << 20, 512);
        Target t = new LogWritesFactory().create(SimpleTargetContext.of("lw0", "device=disk log=logdev")
                .with("disk", disk).with("logdev", logDev));
        Random r = new Random(11);
        List<byte[]> current = new ArrayList<>();
        List<byte[]> durable = new ArrayList<>();
        for (int i = 0; i < 150; i++) {
            long off = r.nextInt(64) * 4096L;
            int len = (1 + r.nextInt(3)) * 4096;
            len = (int) Math.min(len, disk.size() - off);
            switch (r.nextInt(6)) {
                case 0, 1, 2 -> {
                    byte[] data = new byte[len];
                    r.nextBytes(data);
                    t.write(off, ByteBuffer.wrap(data), r.nextInt(5) == 0 ? BlockDevice.FUA : 0);
                }
                case 3 -> t.flush();
                case 4 -> t.writeZeroes(off, len, r.nextBoolean() ? BlockDevice.FUA : 0);
                default -> t.discard(off, len);
            }
            current.add(disk.currentImage());
            durable.add(disk.durableImage());
        }
        t.close();

        LogFormat.Recording rec = LogFormat.read(logDev, 0);
        assertEquals(disk.size(), rec.deviceSize());
        assertEquals(4096, rec.blockSize());
        List<LogEntry> entries = rec.entries();
        assertEquals(150 + 1, entries.size(), "every request and the close's flush are recorded"); // close flushes the device
        LogReplay replay = new LogReplay(entries, List.of(new byte[(int) disk.size()]), List.of(4096));
        for (int i = 0; i < 150; i++) {
            replay.advanceTo(i + 1);
            assertArrayEquals(current.get(i), replay.images(CrashMode.KEEP_ALL, r).get(0), "current image after request " + i);
            assertArrayEquals(durable.get(i), replay.images(CrashMode.DROP_ALL, r).get(0), "durable image after request " + i);
        }
        assertEquals("151", t.status().get("entries"));
    }

    @Test
    void aFullLogFailsTheRequestAndStopsRecording() throws Exception {
        CrashableDevice disk = new CrashableDevice("disk", 1 << 20, 512);
        CrashableDevice logDev = new CrashableDevice("log", 64 * 1024, 512);
        Target t = new LogWritesFactory().create(SimpleTargetContext.of("lw0", "device=disk log=logdev")
                .with("disk", disk).with("logdev", logDev));
        t.write(0, ByteBuffer.allocate(32 * 1024), 0);
        DeviceIOException e = assertThrows(DeviceIOException.class, () -> t.write(65536, ByteBuffer.allocate(32 * 1024), 0));
        assertEquals("lw0", e.device());
        assertEquals(65536, e.offset());
        assertTrue(e.getMessage().contains("log device full"), e.getMessage());
        assertThrows(DeviceIOException.class, () -> t.write(0, ByteBuffer.allocate(512), 0));
        assertEquals("full", t.status().get("state"));
        assertEquals(1, LogFormat.read(logDev, 0).entries().size());
    }

    @Test
    void badArgumentsAreOneClearLine() {
        LogWritesFactory f = new LogWritesFactory();
        CrashableDevice small = new CrashableDevice("s", 4096, 512);
        assertEquals("logwrites: device and log are both 'd'; the log needs a device of its own",
                assertThrows(InvalidArgumentException.class, () -> f.lowerDevices(java.util.Map.of("device", "d", "log", "d"))).getMessage());
        assertEquals("logwrites: missing argument 'log=…'",
                assertThrows(InvalidArgumentException.class, () -> f.lowerDevices(java.util.Map.of("device", "d"))).getMessage());
        assertEquals("logwrites: log device 'l' has 4096 bytes; it needs at least 65536 (and room for all the data written)",
                assertThrows(InvalidArgumentException.class, () -> f.create(SimpleTargetContext.of("lw", "device=d log=l")
                        .with("d", small).with("l", small))).getMessage());
    }
}
