package dev.strata.nbd.internal.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.strata.nbd.internal.protocol.Nbd;
import dev.strata.nbd.testing.MemoryDevice;
import dev.strata.nbd.testing.RawClient;
import dev.strata.nbd.testing.RawClient.Chunk;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * What the raw-socket tests of the server share: a server with two exports over memory devices
 * ({@code disk}, 16 MiB; {@code ro}, read-only, on the same port), a raw client, and the check that
 * a new connection still negotiates and moves data.
 */
abstract class ServerFixture {
    static final long SIZE = 16 << 20;
    NbdServer server;
    MemoryDevice device;
    MemoryDevice roDevice;
    InetSocketAddress addr;

    @BeforeEach
    void start() throws IOException {
        server = new NbdServer();
        device = new MemoryDevice(SIZE);
        roDevice = new MemoryDevice(1 << 20);
        Export e = server.addExport("disk", "test disk", device, new InetSocketAddress("127.0.0.1", 0), false);
        addr = new InetSocketAddress("127.0.0.1", e.port());
        server.addExport("ro", "", roDevice, addr, true);
    }

    @AfterEach
    void stop() {
        server.close();
    }

    RawClient client() throws IOException {
        return new RawClient(addr);
    }

    /** A new connection still negotiates and moves data. */
    void assertServerStillWorks() throws IOException {
        try (RawClient c = client()) {
            assertEquals(SIZE, c.go("disk", true, false));
            byte[] data = new byte[4096];
            Arrays.fill(data, (byte) 0x5a);
            c.request(0, Nbd.CMD_WRITE, 77, 8192, 4096, data);
            assertEquals(0, c.simple().error());
            c.request(0, Nbd.CMD_READ, 78, 8192, 4096, null);
            Chunk ch = c.any();
            assertEquals(Nbd.REPLY_TYPE_OFFSET_DATA, ch.type());
            assertArrayEquals(data, Arrays.copyOfRange(ch.payload(), 8, 8 + 4096));
        }
    }

    static byte[] random(long seed, int n) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }
}
