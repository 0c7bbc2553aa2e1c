package dev.strata.nbd.internal.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceIOException;
import dev.strata.api.DeviceTimeoutException;
import dev.strata.api.FastZeroUnsupportedException;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.OutOfRangeException;
import dev.strata.nbd.internal.server.Export;
import dev.strata.nbd.internal.server.NbdServer;
import dev.strata.nbd.testing.CuttableProxy;
import dev.strata.nbd.testing.MemoryDevice;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class NbdTargetTest {
    static final long SIZE = 64L << 20;
    NbdServer server;
    MemoryDevice device;
    int port;

    @BeforeEach
    void start() throws Exception {
        server = new NbdServer();
        device = new MemoryDevice(SIZE);
        Export e = server.addExport("disk", "", device, new InetSocketAddress("127.0.0.1", 0), false);
        port = e.port();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    NbdTarget target(int p, String timeout, int connections) throws Exception {
        return new NbdTarget("remote", NbdUri.parse("nbd://127.0.0.1:" + p + "/disk"),
                NbdTargetFactory.duration(timeout), connections);
    }

    static byte[] random(long seed, int n) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void readsWritesAndFlagsReachTheServer() throws Exception {
        try (NbdTarget t = target(port, "10s", 1)) {
            assertEquals(SIZE, t.size());
            assertEquals(4096, t.blockSize());
            byte[] data = random(1, 1 << 20);
            t.write(4096, ByteBuffer.wrap(data), BlockDevice.FUA);
            assertEquals(1, device.fuaWrites.get());
            assertArrayEquals(data, device.bytes(4096, data.length));
            ByteBuffer back = ByteBuffer.allocateDirect(data.length);
            t.read(4096, back);
            assertEquals(back.limit(), back.position());
            byte[] got = new byte[data.length];
            back.flip().get(got);
            assertArrayEquals(data, got);
            int flushes = device.flushes.get();
            t.flush();
            assertEquals(flushes + 1, device.flushes.get());
            t.writeZeroes(4096, 8192, BlockDevice.NO_HOLE);
            assertArrayEquals(new byte[8192], device.bytes(4096, 8192));
            assertEquals(BlockDevice.NO_HOLE, device.lastZeroFlags.get());
            assertThrows(FastZeroUnsupportedException.class, () -> t.writeZeroes(0, 4096, BlockDevice.FAST_ZERO));
            t.discard(0, 1 << 20);
            assertEquals(1, device.discards.get());
            assertThrows(OutOfRangeException.class, () -> t.read(SIZE, ByteBuffer.allocate(512)));
            Map<String, String> s = t.status();
            assertEquals("nbd://127.0.0.1:" + port + "/disk", s.get("uri"));
            assertEquals("1", s.get("connected"));
        }
    }

    @Test
    void requestsLargerThanTheMaximumBlockAreSplit() throws Exception {
        try (NbdTarget t = target(port, "30s", 2)) {
            byte[] data = random(2, 40 << 20);
            t.write(0, ByteBuffer.wrap(data), 0);
            ByteBuffer back = ByteBuffer.allocate(data.length);
            t.read(0, back);
            assertArrayEquals(data, back.array());
        }
    }

    @Test
    void manyThreadsPipelineOnFewConnections() throws Exception {
        try (NbdTarget t = target(port, "30s", 2)) {
            ExecutorService pool = Executors.newFixedThreadPool(16);
            try {
                List<Future<?>> fs = new ArrayList<>();
                for (int i = 0; i < 16; i++) {
                    int id = i;
                    fs.add(pool.submit(() -> {
                        for (int k = 0; k < 50; k++) {
                            long off = (id * 50L + k) * 8192;
                            byte[] d = random(off, 8192);
                            t.write(off, ByteBuffer.wrap(d), 0);
                            ByteBuffer b = ByteBuffer.allocate(8192);
                            t.read(off, b);
                            assertArrayEquals(d, b.array());
                        }
                        return null;
                    }));
                }
                for (Future<?> f : fs) {
                    f.get(120, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @Test
    void reconnectsAndRetriesWithoutFailingIo() throws Exception {
        try (CuttableProxy proxy = new CuttableProxy(new InetSocketAddress("127.0.0.1", port));
                NbdTarget t = target(proxy.port(), "60s", 2)) {
            AtomicBoolean stop = new AtomicBoolean();
            ExecutorService pool = Executors.newFixedThreadPool(8);
            List<Future<Integer>> fs = new ArrayList<>();
            try {
                for (int i = 0; i < 8; i++) {
                    int id = i;
                    fs.add(pool.submit(() -> {
                        int ops = 0;
                        long base = id * (4L << 20);
                        while (!stop.get() || ops < 200) {
                            long off = base + (ops % 512) * 8192L;
                            byte[] d = random(off * 31 + ops, 8192);
                            t.write(off, ByteBuffer.wrap(d), ops % 7 == 0 ? BlockDevice.FUA : 0);
                            ByteBuffer b = ByteBuffer.allocate(8192);
                            t.read(off, b);
                            assertArrayEquals(d, b.array(), "read after write at " + off);
                            if (ops % 50 == 0) {
                                t.flush();
                            }
                            ops++;
                        }
                        return ops;
                    }));
                }
                for (int cut = 0; cut < 5; cut++) {
                    long before = Long.parseLong(t.status().get("reconnects"));
                    proxy.cutAll();
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                    while (Long.parseLong(t.status().get("reconnects")) <= before) {
                        assertTrue(System.nanoTime() < deadline, "the target did not reconnect");
                        synchronized (this) {
                            wait(5);
                        }
                    }
                }
                stop.set(true);
                int total = 0;
                for (Future<Integer> f : fs) {
                    total += f.get(120, TimeUnit.SECONDS); // any failed I/O fails here
                }
                assertTrue(total >= 8 * 200);
                assertTrue(Long.parseLong(t.status().get("reconnects")) >= 5, t.status().toString());
            } finally {
                stop.set(true);
                pool.shutdownNow();
            }
        }
    }

    @Test
    void givesUpAfterTheTimeoutWithAClearError() throws Exception {
        try (CuttableProxy proxy = new CuttableProxy(new InetSocketAddress("127.0.0.1", port));
                NbdTarget t = target(proxy.port(), "1s", 1)) {
            t.write(0, ByteBuffer.wrap(new byte[4096]), 0);
            proxy.refuse(true);
            proxy.cutAll();
            DeviceIOException e = assertThrows(DeviceIOException.class, () -> t.read(0, ByteBuffer.allocate(4096)));
            assertTrue(e instanceof DeviceTimeoutException, e.toString());
            assertTrue(e.getMessage().contains("remote at offset 0") && e.getMessage().contains("timeout of 1000 ms"),
                    e.getMessage());
            proxy.refuse(false);
            ByteBuffer b = ByteBuffer.allocate(4096);
            t.read(0, b); // back once the server is reachable again
            assertEquals(4096, b.position());
        }
    }

    @Test
    void serverErrorsBecomeDeviceIoExceptions() throws Exception {
        server.addExport("ro", "", new MemoryDevice(1 << 20), new InetSocketAddress("127.0.0.1", port), true);
        try (NbdTarget t = new NbdTarget("remote", NbdUri.parse("nbd://127.0.0.1:" + port + "/ro"), 10_000, 1)) {
            DeviceIOException e = assertThrows(DeviceIOException.class, () -> t.write(0, ByteBuffer.allocate(512), 0));
            assertTrue(e.getMessage().contains("EPERM"), e.getMessage());
            t.read(0, ByteBuffer.allocate(512)); // the connection is still fine
        }
    }

    @Test
    void argumentsAreCheckedAndConnectFailuresAreClear() throws Exception {
        NbdTargetFactory f = new NbdTargetFactory();
        assertThrows(InvalidArgumentException.class, () -> f.lowerDevices(Map.of()));
        assertTrue(assertThrows(InvalidArgumentException.class, () -> f.lowerDevices(Map.of("uri", "http://x/y")))
                .getMessage().contains("nbd://host:port/export"));
        assertThrows(InvalidArgumentException.class, () -> f.lowerDevices(Map.of("uri", "nbd://h/e", "timeout", "soon")));
        assertThrows(InvalidArgumentException.class, () -> f.lowerDevices(Map.of("uri", "nbd://h/e", "connections", "0")));
        assertThrows(InvalidArgumentException.class, () -> f.lowerDevices(Map.of("uri", "nbd://h/e", "colour", "red")));
        assertEquals(List.of(), f.lowerDevices(Map.of("uri", "nbd://h/e", "timeout", "500ms", "connections", "4")));
        assertEquals(new NbdUri("h", 10809, "e"), NbdUri.parse("nbd://h/e"));
        int free;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            free = s.getLocalPort();
        }
        DeviceIOException e = assertThrows(DeviceIOException.class, () -> target(free, "2s", 1));
        assertTrue(e.getMessage().contains("cannot connect to nbd://127.0.0.1:" + free + "/disk"), e.getMessage());
        e = assertThrows(DeviceIOException.class,
                () -> new NbdTarget("remote", NbdUri.parse("nbd://127.0.0.1:" + port + "/nope"), 2000, 1));
        assertTrue(e.getMessage().contains("refused export 'nope'"), e.getMessage());
    }

    @Test
    void importsAUnixSocketExportThroughTheFactoryAndReconnectsAfterReexport(@org.junit.jupiter.api.io.TempDir
            java.nio.file.Path tmp) throws Exception {
        java.nio.file.Path sock = tmp.resolve("t.sock");
        server.addUnixExport("u", "", device, sock, "0600", false, dev.strata.nbd.internal.server.ExportLimits.NONE);
        NbdTargetFactory.Parsed p = NbdTargetFactory.parse(Map.of("uri", "nbd+unix:///u?socket=" + sock,
                "timeout", "20s", "connections", "2"));
        assertTrue(p.uri().isUnix());
        byte[] data = random(11, 256 * 1024);
        try (NbdTarget t = new NbdTarget("local", p.uri(), p.timeoutMillis(), p.connections())) {
            assertEquals(SIZE, t.size());
            t.write(4096, ByteBuffer.wrap(data), BlockDevice.FUA);
            assertArrayEquals(data, device.bytes(4096, data.length));
            // the server goes away (socket file removed) and comes back on the same path
            server.removeExport("u", 10_000);
            assertTrue(!java.nio.file.Files.exists(sock));
            server.addUnixExport("u", "", device, sock, "0600", false, dev.strata.nbd.internal.server.ExportLimits.NONE);
            ByteBuffer back = ByteBuffer.allocate(data.length);
            t.read(4096, back);
            assertArrayEquals(data, back.array());
        }
        DeviceIOException e = assertThrows(DeviceIOException.class, () -> new NbdTarget("local",
                NbdUri.parse("nbd+unix:///u?socket=" + tmp.resolve("none.sock")), 2000, 1));
        assertTrue(e.getMessage().contains("cannot connect to nbd+unix:///u?socket="), e.getMessage());
    }
}
