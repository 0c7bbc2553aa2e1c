package dev.strata.driver.memory.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.api.BlockDevice.ExtentSink;
import dev.strata.api.DeviceIOException;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;
import dev.strata.api.TargetContext;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MemoryTargetTest {
    private static final int CHUNK = MemoryTarget.CHUNK;
    private final MemoryTargetFactory factory = new MemoryTargetFactory();

    private Target create(Map<String, String> args) throws IOException {
        return factory.create(new TargetContext() {
            @Override
            public String deviceName() {
                return "m0";
            }

            @Override
            public Map<String, String> arguments() {
                return args;
            }

            @Override
            public BlockDevice lowerDevice(String name) {
                throw new InvalidArgumentException("none");
            }
        });
    }

    private String rejected(Map<String, String> args) {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> create(args));
        assertFalse(e.getMessage().contains("\n"));
        assertTrue(e.getMessage().startsWith("memory: "), e.getMessage());
        assertThrows(InvalidArgumentException.class, () -> factory.lowerDevices(args));
        return e.getMessage();
    }

    private static List<long[]> extents(BlockDevice d, long off, long len) throws IOException {
        List<long[]> out = new ArrayList<>();
        d.extents(off, len, (o, l, f) -> out.add(new long[] {o, l, f}));
        return out;
    }

    @Test
    void badInputIsRejectedWithOneLine() {
        assertTrue(rejected(Map.of()).contains("missing argument 'size"));
        assertTrue(rejected(Map.of("size", "1000")).contains("not a multiple of 512"));
        assertTrue(rejected(Map.of("size", "0")).contains("out of range"));
        assertTrue(rejected(Map.of("size", "-4096")).contains("not a size"));
        assertTrue(rejected(Map.of("size", "12X")).contains("not a size"));
        assertTrue(rejected(Map.of("size", "1P")).contains("not a size"));
        assertTrue(rejected(Map.of("size", "17T")).contains("out of range"));
        assertTrue(rejected(Map.of("size", "1M", "path", "x")).contains("unknown argument 'path'"));
    }

    /**
     * Memory devices are sparse, so together they can be larger than the heap; a write that would
     * fill it must fail as that device's I/O error (one line), not as an OutOfMemoryError that stops
     * the framework (it did: 8 GiB written to `memory size=8G` on a 6 GiB heap killed Strata).
     */
    @Test
    void writesBeyondTheHeapBudgetFailAsIoErrorsAndFreedChunksCanBeWrittenAgain() throws Exception {
        MemoryTargetFactory small = new MemoryTargetFactory(new HeapBudget(4L * CHUNK));
        try (Target a = createWith(small, "4M"); Target b = createWith(small, "4M")) {
            ByteBuffer three = ByteBuffer.allocate(3 * CHUNK);
            a.write(0, three, 0);
            b.write(0, ByteBuffer.allocate(CHUNK), 0);
            DeviceIOException e = assertThrows(DeviceIOException.class,
                    () -> b.write(CHUNK, ByteBuffer.allocate(512), 0));
            assertFalse(e.getMessage().contains("\n"));
            assertTrue(e.getMessage().contains("the Java heap is full") && e.getMessage().contains("-Xmx"), e.getMessage());
            // overwriting what is held takes nothing more
            a.write(0, ByteBuffer.wrap(new byte[3 * CHUNK]), 0);
            a.discard(0, CHUNK);
            b.write(CHUNK, ByteBuffer.allocate(512), 0);
            assertThrows(DeviceIOException.class, () -> a.write(0, ByteBuffer.allocate(512), 0));
            a.close(); // a closed device gives its chunks back
            b.write(2L * CHUNK, ByteBuffer.allocate(2 * CHUNK), 0);
            assertEquals(4L * CHUNK, ((MemoryTarget) b).allocatedBytes());
        }
    }

    private static Target createWith(MemoryTargetFactory f, String size) {
        return f.create(new TargetContext() {
            @Override
            public String deviceName() {
                return "m";
            }

            @Override
            public Map<String, String> arguments() {
                return Map.of("size", size);
            }

            @Override
            public BlockDevice lowerDevice(String name) {
                throw new InvalidArgumentException("none");
            }
        });
    }

    @Test
    void aLargeDeviceAllocatesNothingUpFront() throws Exception {
        try (Target t = create(Map.of("size", "64G"))) {
            MemoryTarget m = (MemoryTarget) t;
            assertEquals(64L << 30, t.size());
            assertEquals(4096, t.blockSize());
            assertEquals(0, m.allocatedBytes());
            byte[] data = new byte[4096];
            data[0] = 7;
            data[4095] = 9;
            t.write(t.size() - 4096, ByteBuffer.wrap(data), 0);
            assertEquals(CHUNK, m.allocatedBytes(), "one chunk for one write");
            ByteBuffer b = ByteBuffer.allocate(4096);
            t.read(t.size() - 4096, b);
            assertArrayEquals(data, b.array());
            ByteBuffer z = ByteBuffer.allocateDirect(1 << 20);
            t.read(32L << 30, z);
            assertEquals(CHUNK, m.allocatedBytes(), "reads allocate nothing");
            List<long[]> e = extents(t, 0, t.size());
            assertEquals(2, e.size());
            assertArrayEquals(new long[] {0, t.size() - CHUNK, ExtentSink.HOLE | ExtentSink.ZERO}, e.get(0));
            assertArrayEquals(new long[] {t.size() - CHUNK, CHUNK, 0}, e.get(1));
            t.writeZeroes(0, t.size(), BlockDevice.FAST_ZERO);
            assertEquals(0, m.allocatedBytes(), "zeroing the whole device frees everything");
            assertEquals("0", t.status().get("allocated_bytes"));
        }
    }

    @Test
    void writeZeroesAndDiscardFreeWholeChunksAndZeroPartialOnes() throws Exception {
        try (Target t = create(Map.of("size", "4M"))) {
            MemoryTarget m = (MemoryTarget) t;
            byte[] ones = new byte[4 << 20];
            java.util.Arrays.fill(ones, (byte) 1);
            t.write(0, ByteBuffer.wrap(ones), 0);
            assertEquals(4 << 20, m.allocatedBytes());
            t.writeZeroes(CHUNK + 512, 2L * CHUNK, 0); // frees chunk 2, zeroes parts of chunks 1 and 3
            assertEquals((4 << 20) - CHUNK, m.allocatedBytes());
            t.discard(8L * CHUNK, 4L * CHUNK);
            assertEquals((4 << 20) - 5 * CHUNK, m.allocatedBytes());
            ByteBuffer b = ByteBuffer.allocate(4 << 20);
            t.read(0, b);
            byte[] got = b.array();
            for (int i = 0; i < got.length; i++) {
                boolean zero = (i >= CHUNK + 512 && i < 3 * CHUNK + 512) || (i >= 8 * CHUNK && i < 12 * CHUNK);
                assertEquals(zero ? 0 : 1, got[i], "byte " + i);
            }
            List<long[]> e = extents(t, 0, 16L * CHUNK);
            assertEquals(5, e.size());
            assertArrayEquals(new long[] {0, 2L * CHUNK, 0}, e.get(0));
            assertArrayEquals(new long[] {2L * CHUNK, CHUNK, ExtentSink.HOLE | ExtentSink.ZERO}, e.get(1));
            assertArrayEquals(new long[] {3L * CHUNK, 5L * CHUNK, 0}, e.get(2));
            assertArrayEquals(new long[] {8L * CHUNK, 4L * CHUNK, ExtentSink.HOLE | ExtentSink.ZERO}, e.get(3));
            assertArrayEquals(new long[] {12L * CHUNK, 4L * CHUNK, 0}, e.get(4));
            // a sub-range starting inside a chunk is clipped to the range
            e = extents(t, 2L * CHUNK + 512, 1024);
            assertEquals(1, e.size());
            assertArrayEquals(new long[] {2L * CHUNK + 512, 1024, ExtentSink.HOLE | ExtentSink.ZERO}, e.get(0));
            assertTrue(t.canFastZero());
        }
    }

    @Test
    void aDeviceSmallerThanAChunkWorks() throws Exception {
        try (Target t = create(Map.of("size", "1536"))) {
            assertEquals(512, t.blockSize());
            byte[] d = new byte[1536];
            d[1535] = 3;
            t.write(0, ByteBuffer.wrap(d), BlockDevice.FUA);
            ByteBuffer b = ByteBuffer.allocate(1536);
            t.read(0, b);
            assertArrayEquals(d, b.array());
            List<long[]> e = extents(t, 0, 1536);
            assertArrayEquals(new long[] {0, 1536, 0}, e.get(0));
        }
    }

    @Test
    void statusAndClose() throws Exception {
        Target t = create(Map.of("size", "1M"));
        t.write(0, ByteBuffer.allocate(4096), BlockDevice.FUA);
        t.read(0, ByteBuffer.allocate(512));
        t.flush();
        Map<String, String> s = t.status();
        assertEquals(List.of("size", "block_size", "chunk_size", "allocated_bytes", "reads", "read_bytes", "writes",
                "written_bytes", "fua_writes", "flushes", "zeroes", "zeroed_bytes", "discards"), List.copyOf(s.keySet()));
        assertEquals("1", s.get("fua_writes"));
        assertEquals("512", s.get("read_bytes"));
        assertEquals(Integer.toString(CHUNK), s.get("allocated_bytes"));
        t.close();
        t.close();
        assertThrows(DeviceIOException.class, () -> t.read(0, ByteBuffer.allocate(512)));
        assertEquals("memory", t.type());
        assertEquals(List.of(), factory.lowerDevices(Map.of("size", "1M")));
    }
}
