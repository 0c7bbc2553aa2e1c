package dev.strata.testsupport.contract;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.strata.api.BlockDevice;
import dev.strata.api.MisalignedRequestException;
import dev.strata.api.OutOfRangeException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The contract's read/write part: geometry, zeroes for unwritten areas, read-your-writes, rejected
 * requests that change nothing, random operations against the model, and ByteBuffer shapes.
 */
public abstract class ReadWriteContract extends ContractFixture {
    // ------------------------------------------------------------------ geometry and zeroes

    @Test
    void sizeAndBlockSize() {
        assertEquals(deviceSize(), device.size(), "size()");
        int bs = device.blockSize();
        assertTrue(bs == 512 || bs == 4096, "blockSize() must be 512 or 4096, was " + bs);
        assertEquals(0, device.size() % bs, "size() must be a multiple of blockSize()");
    }

    @Test
    void unwrittenDeviceReadsZeroes() throws IOException {
        verifyAgainstModel();
        // and a few small reads at odd places
        for (long off : new long[] {0, 512, 4096 + 1536, device.size() - 512, device.size() / 2 + 3 * 512}) {
            assertAllZero(readBytes(off, 512), off);
        }
    }

    @Test
    void readYourWritesAtManyOffsetsAndSizes() throws IOException {
        long size = device.size();
        int[] lengths = {512, 1024, 1536, 4096, 4096 + 512, 8192, 12 * 512, 64 * KIB - 512, 64 * KIB,
            64 * KIB + 1536, 128 * KIB + 512, MIB, MIB + 512, 2 * MIB + 3 * 512, 3 * MIB};
        SplittableRandom rnd = new SplittableRandom(1);
        int gen = 0;
        for (int len : lengths) {
            long random = alignDown(rnd.nextLong(size - len + 1));
            long[] offsets = len < MIB
                    ? new long[] {0, 512, 3 * 512, 4096, 4096 * 3 + 512 * 5, random, size - len, size - len - 512 * 7}
                    : new long[] {3 * 512, random, size - len - 512 * 7};
            for (long off : offsets) {
                if (off < 0 || off + len > size) {
                    continue;
                }
                byte[] data = pattern(++gen, len);
                writeBytes(off, data, 0);
                assertArrayEquals(data, readBytes(off, len), "read back [" + off + ", +" + len + ")");
            }
        }
        verifyAgainstModel();
    }

    @Test
    void lastBlockAndLastSector() throws IOException {
        long size = device.size();
        byte[] block = pattern(7, 4096);
        writeBytes(size - 4096, block, 0);
        assertArrayEquals(block, readBytes(size - 4096, 4096));
        byte[] sector = pattern(8, 512);
        writeBytes(size - 512, sector, BlockDevice.FUA);
        assertArrayEquals(sector, readBytes(size - 512, 512));
        // a whole-device-end read spanning both
        assertArrayEquals(Arrays.copyOfRange(model, (int) size - 8192, (int) size), readBytes(size - 8192, 8192));
        verifyAgainstModel();
    }

    @Test
    void zeroLengthRequestsAreAcceptedAndChangeNothing() throws IOException {
        writeBytes(0, pattern(3, 4096), 0);
        long size = device.size();
        for (long off : new long[] {0, 512, size}) {
            ByteBuffer empty = ByteBuffer.allocate(0);
            device.read(off, empty);
            device.write(off, empty, 0);
            device.discard(off, 0);
            device.writeZeroes(off, 0, 0);
        }
        verifyAgainstModel();
    }

    // ------------------------------------------------------------------ rejected requests

    @Test
    void outOfRangeRequestsAreRejectedAndChangeNothing() throws IOException {
        long size = device.size();
        writeBytes(0, pattern(11, 64 * KIB), 0);
        writeBytes(size - 64 * KIB, pattern(12, 64 * KIB), 0);

        long[][] bad = { // {offset, length}
            {size, 512}, {size - 512, 1024}, {size - 4096, 8192}, {size + 4096, 4096},
            {-512, 512}, {-512, 1024}, {Long.MIN_VALUE, 512}, {Long.MAX_VALUE - 511, 512},
            {(Long.MAX_VALUE - 511) & ~511L, 1024},
        };
        for (long[] b : bad) {
            long off = b[0];
            int len = (int) b[1];
            assertRejectedIo(OutOfRangeException.class, off, len);
        }
        // lengths only discard/writeZeroes can express: negative, overflowing, larger than the device
        long[][] badRanges = {
            {0, size + 512}, {512, Long.MAX_VALUE & ~511L}, {size - 512, Long.MAX_VALUE & ~511L},
            {0, -512}, {4096, -4096}, {Long.MAX_VALUE & ~511L, Long.MAX_VALUE & ~511L},
        };
        for (long[] b : badRanges) {
            assertRejectedRange(OutOfRangeException.class, b[0], b[1]);
        }
        assertThrows(OutOfRangeException.class, () -> device.extents(size, 512, (o, l, f) -> { }));
        assertThrows(OutOfRangeException.class, () -> device.extents(-512, 512, (o, l, f) -> { }));
        verifyAgainstModel();
    }

