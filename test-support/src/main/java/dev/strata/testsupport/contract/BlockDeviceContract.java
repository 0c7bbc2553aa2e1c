package dev.strata.testsupport.contract;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.strata.api.BlockDevice;
import dev.strata.api.FastZeroUnsupportedException;
import dev.strata.api.MisalignedRequestException;
import dev.strata.api.OutOfRangeException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The {@link BlockDevice} contract (DESIGN.md §2) as a reusable JUnit 5 suite. Every target runs it:
 *
 * <pre>{@code
 * class FileTargetContractTest extends BlockDeviceContract {
 *     @TempDir Path dir;
 *     @Override protected BlockDevice newDevice(long size) throws Exception {
 *         return FileTarget.open(dir.resolve("disk.img"), size, true);
 *     }
 * }
 * }</pre>
 *
 * Each test gets a fresh device from {@link #newDevice(long)} (of {@link #deviceSize()} bytes,
 * never written before: it must read as zeroes) and closes it afterwards with
 * {@link #closeDevice(BlockDevice)} (override it to also release lower devices or files). The
 * suite covers read-your-writes at many offsets and sizes, zeroes for unwritten areas, the last
 * block, rejection of out-of-range and misaligned requests with nothing changed, flush and FUA,
 * writeZeroes (with NO_HOLE, FUA and FAST_ZERO), discard, extents, concurrent writers to disjoint
 * ranges (including different sectors of the same 4 KiB block) and to overlapping ranges (no torn
 * sectors), and ByteBuffer handling (positions, heap/direct, array offsets, read-only sources,
 * unaligned direct addresses). A run takes a few seconds per target.
 *
 * <p>The helpers ({@link #pattern}, {@link #readBytes}, {@link #writeBytes}) are protected so a
 * subclass can add target-specific tests in the same style.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class BlockDeviceContract {

    protected static final int SECTOR = BlockDevice.SECTOR;
    protected static final int KIB = 1024;
    protected static final int MIB = 1024 * 1024;

    /** The device under test, fresh for each test. */
    protected BlockDevice device;

    /** What the device must contain (the reference model), for tests that track it. */
    private byte[] model;

    /**
     * Makes a new device of exactly {@code size} bytes whose contents read as zeroes.
     * Called once before each test.
     */
    protected abstract BlockDevice newDevice(long size) throws Exception;

    /** The size of the device under test; at least 8 MiB, a multiple of 4096. Default 8 MiB. */
    protected long deviceSize() {
        return 8L * MIB;
    }

    /** Closes the device after each test (override to release lower devices, files, servers). */
    protected void closeDevice(BlockDevice device) throws Exception {
        device.close();
    }

    /** Threads used by the concurrency tests. */
    protected int writerThreads() {
        return 8;
    }

    @BeforeEach
    final void openDeviceUnderTest() throws Exception {
        long size = deviceSize();
        if (size < 8L * MIB || size % 4096 != 0 || size > Integer.MAX_VALUE / 4) {
            throw new IllegalStateException("deviceSize() must be a multiple of 4096 in [8 MiB, 512 MiB]");
        }
        device = newDevice(size);
        model = new byte[(int) size];
    }

    @AfterEach
    final void closeDeviceUnderTest() throws Exception {
        if (device != null) {
            closeDevice(device);
            device = null;
        }
    }

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

    // ------------------------------------------------------------------ flush and FUA

    @Test
    void flushAndFuaWritesAreAccepted() throws IOException {
        device.flush(); // on an untouched device
        writeBytes(4096, pattern(31, 8192), BlockDevice.FUA);
        writeBytes(512 * 3, pattern(32, 1536), BlockDevice.FUA);
        writeBytes(MIB + 512, pattern(33, MIB), 0);
        device.flush();
        device.flush();
        writeBytes(2 * MIB, pattern(34, 4096), 0);
        device.writeZeroes(MIB + 4096, 8192, BlockDevice.FUA);
        zeroModel(MIB + 4096, 8192);
        device.flush();
        verifyAgainstModel();
    }

    // ------------------------------------------------------------------ writeZeroes and discard

    @Test
    void writeZeroesMakesZeroes() throws IOException {
        long size = device.size();
        writeBytes(0, pattern(41, (int) size), 0);
        long[][] ranges = { // {offset, length, flags}
            {512, 512, 0}, {4096 * 2 + 512, 1536, BlockDevice.NO_HOLE}, {64 * KIB, 64 * KIB, 0},
            {MIB - 512, MIB + 1024, BlockDevice.NO_HOLE}, {3 * MIB, 2 * MIB, BlockDevice.FUA},
            {5 * MIB + 512, 4096 * 3, BlockDevice.FUA | BlockDevice.NO_HOLE}, {size - 4096, 4096, 0},
        };
        for (long[] r : ranges) {
            device.writeZeroes(r[0], r[1], (int) r[2]);
            zeroModel(r[0], r[1]);
            assertAllZero(readBytes(r[0], (int) r[1]), r[0]);
        }
        verifyAgainstModel();
        // rewriting a zeroed range works
        writeBytes(MIB, pattern(42, 8192), 0);
        writeBytes(64 * KIB + 512, pattern(43, 1024), 0);
        verifyAgainstModel();
        // the whole device
        device.writeZeroes(0, size, 0);
        zeroModel(0, size);
        verifyAgainstModel();
    }

    @Test
    void fastZeroWorksOrIsRefusedConsistentlyWithCanFastZero() throws IOException {
        writeBytes(0, pattern(51, 4 * MIB), 0);
        boolean fast = device.canFastZero();
        long[][] ranges = {{MIB, MIB}, {512, 1536}, {2 * MIB + 512, 64 * KIB}};
        for (long[] r : ranges) {
            if (fast) {
                device.writeZeroes(r[0], r[1], BlockDevice.FAST_ZERO);
                zeroModel(r[0], r[1]);
            } else {
                assertThrows(FastZeroUnsupportedException.class,
                        () -> device.writeZeroes(r[0], r[1], BlockDevice.FAST_ZERO),
                        "canFastZero() is false, so FAST_ZERO must be refused");
                assertThrows(FastZeroUnsupportedException.class,
                        () -> device.writeZeroes(r[0], r[1], BlockDevice.FAST_ZERO | BlockDevice.NO_HOLE));
            }
        }
        assertEquals(fast, device.canFastZero(), "canFastZero() must not change");
        verifyAgainstModel();
    }

    @Test
    void discardLeavesOldDataOrZeroes() throws IOException {
        long size = device.size();
        byte[] before = pattern(61, (int) size);
        writeBytes(0, before, 0);
        long[][] ranges = {{512, 512}, {4096 + 512, 1536}, {64 * KIB, 64 * KIB}, {MIB - 512, 2 * MIB + 1024},
            {4 * MIB, 4096}, {size - MIB, MIB}};
        for (long[] r : ranges) {
            device.discard(r[0], r[1]);
        }
        byte[] after = readBytes(0, (int) size);
        boolean[] discarded = new boolean[(int) (size / SECTOR)];
        for (long[] r : ranges) {
            for (long s = r[0] / SECTOR; s < (r[0] + r[1]) / SECTOR; s++) {
                discarded[(int) s] = true;
            }
        }
        for (int s = 0; s < discarded.length; s++) {
            int from = s * SECTOR;
            boolean same = Arrays.equals(after, from, from + SECTOR, before, from, from + SECTOR);
            if (discarded[s]) {
                if (!same && !isZero(after, from, SECTOR)) {
                    fail("discarded sector at " + from + " holds neither its old data nor zeroes");
                }
                System.arraycopy(after, from, model, from, SECTOR); // whichever it is, it must stay
            } else {
                assertTrue(same, "discard changed a sector outside its range at offset " + from);
            }
        }
        // writes into and around discarded ranges work
        writeBytes(64 * KIB + 4096, pattern(62, 8192), 0);
        writeBytes(MIB - 1024, pattern(63, 4096), 0);
        writeBytes(size - 512, pattern(64, 512), 0);
        verifyAgainstModel();
        // discard + writeZeroes reads zero for sure
        device.discard(2 * MIB, MIB);
        device.writeZeroes(2 * MIB, MIB, 0);
        zeroModel(2 * MIB, MIB);
        verifyAgainstModel();
    }

    // ------------------------------------------------------------------ extents

    @Test
    void extentsCoverTheRangeAndAgreeWithTheData() throws IOException {
        long size = device.size();
        writeBytes(0, pattern(71, 256 * KIB), 0);
        writeBytes(MIB + 512, pattern(72, 3 * 512), 0);
        writeBytes(3 * MIB, pattern(73, MIB), 0);
        device.writeZeroes(3 * MIB, 512 * KIB, 0);
        zeroModel(3 * MIB, 512 * KIB);
        device.discard(3 * MIB + 512 * KIB, 256 * KIB);
        byte[] now = readBytes(0, (int) size);
        System.arraycopy(now, 0, model, 0, now.length);

        for (long[] r : new long[][] {{0, size}, {512, 4096}, {MIB, 2 * MIB + 512}, {size - 512, 512},
                {3 * MIB + 4096, 64 * KIB}}) {
            long off = r[0];
            long end = r[0] + r[1];
            // like an NBD client: ask again from where the last answer stopped
            while (off < end) {
                List<long[]> extents = new ArrayList<>();
                device.extents(off, end - off, (o, l, f) -> extents.add(new long[] {o, l, f}));
                assertTrue(!extents.isEmpty(), "extents(" + off + ", " + (end - off) + ") reported nothing");
                long expect = off;
                for (long[] e : extents) {
                    assertEquals(expect, e[0], "extents must be in order and without gaps");
                    assertTrue(e[1] > 0, "an extent must not be empty");
                    assertTrue(e[0] + e[1] <= end, "an extent must not reach past the range asked for");
                    if ((e[2] & BlockDevice.ExtentSink.ZERO) != 0) {
                        assertTrue(isZero(model, (int) e[0], (int) e[1]),
                                "extent [" + e[0] + ", +" + e[1] + ") is reported ZERO but holds data");
                    }
                    expect = e[0] + e[1];
                }
                off = expect;
            }
        }
        verifyAgainstModel();
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

    // ------------------------------------------------------------------ concurrency

    @Test
    void concurrentWritersToDisjointRegionsAllLand() throws Exception {
        int threads = writerThreads();
        long size = device.size();
        long region = alignDown(size / threads) & ~4095L;
        runConcurrently(threads, t -> {
            SplittableRandom rnd = new SplittableRandom(1000 + t);
            long base = region * t;
            long written = 0;
            int i = 0;
            while (written < region * 2) {
                int len = (int) Math.min(region, (1 + rnd.nextInt(rnd.nextBoolean() ? 8 : 512)) * (long) SECTOR);
                long off = base + alignDown(rnd.nextLong(region - len + 1));
                int op = rnd.nextInt(10);
                if (op == 0) {
                    device.writeZeroes(off, len, rnd.nextBoolean() ? BlockDevice.NO_HOLE : 0);
                    synchronized (model) {
                        Arrays.fill(model, (int) off, (int) off + len, (byte) 0);
                    }
                } else {
                    byte[] data = pattern(t * 100_000L + i, len);
                    device.write(off, ByteBuffer.wrap(data), op == 1 ? BlockDevice.FUA : 0);
                    synchronized (model) {
                        System.arraycopy(data, 0, model, (int) off, len);
                    }
                    if (op == 2) {
                        device.flush();
                    }
                }
                written += len;
                i++;
            }
            return null;
        });
        verifyAgainstModel();
    }

    /**
     * Writers own interleaved sectors: writer t writes the 512-byte sectors s with
     * {@code s % threads == t}, so every 4 KiB block is written by several threads at once. A
     * device that read-modify-writes larger blocks must not lose its neighbours' sectors.
     */
    @Test
    void concurrentWritersToDifferentSectorsOfTheSameBlockAllLand() throws Exception {
        int threads = writerThreads();
        int sectors = MIB / SECTOR;
        long base = 4096L * 5;
        runConcurrently(threads, t -> {
            ByteBuffer buf = (t & 1) == 0 ? ByteBuffer.allocate(SECTOR) : ByteBuffer.allocateDirect(SECTOR);
            for (int s = t; s < sectors; s += threads) {
                long off = base + (long) s * SECTOR;
                byte[] data = pattern(off * 7, SECTOR);
                buf.clear();
                buf.put(data).flip();
                device.write(off, buf, 0);
                synchronized (model) {
                    System.arraycopy(data, 0, model, (int) off, SECTOR);
                }
            }
            return null;
        });
        // the same with 1 KiB writes at odd sector offsets: writer t owns sectors pairs 2k+1, 2k+2
        runConcurrently(threads, t -> {
            for (int k = t; k < sectors / 2 - 1; k += threads) {
                long off = base + (long) (2 * k + 1) * SECTOR;
                byte[] data = pattern(off * 13, 2 * SECTOR);
                device.write(off, ByteBuffer.wrap(data), (k & 7) == 0 ? BlockDevice.FUA : 0);
                synchronized (model) {
                    System.arraycopy(data, 0, model, (int) off, 2 * SECTOR);
                }
            }
            return null;
        });
        verifyAgainstModel();
    }

    /**
     * Writers overwrite one shared region with requests of random sizes and offsets (and some
     * writeZeroes). Afterwards every sector must hold, whole, the data one of the writes put
     * there, or zeroes: no torn sectors, no data from elsewhere.
     */
    @Test
    void concurrentWritersToOverlappingRangesLeaveWholeSectors() throws Exception {
        int threads = writerThreads();
        long base = MIB + 3 * SECTOR;
        int regionSectors = 1024; // 512 KiB
        int writesPerThread = 24;
        runConcurrently(threads, t -> {
            SplittableRandom rnd = new SplittableRandom(2000 + t);
            for (int k = 0; k < writesPerThread; k++) {
                int n = 1 + rnd.nextInt(rnd.nextBoolean() ? 16 : 400);
                int first = rnd.nextInt(regionSectors - n + 1);
                if (rnd.nextInt(6) == 0) { // zeroes are a valid outcome for any sector too
                    device.writeZeroes(base + (long) first * SECTOR, (long) n * SECTOR, 0);
                    continue;
                }
                byte[] data = new byte[n * SECTOR];
                for (int s = 0; s < n; s++) {
                    taggedSector(data, s * SECTOR, t, k, first + s);
                }
                ByteBuffer src = (k & 1) == 0 ? ByteBuffer.wrap(data) : ByteBuffer.allocateDirect(data.length).put(data).flip();
                device.write(base + (long) first * SECTOR, src, 0);
                assertEquals(0, src.remaining());
            }
            return null;
        });
        byte[] got = readBytes(base, regionSectors * SECTOR);
        byte[] expect = new byte[SECTOR];
        for (int s = 0; s < regionSectors; s++) {
            int from = s * SECTOR;
            if (isZero(got, from, SECTOR)) {
                continue;
            }
            ByteBuffer b = ByteBuffer.wrap(got, from, SECTOR);
            int writer = b.getInt();
            int write = b.getInt();
            int sector = b.getInt();
            assertEquals(s, sector, "sector " + s + " holds data written for sector " + sector);
            assertTrue(writer >= 0 && writer < threads && write >= 0 && write < writesPerThread,
                    "sector " + s + " holds data no writer wrote");
            taggedSector(expect, 0, writer, write, s);
            assertTrue(Arrays.equals(expect, 0, SECTOR, got, from, from + SECTOR), "sector " + s + " is torn");
        }
        // the region outside was not touched
        assertAllZero(readBytes(base - 4096, 4096), base - 4096);
        assertAllZero(readBytes(base + regionSectors * SECTOR, 4096), base + regionSectors * SECTOR);
    }

    /**
     * All writers write the same 128 sectors (64 KiB) (at an odd sector offset) at the same moment, round
     * after round; after each round every sector must be whole: one writer's data for this round.
     */
    @Test
    void simultaneousWritersOfTheSameSectorsLeaveWholeSectors() throws Exception {
        int threads = writerThreads();
        int sectors = 128;
        int rounds = 150;
        long base = 2L * MIB + 5 * SECTOR;
        CyclicBarrier barrier = new CyclicBarrier(threads);
        runConcurrently(threads, t -> {
            byte[] data = new byte[sectors * SECTOR];
            ByteBuffer direct = ByteBuffer.allocateDirect(data.length);
            byte[] expect = new byte[SECTOR];
            for (int r = 0; r < rounds; r++) {
                for (int s = 0; s < sectors; s++) {
                    taggedSector(data, s * SECTOR, t, r, s);
                }
                ByteBuffer src = (t & 1) == 0 ? ByteBuffer.wrap(data) : direct.clear().put(data).flip();
                barrier.await(30, TimeUnit.SECONDS);
                device.write(base, src, 0);
                barrier.await(30, TimeUnit.SECONDS);
                if (t == 0) {
                    byte[] got = readBytes(base, sectors * SECTOR);
                    for (int s = 0; s < sectors; s++) {
                        ByteBuffer b = ByteBuffer.wrap(got, s * SECTOR, SECTOR);
                        int writer = b.getInt();
                        int write = b.getInt();
                        int sector = b.getInt();
                        if (writer < 0 || writer >= threads || write != r || sector != s) {
                            fail("round " + r + ": sector " + s + " holds data no writer of this round wrote there");
                        }
                        taggedSector(expect, 0, writer, r, s);
                        if (!Arrays.equals(expect, 0, SECTOR, got, s * SECTOR, (s + 1) * SECTOR)) {
                            fail("round " + r + ": sector " + s + " is torn");
                        }
                    }
                }
            }
            return null;
        });
    }

    private static void taggedSector(byte[] into, int at, int writer, int write, int sector) {
        ByteBuffer b = ByteBuffer.wrap(into, at, SECTOR);
        b.putInt(writer).putInt(write).putInt(sector);
        long x = mix(((long) writer << 40) ^ ((long) write << 20) ^ sector);
        while (b.remaining() >= 8) {
            x = mix(x);
            b.putLong(x);
        }
    }

    /** A task run by each of several threads started together. */
    @FunctionalInterface
    protected interface Worker {
        Void run(int thread) throws Exception;
    }

    /** Runs {@code worker} on {@code threads} threads started together; fails on any error or after 60 s. */
    protected static void runConcurrently(int threads, Worker worker) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Void>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                final int id = t;
                Callable<Void> task = () -> {
                    start.await();
                    return worker.run(id);
                };
                futures.add(pool.submit(task));
            }
            start.countDown();
            for (Future<Void> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
            if (!pool.awaitTermination(30, TimeUnit.SECONDS)) {
                fail("writer threads did not stop");
            }
        }
    }

    // ------------------------------------------------------------------ helpers

    /** Deterministic pseudo-random bytes; different seeds give different data. */
    protected static byte[] pattern(long seed, int length) {
        byte[] b = new byte[length];
        long x = mix(seed * 0x9E3779B97F4A7C15L + 12345);
        int i = 0;
        for (; i + 8 <= length; i += 8) {
            x = mix(x);
            for (int j = 0; j < 8; j++) {
                b[i + j] = (byte) (x >>> (8 * j));
            }
        }
        for (; i < length; i++) {
            b[i] = (byte) (mix(x + i));
        }
        return b;
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31) ^ 0x5851F42D4C957F2DL;
    }

    /** Reads {@code length} bytes at {@code offset} into a new array (through a heap buffer). */
    protected byte[] readBytes(long offset, int length) throws IOException {
        ByteBuffer dst = ByteBuffer.allocate(length);
        device.read(offset, dst);
        assertEquals(length, dst.position(), "read must fill the buffer");
        return dst.array();
    }

    /** Writes {@code data} at {@code offset} and records it in the reference model. */
    protected void writeBytes(long offset, byte[] data, int flags) throws IOException {
        ByteBuffer src = ByteBuffer.wrap(data);
        device.write(offset, src, flags);
        assertEquals(0, src.remaining(), "write must consume the buffer");
        synchronized (model) {
            System.arraycopy(data, 0, model, (int) offset, data.length);
        }
    }

    private void zeroModel(long offset, long length) {
        synchronized (model) {
            Arrays.fill(model, (int) offset, (int) (offset + length), (byte) 0);
        }
    }

    /** Reads the whole device in 1 MiB pieces (alternating heap and direct) and compares it with the model. */
    protected void verifyAgainstModel() throws IOException {
        long size = device.size();
        ByteBuffer heap = ByteBuffer.allocate(MIB);
        ByteBuffer direct = ByteBuffer.allocateDirect(MIB);
        byte[] got = new byte[MIB];
        for (long off = 0; off < size; off += MIB) {
            int len = (int) Math.min(MIB, size - off);
            ByteBuffer b = ((off / MIB) & 1) == 0 ? heap : direct;
            b.clear().limit(len);
            device.read(off, b);
            b.flip().get(got, 0, len);
            if (!Arrays.equals(got, 0, len, model, (int) off, (int) off + len)) {
                for (int i = 0; i < len; i++) {
                    if (got[i] != model[(int) off + i]) {
                        long at = off + i;
                        fail("device differs from what was written at byte " + at + " (sector " + at / SECTOR
                                + "): expected " + model[(int) at] + " got " + got[i]);
                    }
                }
            }
        }
    }

    protected static void assertAllZero(byte[] b, long offset) {
        for (int i = 0; i < b.length; i++) {
            if (b[i] != 0) {
                fail("expected zeroes, found " + b[i] + " at byte " + (offset + i));
            }
        }
    }

    protected static boolean isZero(byte[] b, int from, int length) {
        for (int i = from; i < from + length; i++) {
            if (b[i] != 0) {
                return false;
            }
        }
        return true;
    }

    protected static long alignDown(long v) {
        return v & ~(long) (SECTOR - 1);
    }
}
