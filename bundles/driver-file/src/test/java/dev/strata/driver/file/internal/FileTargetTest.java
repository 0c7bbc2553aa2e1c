package dev.strata.driver.file.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceIOException;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;
import dev.strata.api.TargetContext;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileTargetTest {
    @TempDir
    Path dir;

    private final FileTargetFactory factory = new FileTargetFactory();

    private Target create(String... kv) throws IOException {
        return factory.create(context(kv));
    }

    private static TargetContext context(String... kv) {
        Map<String, String> args = new LinkedHashMap<>();
        for (String s : kv) {
            int eq = s.indexOf('=');
            args.put(s.substring(0, eq), s.substring(eq + 1));
        }
        return new TargetContext() {
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
                throw new InvalidArgumentException("no lower devices");
            }
        };
    }

    private String rejected(String... kv) {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> create(kv));
        String m = e.getMessage();
        assertFalse(m.contains("\n"), "one line: " + m);
        assertTrue(m.startsWith("file: "), m);
        return m;
    }

    private static long allocatedBytes(Path p) throws Exception {
        Process proc = new ProcessBuilder("stat", "-c", "%b %B", p.toString()).redirectErrorStream(true).start();
        String out = new String(proc.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertTrue(proc.waitFor(30, TimeUnit.SECONDS));
        String[] f = out.split(" ");
        return Long.parseLong(f[0]) * Long.parseLong(f[1]);
    }

    @Test
    void createsASparseFileOfTheGivenSize() throws Exception {
        Path p = dir.resolve("new.img");
        try (Target t = create("path=" + p, "size=1G", "create=true")) {
            assertEquals(1L << 30, t.size());
            assertEquals(4096, t.blockSize());
            assertEquals("file", t.type());
        }
        assertEquals(1L << 30, Files.size(p));
        assertTrue(allocatedBytes(p) < (1 << 20), "the new file must be sparse");
    }

    @Test
    void blockSizeIs512WhenTheSizeIsNotAMultipleOf4096() throws Exception {
        try (Target t = create("path=" + dir.resolve("odd.img"), "size=" + (4096 + 512), "create=true")) {
            assertEquals(512, t.blockSize());
            assertEquals(4608, t.size());
        }
    }

    @Test
    void dataPersistsAcrossCloseAndReopen() throws Exception {
        Path p = dir.resolve("persist.img");
        byte[] data = new byte[3 * 4096 + 512];
        new Random(5).nextBytes(data);
        try (Target t = create("path=" + p, "size=4M", "create=true")) {
            t.write(512 * 9, ByteBuffer.wrap(data), BlockDevice.FUA);
            t.write(3 << 20, ByteBuffer.wrap(data), 0);
            t.flush();
        }
        try (Target t = create("path=" + p)) { // existing file: its own size, no size= needed
            assertEquals(4 << 20, t.size());
            ByteBuffer b = ByteBuffer.allocate(data.length);
            t.read(512 * 9, b);
            assertArrayEquals(data, b.array());
            b.clear();
            t.read(3 << 20, b);
            assertArrayEquals(data, b.array());
        }
        try (Target t = create("path=" + p, "size=4M")) { // the same size given again is fine
            assertEquals(4 << 20, t.size());
        }
    }

    @Test
    void createTrueGrowsAnExistingFileButNeverShrinksIt() throws Exception {
        Path p = dir.resolve("grow.img");
        try (Target t = create("path=" + p, "size=1M", "create=true")) {
            byte[] one = new byte[512];
            one[0] = 42;
            t.write(512, ByteBuffer.wrap(one), 0);
        }
        assertTrue(rejected("path=" + p, "size=2M").contains("add create=true to grow it"));
        assertEquals(1 << 20, Files.size(p));
        try (Target t = create("path=" + p, "size=2M", "create=true")) {
            assertEquals(2 << 20, t.size());
            ByteBuffer b = ByteBuffer.allocate(512);
            t.read(512, b);
            assertEquals(42, b.get(0), "growing keeps the data");
        }
        assertTrue(rejected("path=" + p, "size=1M", "create=true").contains("never shrunk"));
        assertEquals(2 << 20, Files.size(p));
    }

    @Test
    void badInputIsRejectedWithOneLineAndNothingIsCreated() throws Exception {
        Path missing = dir.resolve("missing.img");
        assertTrue(rejected("size=1M").contains("missing argument 'path"));
        assertTrue(rejected("path=" + missing, "size=1M").contains("add create=true"));
        assertTrue(rejected("path=" + missing, "create=true").contains("give size="));
        assertTrue(rejected("path=" + missing, "size=1000", "create=true").contains("not a multiple of 512"));
        assertTrue(rejected("path=" + missing, "size=0", "create=true").contains("out of range"));
        assertTrue(rejected("path=" + missing, "size=lots", "create=true").contains("is not a size"));
        assertTrue(rejected("path=" + missing, "size=1M", "create=maybe").contains("not a boolean"));
        assertTrue(rejected("path=" + missing, "size=1M", "create=true", "colour=red").contains("unknown argument 'colour'"));
        assertTrue(rejected("path=" + dir.resolve("no/such/dir/x.img"), "size=1M", "create=true").contains("does not exist; create it first"));
        assertTrue(rejected("path=" + dir, "size=1M", "create=true").contains("is a directory"));
        assertTrue(rejected("path=/dev/null").contains("not a regular file"));
        Path odd = dir.resolve("odd.img");
        Files.write(odd, new byte[1000]);
        assertTrue(rejected("path=" + odd).contains("not a multiple of 512"));
        Path empty = dir.resolve("empty.img");
        Files.createFile(empty);
        assertTrue(rejected("path=" + empty).contains("is empty"));
        assertTrue(rejected("path=" + "bad\0path").contains("not a valid path"));
        assertFalse(Files.exists(missing), "nothing may be created by a rejected request");
        assertEquals(List.of("empty.img", "odd.img"), Files.list(dir).map(f -> f.getFileName().toString()).sorted().toList());
        assertEquals(1000, Files.size(odd));
        assertEquals(0, Files.size(empty));
    }

    @Test
    void lowerDevicesIsEmptyAndChecksTheArguments() {
        assertEquals(List.of(), factory.lowerDevices(Map.of("path", "x.img")));
        assertThrows(InvalidArgumentException.class, () -> factory.lowerDevices(Map.of("pth", "x.img")));
        assertFalse(factory.usage().isEmpty());
    }

    @Test
    void statusCountsOperations() throws Exception {
        try (Target t = create("path=" + dir.resolve("s.img"), "size=1M", "create=true")) {
            t.write(0, ByteBuffer.allocate(4096), BlockDevice.FUA);
            t.write(4096, ByteBuffer.allocate(512), 0);
            t.read(0, ByteBuffer.allocate(8192));
            t.flush();
            t.writeZeroes(0, 8192, 0);
            t.discard(0, 4096);
            Map<String, String> s = t.status();
            assertEquals(List.of("path", "size", "block_size", "reads", "read_bytes", "writes", "written_bytes",
                    "fua_writes", "flushes", "zeroes", "zeroed_bytes", "discards", "errors", "reopens"),
                    List.copyOf(s.keySet()));
            assertEquals("2", s.get("writes"));
            assertEquals("4608", s.get("written_bytes"));
            assertEquals("1", s.get("fua_writes"));
            assertEquals("1", s.get("reads"));
            assertEquals("8192", s.get("read_bytes"));
            assertEquals("1", s.get("flushes"));
            assertEquals("8192", s.get("zeroed_bytes"));
            assertEquals("1", s.get("discards"));
            assertEquals("0", s.get("errors"));
        }
    }

    @Test
    void anInterruptedCallerDoesNotBreakTheDevice() throws Exception {
        try (Target t = create("path=" + dir.resolve("i.img"), "size=1M", "create=true")) {
            byte[] data = new byte[4096];
            new Random(1).nextBytes(data);
            Thread.currentThread().interrupt();
            try {
                t.write(8192, ByteBuffer.wrap(data), BlockDevice.FUA);
                ByteBuffer b = ByteBuffer.allocate(4096);
                t.read(8192, b);
                t.flush();
                assertArrayEquals(data, b.array());
                assertTrue(Thread.currentThread().isInterrupted(), "the interrupt status must be kept");
            } finally {
                Thread.interrupted();
            }
            ByteBuffer b = ByteBuffer.allocate(4096);
            t.read(8192, b);
            assertArrayEquals(data, b.array());
        }
    }

    @Test
    void interruptsDuringIoFromAnotherThreadCauseNoErrors() throws Exception {
        try (Target t = create("path=" + dir.resolve("j.img"), "size=4M", "create=true")) {
            AtomicReference<Throwable> failure = new AtomicReference<>();
            CountDownLatch started = new CountDownLatch(1);
            int rounds = 3000;
            Thread writer = new Thread(() -> {
                ByteBuffer b = ByteBuffer.allocateDirect(4096);
                try {
                    started.countDown();
                    for (int i = 0; i < rounds; i++) {
                        b.clear();
                        b.putInt(0, i);
                        long off = (i % 1024) * 4096L;
                        t.write(off, b, 0);
                        b.clear();
                        t.read(off, b);
                        if (b.getInt(0) != i) {
                            throw new AssertionError("read back " + b.getInt(0) + " instead of " + i);
                        }
                        Thread.interrupted();
                    }
                } catch (Throwable e) {
                    failure.set(e);
                }
            });
            writer.start();
            assertTrue(started.await(30, TimeUnit.SECONDS));
            while (writer.isAlive()) {
                writer.interrupt();
                Thread.yield();
            }
            writer.join(TimeUnit.SECONDS.toMillis(60));
            if (failure.get() != null) {
                throw new AssertionError("I/O failed under interrupts", failure.get());
            }
            t.flush();
            assertEquals("0", t.status().get("errors"));
        }
    }

    @Test
    void ioAfterCloseFailsWithADeviceIOException() throws Exception {
        Target t = create("path=" + dir.resolve("c.img"), "size=1M", "create=true");
        t.close();
        t.close(); // idempotent
        DeviceIOException e = assertThrows(DeviceIOException.class, () -> t.write(0, ByteBuffer.allocate(512), 0));
        assertTrue(e.getMessage().contains("c.img"), e.getMessage());
        assertEquals(0, e.offset());
    }

    @Test
    void readsBeyondTheEndOfATruncatedFileReturnZeroes() throws Exception {
        Path p = dir.resolve("t.img");
        try (Target t = create("path=" + p, "size=1M", "create=true")) {
            byte[] ones = new byte[8192];
            java.util.Arrays.fill(ones, (byte) 1);
            t.write(0, ByteBuffer.wrap(ones), 0);
            try (RandomAccessFile raf = new RandomAccessFile(p.toFile(), "rw")) {
                raf.setLength(4096); // someone else shrinks the file
            }
            ByteBuffer b = ByteBuffer.allocate(8192);
            t.read(0, b);
            assertEquals(1, b.get(4095));
            assertEquals(0, b.get(4096));
            assertEquals(0, b.get(8191));
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
            assertEquals("file: " + path + " is already open as device 'd0'; one image file can back one device",
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