    @Test
    void misalignedRequestsAreRejectedAndChangeNothing() throws IOException {
        writeBytes(0, pattern(21, 64 * KIB), 0);
        long[][] bad = { // {offset, length}, all inside the device
            {1, 512}, {100, 512}, {511, 1024}, {4096 + 256, 4096}, {0, 1}, {0, 100}, {512, 513},
            {4096, 4095}, {0, 4097}, {3, 7},
        };
        for (long[] b : bad) {
            assertRejectedIo(MisalignedRequestException.class, b[0], (int) b[1]);
            assertRejectedRange(MisalignedRequestException.class, b[0], b[1]);
        }
        verifyAgainstModel();
    }

    private void assertRejectedIo(Class<? extends IllegalArgumentException> type, long off, int len) {
        String what = " [" + off + ", +" + len + ")";
        ByteBuffer src = ByteBuffer.wrap(pattern(99, len));
        assertThrows(type, () -> device.write(off, src, 0), "write" + what);
        assertEquals(0, src.position(), "a rejected write must not consume its buffer" + what);
        assertThrows(type, () -> device.write(off, src, BlockDevice.FUA), "FUA write" + what);
        assertEquals(0, src.position(), "a rejected write must not consume its buffer" + what);
        byte[] filler = new byte[len];
        Arrays.fill(filler, (byte) 0x5A);
        ByteBuffer dst = ByteBuffer.wrap(filler.clone());
        assertThrows(type, () -> device.read(off, dst), "read" + what);
        assertEquals(0, dst.position(), "a rejected read must not move its buffer" + what);
        assertArrayEquals(filler, dst.array(), "a rejected read must not fill its buffer" + what);
        ByteBuffer direct = ByteBuffer.allocateDirect(len);
        assertThrows(type, () -> device.read(off, direct), "read (direct buffer)" + what);
        assertEquals(0, direct.position(), "a rejected read must not move its buffer" + what);
    }

    private void assertRejectedRange(Class<? extends IllegalArgumentException> type, long off, long len) {
        String what = " [" + off + ", +" + len + ")";
        assertThrows(type, () -> device.discard(off, len), "discard" + what);
        assertThrows(type, () -> device.writeZeroes(off, len, 0), "writeZeroes" + what);
        assertThrows(type, () -> device.writeZeroes(off, len, BlockDevice.NO_HOLE | BlockDevice.FUA),
                "writeZeroes NO_HOLE|FUA" + what);
    }

    // ------------------------------------------------------------------ random operations against a model

    /**
     * A seeded random sequence of writes (some FUA), reads, flushes, writeZeroes and discards,
     * every read checked against a model. A discarded sector may read as its old data or as
     * zeroes until it is written or zeroed again.
     */
    @Test
    void randomOperationsAgreeWithAModel() throws IOException {
        long size = device.size();
        int sectors = (int) (size / SECTOR);
        boolean[] maybeZero = new boolean[sectors];
        SplittableRandom rnd = new SplittableRandom(42);
        for (int i = 0; i < 400; i++) {
            int n = 1 + (rnd.nextInt(4) == 0 ? rnd.nextInt(512) : rnd.nextInt(24));
            int first = rnd.nextInt(sectors - n + 1);
            long off = (long) first * SECTOR;
            int len = n * SECTOR;
            int op = rnd.nextInt(20);
            if (op < 9) {
                writeBytes(off, pattern(100_000L + i, len), op == 0 ? BlockDevice.FUA : 0);
                Arrays.fill(maybeZero, first, first + n, false);
            } else if (op < 16) {
                byte[] got = readBytes(off, len);
                for (int s = 0; s < n; s++) {
                    int at = (first + s) * SECTOR;
                    int in = s * SECTOR;
                    if (Arrays.equals(got, in, in + SECTOR, model, at, at + SECTOR)) {
                        continue;
                    }
                    if (maybeZero[first + s] && isZero(got, in, SECTOR)) {
                        continue;
                    }
                    fail("operation " + i + ": sector " + (first + s) + " (offset " + at + ") reads wrong data");
                }
            } else if (op == 16) {
                device.flush();
            } else if (op < 19) {
                device.writeZeroes(off, len, rnd.nextBoolean() ? BlockDevice.NO_HOLE : 0);
                zeroModel(off, len);
                Arrays.fill(maybeZero, first, first + n, false);
            } else {
                device.discard(off, len);
                Arrays.fill(maybeZero, first, first + n, true);
            }
        }
        for (int s = 0; s < sectors; s++) { // settle discarded sectors to what they read now
            if (maybeZero[s]) {
                byte[] got = readBytes((long) s * SECTOR, SECTOR);
                if (!isZero(got, 0, SECTOR) && !Arrays.equals(got, 0, SECTOR, model, s * SECTOR, (s + 1) * SECTOR)) {
                    fail("discarded sector " + s + " holds neither its old data nor zeroes");
                }
                System.arraycopy(got, 0, model, s * SECTOR, SECTOR);
            }
        }
        verifyAgainstModel();
    }

