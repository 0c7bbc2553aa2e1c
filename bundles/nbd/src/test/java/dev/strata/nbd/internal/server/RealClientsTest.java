package dev.strata.nbd.internal.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.nbd.testing.MemoryDevice;
import dev.strata.nbd.testing.Tools;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Black-box tests with real clients (nbdinfo, qemu-io, nbdcopy, fio) against the server running
 * in this JVM over a RAM device. A missing client fails the test, naming its Debian package.
 */
class RealClientsTest {
    static final long SIZE = 64L << 20;
    @TempDir
    Path tmp;
    NbdServer server;
    MemoryDevice device;
    String uri;
    int port;

    @BeforeEach
    void start() throws IOException {
        server = new NbdServer();
        device = new MemoryDevice(SIZE);
        Export e = server.addExport("disk", "RAM disk for tests", device, new InetSocketAddress("127.0.0.1", 0), false);
        port = e.port();
        uri = "nbd://127.0.0.1:" + port + "/disk";
    }

    @AfterEach
    void stop() {
        server.close();
    }

    @Test
    void nbdinfoJsonAndListAgree() throws Exception {
        Tools.require("nbdinfo", "libnbd-bin");
        String json = Tools.ok(tmp, "nbdinfo", "--json", uri);
        assertEquals(SIZE, number(json, "export-size"), json);
        assertEquals(512, number(json, "block_size_minimum"), json);
        assertEquals(4096, number(json, "block_size_preferred"), json);
        assertEquals(32L << 20, number(json, "block_size_maximum"), json);
        assertTrue(json.contains("\"can_multi_conn\": true"), json);
        assertTrue(json.contains("\"can_fua\": true"), json);
        assertTrue(json.contains("\"can_zero\": true"), json);
        assertTrue(json.contains("\"can_fast_zero\": false"), json); // the RAM device cannot zero faster than it writes
        assertTrue(json.contains("\"can_trim\": true"), json);
        assertTrue(json.contains("\"can_cache\": true"), json);
        assertTrue(json.contains("base:allocation"), json);
        String list = Tools.ok(tmp, "nbdinfo", "--list", "--json", "nbd://127.0.0.1:" + port);
        assertTrue(list.contains("\"export-name\": \"disk\""), list);
        assertEquals(SIZE, number(list, "export-size"), list);
        assertTrue(list.contains("RAM disk for tests"), list);
    }

    private static long number(String json, String key) {
        Matcher m = Pattern.compile("\"" + key + "\":\\s*(\\d+)").matcher(json);
        assertTrue(m.find(), key + " not in " + json);
        return Long.parseLong(m.group(1));
    }

    @Test
    void qemuIoPatternsFuaFlushZeroDiscardLastBlockUnaligned() throws Exception {
        Tools.require("qemu-io", "qemu-utils");
        long last = SIZE - 4096;
        String out = Tools.ok(tmp, "qemu-io", "-f", "raw", uri,
                "-c", "write -P 0xab 0 1M",
                "-c", "read -P 0xab 0 1M",
                "-c", "write -f -P 0xcd 1M 64k",
                "-c", "read -P 0xcd 1M 64k",
                "-c", "flush",
                "-c", "write -z 128k 64k",
                "-c", "read -P 0 128k 64k",
                "-c", "read -P 0xab 192k 64k",
                "-c", "discard 256k 64k",
                "-c", "write -P 0xee " + last + " 4k",
                "-c", "read -P 0xee " + last + " 4k",
                "-c", "write -P 0x11 3000 333",
                "-c", "read -P 0x11 3000 333",
                "-c", "read -P 0xab 2048 952",
                "-c", "read -P 0xab 3333 4000",
                "-c", "aio_write -P 0x22 2M 4k",
                "-c", "aio_write -P 0x33 3M 4k",
                "-c", "aio_flush",
                "-c", "read -P 0x22 2M 4k",
                "-c", "read -P 0x33 3M 4k");
        assertFalse(out.contains("fail") || out.contains("error") || out.contains("Error"), out);
        assertTrue(device.fuaWrites.get() >= 1, "qemu-io write -f reached the device as FUA");
        assertTrue(device.flushes.get() >= 1);
        assertTrue(device.zeroes.get() >= 1);
        // the device holds what qemu wrote
        byte[] lastBlock = device.bytes(last, 4096);
        for (byte b : lastBlock) {
            assertEquals((byte) 0xee, b);
        }
        // reading past the end fails cleanly and the export still works afterwards
        Tools.Result past = Tools.run(tmp, "qemu-io", "-f", "raw", uri, "-c", "read " + SIZE + " 4k");
        assertTrue(past.output().toLowerCase().contains("error") || past.output().contains("Input/output")
                || past.output().contains("Invalid") || past.exit() != 0, past.output());
        Tools.ok(tmp, "qemu-io", "-f", "raw", uri, "-c", "read -P 0xee " + last + " 4k");
    }

    @Test
    void nbdcopyRoundTripWithFourConnections() throws Exception {
        Tools.require("nbdcopy", "libnbd-bin");
        Path src = tmp.resolve("src.img");
        Path back = tmp.resolve("back.img");
        byte[] data = new byte[(int) SIZE];
        new Random(42).nextBytes(data);
        Files.write(src, data);
        Tools.ok(tmp, "nbdcopy", "-C", "4", src.toString(), uri);
        assertTrue(server.export("disk").bytesWritten() >= SIZE);
        Tools.ok(tmp, "nbdcopy", "-C", "4", uri, back.toString());
        assertEquals(-1, Files.mismatch(src, back), "round trip differs");
        assertArrayEquals(java.util.Arrays.copyOf(data, 4096), device.bytes(0, 4096));
    }

    @Test
    void fioVerifiesRandom4kAtQueueDepth32() throws Exception {
        Tools.require("fio", "fio");
        String out = Tools.ok(tmp, "fio", "--name=rand4k", "--ioengine=nbd", "--uri=" + uri, "--rw=randwrite",
                "--bs=4k", "--iodepth=32", "--size=16m", "--verify=crc32c", "--do_verify=1", "--verify_fatal=1",
                "--output-format=normal");
        assertTrue(out.contains("rand4k"), out);
        assertFalse(out.contains("verify:") && out.contains("bad"), out);
        assertTrue(out.contains("err= 0"), out);
    }

    @Test
    void fioVerifiesMixedBlockSizes() throws Exception {
        Tools.require("fio", "fio");
        String out = Tools.ok(tmp, "fio", "--name=mixed", "--ioengine=nbd", "--uri=" + uri, "--rw=randwrite",
                "--bsrange=4k-1m", "--bs_unaligned=0", "--iodepth=16", "--size=48m", "--verify=crc32c",
                "--do_verify=1", "--verify_fatal=1");
        assertTrue(out.contains("err= 0"), out);
    }
}
