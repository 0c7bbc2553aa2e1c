package dev.strata.driver.direct.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceIOException;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;
import dev.strata.api.TargetContext;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DirectTargetTest {
    private static final int MIB = 1 << 20;

    @TempDir
    Path dir;

    private final DirectTargetFactory factory = new DirectTargetFactory();

    private Target create(String... kv) throws IOException {
        Map<String, String> args = new LinkedHashMap<>();
        for (String s : kv) {
            int eq = s.indexOf('=');
            args.put(s.substring(0, eq), s.substring(eq + 1));
        }
        return factory.create(new TargetContext() {
            @Override
            public String deviceName() {
                return "d0";
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

    private String rejected(String... kv) {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> create(kv));
        assertFalse(e.getMessage().contains("\n"));
        assertTrue(e.getMessage().startsWith("direct: "), e.getMessage());
        return e.getMessage();
    }

    private static long counter(Target t, String key) {
        return Long.parseLong(t.status().get(key));
    }

    /** Buffer shapes: heap, direct at an odd address, direct aligned to 4096. */
    private static ByteBuffer buffer(int shape, int len) {
        switch (shape) {
            case 0:
                return ByteBuffer.allocate(len);
            case 1:
                return ByteBuffer.allocateDirect(len + 8).position(3).slice().limit(len);
            default:
                return ByteBuffer.allocateDirect(len + 8192).alignedSlice(4096).limit(len).slice();
        }
    }

    @Test
    void alignmentComesFromTheFileSystem() throws Exception {
        try (Target t = create("path=" + dir.resolve("a.img"), "size=1M", "create=true")) {
            assertEquals(Files.getFileStore(dir).getBlockSize(), ((DirectTarget) t).alignment());
            assertEquals(4096, t.blockSize());
        }
    }

    @Test
    void unalignedRequestsGoThroughBounceBuffersAndReadModifyWrite() throws Exception {
        int align = DirectTarget.alignment(dir);
        try (Target t = create("path=" + dir.resolve("b.img"), "size=8M", "create=true")) {
            byte[] model = new byte[8 * MIB];
            Random rnd = new Random(3);
            int[] lengths = {512, 1536, 4096 + 512, MIB + 512, 3 * MIB + 1536};
            long[] offsets = {512, 3 * 512, 4096 + 7 * 512, 2 * MIB - 512, 5 * 512 + 64 * 1024};
            for (int len : lengths) {
                for (long off : offsets) {
                    for (int shape = 0; shape < 3; shape++) {
                        byte[] data = new byte[len];
                        rnd.nextBytes(data);
                        ByteBuffer src = buffer(shape, len);
                        src.put(data).flip();
                        long rmwBefore = counter(t, "read_modify_writes");
                        t.write(off, src, shape == 1 ? BlockDevice.FUA : 0);
                        assertEquals(0, src.remaining());
                        assertTrue(counter(t, "read_modify_writes") > rmwBefore, "an unaligned write is read-modify-written");
                        System.arraycopy(data, 0, model, (int) off, len);
                        ByteBuffer dst = buffer(2 - shape, len);
                        t.read(off, dst);
                        assertEquals(len, dst.position());
                        byte[] got = new byte[len];
                        dst.flip().get(got);
                        assertArrayEquals(data, got, "len " + len + " at " + off + " shape " + shape);
                    }
                }
            }
            // unaligned zeroes
            t.writeZeroes(512, 4096 + 1024, 0);
            Arrays.fill(model, 512, 512 + 4096 + 1024, (byte) 0);
            t.writeZeroes(MIB + 1536, 2 * MIB, BlockDevice.FUA);
            Arrays.fill(model, MIB + 1536, 3 * MIB + 1536, (byte) 0);
            ByteBuffer all = ByteBuffer.allocate(8 * MIB);
            t.read(0, all);
            assertArrayEquals(model, all.array(), "the whole device matches, neighbours included");
            assertTrue(align >= 512);
        }
    }

    @Test
    void alignedDirectBuffersGoStraightToTheFile() throws Exception {
        try (Target t = create("path=" + dir.resolve("z.img"), "size=8M", "create=true")) {
            ByteBuffer src = buffer(2, 2 * MIB + 4096);
            new Random(4).ints(src.capacity()).forEach(i -> {
                if (src.hasRemaining()) {
                    src.put((byte) i);
                }
            });
            src.flip();
            t.write(4096 * 3, src, 0);
            ByteBuffer dst = buffer(2, 2 * MIB + 4096);
            t.read(4096 * 3, dst);
            assertEquals(0, counter(t, "bounced"), "aligned direct I/O needs no bounce buffer");
            assertEquals(0, counter(t, "buffers"));
            assertEquals(src.flip(), dst.flip());
            // an aligned heap request bounces but needs no read-modify-write
            t.write(4096, ByteBuffer.allocate(8192), 0);
            assertEquals(1, counter(t, "bounced"));
            assertEquals(0, counter(t, "read_modify_writes"));
        }
    }

    /** 8 threads write the 8 sectors of the same 4 KiB blocks at the same moment, round after round. */
    @Test
    void concurrentSubBlockWritesToTheSameBlockAllSurvive() throws Exception {
        int threads = 8;
        int blocks = 64;
        try (Target t = create("path=" + dir.resolve("c.img"), "size=1M", "create=true")) {
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                for (int round = 0; round < 4; round++) {
                    final int r = round;
                    CyclicBarrier barrier = new CyclicBarrier(threads);
                    List<Future<?>> fs = new ArrayList<>();
                    for (int th = 0; th < threads; th++) {
                        final int me = th;
                        fs.add(pool.submit(() -> {
                            ByteBuffer b = (me & 1) == 0 ? ByteBuffer.allocate(512) : ByteBuffer.allocateDirect(512);
                            for (int blk = 0; blk < blocks; blk++) {
                                barrier.await(30, TimeUnit.SECONDS);
                                b.clear();
                                while (b.hasRemaining()) {
                                    b.putInt(r * 1_000_000 + blk * 100 + me);
                                }
                                b.flip();
                                t.write(blk * 4096L + me * 512L, b, 0);
                            }
                            return null;
                        }));
                    }
                    for (Future<?> f : fs) {
                        f.get(60, TimeUnit.SECONDS);
                    }
                    ByteBuffer all = ByteBuffer.allocate(blocks * 4096);
                    t.read(0, all);
                    for (int blk = 0; blk < blocks; blk++) {
                        for (int s = 0; s < 8; s++) {
                            for (int i = 0; i < 512; i += 4) {
                                int v = all.getInt(blk * 4096 + s * 512 + i);
                                if (v != r * 1_000_000 + blk * 100 + s) {
                                    fail("round " + r + " block " + blk + " sector " + s + " lost its write: " + v);
                                }
                            }
                        }
                    }
                }
            } finally {
                pool.shutdownNow();
                assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS));
            }
        }
    }

    @Test
    void dataPersistsAcrossCloseAndReopenAndIsInTheFile() throws Exception {
        Path p = dir.resolve("p.img");
        byte[] data = new byte[4096 + 1536];
        new Random(9).nextBytes(data);
        try (Target t = create("path=" + p, "size=2M", "create=true")) {
            t.write(512 * 5, ByteBuffer.wrap(data), BlockDevice.FUA);
        }
        byte[] file = Files.readAllBytes(p);
        assertEquals(2 * MIB, file.length);
        assertArrayEquals(data, Arrays.copyOfRange(file, 512 * 5, 512 * 5 + data.length));
        try (Target t = create("path=" + p)) {
            assertEquals(2 * MIB, t.size());
            ByteBuffer b = ByteBuffer.allocate(data.length);
            t.read(512 * 5, b);
            assertArrayEquals(data, b.array());
        }
    }

    @Test
    void badInputIsRejectedWithOneLineAndNothingIsCreated() throws Exception {
        Path missing = dir.resolve("missing.img");
        assertTrue(rejected("path=" + missing, "size=" + (4096 + 512), "create=true").contains("file system block size"));
        assertTrue(rejected("path=" + missing, "size=1000", "create=true").contains("not a multiple of 512"));
        assertTrue(rejected("path=" + missing, "size=1M").contains("add create=true"));
        assertTrue(rejected("path=" + missing, "create=true").contains("give size="));
        assertTrue(rejected("path=" + missing, "size=x", "create=true").contains("not a size"));
        assertTrue(rejected("size=1M").contains("missing argument 'path"));
        assertTrue(rejected("path=" + dir, "size=1M").contains("is a directory"));
        assertTrue(rejected("path=" + dir.resolve("nodir/x.img"), "size=1M", "create=true").contains("does not exist"));
        Path odd = dir.resolve("odd.img");
        Files.write(odd, new byte[4096 + 512]);
        assertTrue(rejected("path=" + odd).contains("file system block size"));
        assertFalse(Files.exists(missing));
        assertEquals(4096 + 512, Files.size(odd));
        assertEquals(List.of(), factory.lowerDevices(Map.of("path", "x")));
    }

    @Test
    void statusAndClose() throws Exception {
        Target t = create("path=" + dir.resolve("s.img"), "size=1M", "create=true");
        t.write(512, ByteBuffer.allocate(512), BlockDevice.FUA);
        t.flush();
        t.discard(0, 4096);
        Map<String, String> s = t.status();
        assertEquals(List.of("path", "size", "block_size", "alignment", "reads", "read_bytes", "writes", "written_bytes",
                "fua_writes", "flushes", "zeroes", "zeroed_bytes", "discards", "bounced", "read_modify_writes", "buffers",
                "errors", "reopens"), List.copyOf(s.keySet()));
        assertEquals("1", s.get("fua_writes"));
        assertEquals("1", s.get("read_modify_writes"));
        assertEquals("direct", t.type());
        t.close();
        t.close();
        assertThrows(DeviceIOException.class, () -> t.read(0, ByteBuffer.allocate(512)));
    }

    @Test
    void anInterruptedCallerDoesNotBreakTheDevice() throws Exception {
        try (Target t = create("path=" + dir.resolve("i.img"), "size=1M", "create=true")) {
            byte[] data = new byte[1536];
            new Random(1).nextBytes(data);
            Thread.currentThread().interrupt();
            try {
                t.write(512, ByteBuffer.wrap(data), BlockDevice.FUA);
                ByteBuffer b = ByteBuffer.allocate(1536);
                t.read(512, b);
                assertArrayEquals(data, b.array());
                assertTrue(Thread.currentThread().isInterrupted());
            } finally {
                Thread.interrupted();
            }
            assertEquals("0", t.status().get("errors"));
        }
    }

    @Test
    void aSecondDeviceOverAnOpenImageIsRefusedInOneLineAndChangesNothing() throws Exception {
        Path p = dir.resolve("live.img");
        Path link = java.nio.file.Files.createSymbolicLink(dir.resolve("link.img"), dir.resolve("live.img"));
        Target t = create("path=" + p, "size=1M", "create=true");
        byte[] data = new byte[4096];
        new Random(7).nextBytes(data);
        t.write(0, ByteBuffer.wrap(data), BlockDevice.FUA);
        for (String path : List.of(p.toString(), link.toString())) {
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                    () -> create("path=" + path, "size=2M", "create=true"));
            assertEquals("direct: " + path + " is already open as device 'd0'; one image file can back one device",
                    e.getMessage());
        }
        assertEquals(1 << 20, Files.size(p), "the refused device must not grow the live image");
        ByteBuffer b = ByteBuffer.allocate(4096);
        t.read(0, b);
        assertArrayEquals(data, b.array());
        t.close();
        try (Target again = create("path=" + link)) { // released by close: the same file opens again
            ByteBuffer c = ByteBuffer.allocate(4096);
            again.read(0, c);
            assertArrayEquals(data, c.array());
        }
        create("path=" + p).close(); // and by the second close too
    }
}