    // ------------------------------------------------------------------ ByteBuffer handling

    @Test
    void heapAndDirectBuffersWithPositionsAndOffsets() throws IOException {
        for (int len : new int[] {512, 4096, 4096 + 1536, 64 * KIB + 512}) {
            for (int variant = 0; variant < 6; variant++) {
                long off = 4096L * (variant * 40 + 1) + 512L * variant;
                byte[] data = pattern(len * 10L + variant, len);
                ByteBuffer src = buffer(variant, len, 13);
                int pos = src.position();
                src.put(data).position(pos);
                if (variant == 2) {
                    src = src.asReadOnlyBuffer();
                }
                int limit = src.limit();
                device.write(off, src, 0);
                assertEquals(limit, src.position(), "write must advance the source position to its limit");
                assertEquals(limit, src.limit(), "write must not change the limit");
                System.arraycopy(data, 0, model, (int) off, len);

                ByteBuffer dst = buffer(variant, len, 29);
                int dpos = dst.position();
                int dlimit = dst.limit();
                byte[] outside = outsideBytes(dst, dpos, dlimit);
                device.read(off, dst);
                assertEquals(dlimit, dst.position(), "read must advance the destination position to its limit");
                assertEquals(dlimit, dst.limit(), "read must not change the limit");
                assertArrayEquals(outside, outsideBytes(dst, dpos, dlimit), "read wrote outside [position, limit)");
                byte[] got = new byte[len];
                dst.duplicate().position(dpos).get(got);
                assertArrayEquals(data, got, "variant " + variant + " length " + len);
            }
        }
        verifyAgainstModel();
    }

    /** Buffers of {@code len} remaining bytes in several shapes; bytes outside are filled with 0x77. */
    private static ByteBuffer buffer(int variant, int len, int skew) {
        ByteBuffer b;
        switch (variant) {
            case 0: // plain heap
                b = ByteBuffer.allocate(len);
                break;
            case 1: // heap with a non-zero array offset and a non-zero position
                b = ByteBuffer.wrap(new byte[len + 2 * skew + 100], skew, len + skew + 50).slice();
                b.position(skew).limit(skew + len);
                break;
            case 2: // heap, read-only source (write side)
                b = ByteBuffer.allocate(len + skew);
                b.position(skew);
                break;
            case 3: // plain direct
                b = ByteBuffer.allocateDirect(len);
                break;
            case 4: // direct at an odd address (not aligned to anything) and a non-zero position
                b = ByteBuffer.allocateDirect(len + 2 * skew + 4096).position(skew).slice();
                b.position(skew).limit(skew + len);
                break;
            default: // direct, 4096-aligned but with a position
                b = ByteBuffer.allocateDirect(len + 2 * 4096 + 8192).alignedSlice(4096);
                b.position(4096).limit(4096 + len);
                break;
        }
        ByteBuffer all = b.duplicate().clear();
        for (int i = 0; i < all.capacity(); i++) {
            if (i < b.position() || i >= b.limit()) {
                all.put(i, (byte) 0x77);
            }
        }
        return b;
    }

    /** The bytes of the buffer's whole capacity that lie outside [position, limit). */
    private static byte[] outsideBytes(ByteBuffer b, int position, int limit) {
        ByteBuffer all = b.duplicate().clear();
        byte[] out = new byte[all.capacity() - (limit - position)];
        int j = 0;
        for (int i = 0; i < all.capacity(); i++) {
            if (i < position || i >= limit) {
                out[j++] = all.get(i);
            }
        }
        return out;
    }

}
