package dev.strata.core.internal.linear;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.strata.api.BlockDevice;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.MisalignedRequestException;
import dev.strata.api.OutOfRangeException;
import dev.strata.api.Requests;
import dev.strata.api.Target;
import dev.strata.api.TargetContext;

class LinearTargetTest {

    /** A RAM device that records the calls it gets. */
    static final class Recorder implements BlockDevice {
        final byte[] data;
        final List<String> calls = new ArrayList<>();

        Recorder(int size) {
            data = new byte[size];
        }

        @Override
        public long size() {
            return data.length;
        }

        @Override
        public int blockSize() {
            return 4096;
        }

        @Override
        public synchronized void read(long offset, ByteBuffer dst) {
            Requests.check(this, offset, dst.remaining());
            calls.add("read " + offset + " " + dst.remaining());
            dst.put(data, (int) offset, dst.remaining());
        }

        @Override
        public synchronized void write(long offset, ByteBuffer src, int flags) {
            Requests.check(this, offset, src.remaining());
            calls.add("write " + offset + " " + src.remaining() + " " + flags);
            src.get(data, (int) offset, src.remaining());
        }

        @Override
        public synchronized void flush() {
            calls.add("flush");
        }

        @Override
        public synchronized void discard(long offset, long length) {
            calls.add("discard " + offset + " " + length);
        }

        @Override
        public synchronized void writeZeroes(long offset, long length, int flags) {
            calls.add("zeroes " + offset + " " + length + " " + flags);
        }

        @Override
        public boolean canFastZero() {
            return true;
        }

        @Override
        public void extents(long offset, long length, ExtentSink sink) {
            // two extents of 8 KiB each over the whole device: data, then a hole
            for (long o = 0; o < data.length; o += 8192) {
                sink.extent(o, 8192, (o / 8192) % 2 == 0 ? 0 : ExtentSink.HOLE | ExtentSink.ZERO);
            }
        }

        @Override
        public void close() {
        }
    }

    static Target linear(BlockDevice lower, Map<String, String> args) throws IOException {
        return new LinearTargetFactory().create(new TargetContext() {
            @Override
            public String deviceName() {
                return "lin";
            }

            @Override
            public Map<String, String> arguments() {
                return args;
            }

            @Override
            public BlockDevice lowerDevice(String name) {
                assertEquals("low", name);
                return lower;
            }
        });
    }

    @Test
    void translatesEveryRequest() throws IOException {
        Recorder low = new Recorder(1 << 20);
        Target t = linear(low, Map.of("device", "low", "offset", "64k", "length", "256k"));
        assertEquals(256 * 1024, t.size());
        assertEquals(4096, t.blockSize());
        ByteBuffer w = ByteBuffer.allocate(512);
        w.put(0, (byte) 42);
        t.write(512, w, BlockDevice.FUA);
        ByteBuffer r = ByteBuffer.allocate(512);
        t.read(512, r);
        t.flush();
        t.discard(1024, 2048);
        t.writeZeroes(4096, 8192, BlockDevice.NO_HOLE | BlockDevice.FUA);
        assertEquals(List.of("write 66048 512 1", "read 66048 512", "flush", "discard 66560 2048",
                "zeroes 69632 8192 3"), low.calls);
        assertEquals(42, low.data[65536 + 512]);
        assertArrayEquals(w.array(), r.array());
        assertEquals(true, t.canFastZero());
    }

    @Test
    void rejectsRequestsOutsideTheWindowBeforeTheyMove() throws IOException {
        Recorder low = new Recorder(1 << 20);
        Target t = linear(low, Map.of("device", "low", "offset", "512", "length", "4096"));
        assertEquals(512, t.blockSize(), "a window not aligned to the lower block size has 512-byte blocks");
        assertThrows(OutOfRangeException.class, () -> t.read(4096, ByteBuffer.allocate(512)));
        assertThrows(OutOfRangeException.class, () -> t.write(3584, ByteBuffer.allocate(1024), 0));
        assertThrows(MisalignedRequestException.class, () -> t.write(100, ByteBuffer.allocate(512), 0));
        assertThrows(OutOfRangeException.class, () -> t.discard(0, 8192));
        assertThrows(OutOfRangeException.class, () -> t.writeZeroes(-512, 512, 0));
        assertEquals(List.of(), low.calls);
    }

    @Test
    void extentsAreTranslatedAndClipped() throws IOException {
        Recorder low = new Recorder(1 << 20);
        Target t = linear(low, Map.of("device", "low", "offset", "4k", "length", "16k"));
        List<String> seen = new ArrayList<>();
        t.extents(0, 16384, (o, l, f) -> seen.add(o + "+" + l + ":" + f));
        assertEquals(List.of("0+4096:0", "4096+8192:3", "12288+4096:0"), seen);
    }

    @Test
    void argumentsAreChecked() {
        Recorder low = new Recorder(1 << 20);
        assertEquals("linear: missing argument 'device=…'", assertThrows(InvalidArgumentException.class,
                () -> new LinearTargetFactory().lowerDevices(Map.of())).getMessage());
        assertEquals(List.of("low"), new LinearTargetFactory().lowerDevices(Map.of("device", "low")));
        assertThrows(InvalidArgumentException.class, () -> linear(low, Map.of("device", "low", "offset", "1M")));
        assertThrows(InvalidArgumentException.class, () -> linear(low, Map.of("device", "low", "offset", "100")));
        assertThrows(InvalidArgumentException.class, () -> linear(low, Map.of("device", "low", "length", "0")));
        assertThrows(InvalidArgumentException.class, () -> linear(low, Map.of("device", "low", "length", "1000")));
        assertThrows(InvalidArgumentException.class,
                () -> linear(low, Map.of("device", "low", "offset", "4k", "length", "1M")));
    }
}
