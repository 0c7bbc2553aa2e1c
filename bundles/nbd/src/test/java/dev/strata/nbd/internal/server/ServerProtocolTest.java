package dev.strata.nbd.internal.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.nbd.internal.protocol.Nbd;
import dev.strata.nbd.testing.MemoryDevice;
import dev.strata.nbd.testing.RawClient;
import dev.strata.nbd.testing.RawClient.Chunk;
import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * Every command of the server in transmission, including each malformed case, over raw sockets
 * (the negotiation's options: {@link ServerNegotiationTest}).
 */
class ServerProtocolTest extends ServerFixture {
    // ---- transmission ----

    @Test
    void writeReadRoundTripSimpleAndStructured() throws IOException {
        byte[] data = random(1, 65536);
        try (RawClient c = client()) {
            c.go("disk", false, false);
            c.request(Nbd.CMD_FLAG_FUA, Nbd.CMD_WRITE, 1, 1 << 20, data.length, data);
            assertEquals(new RawClient.Simple(0, 1), c.simple());
            assertEquals(1, device.fuaWrites.get());
            c.request(0, Nbd.CMD_READ, 2, 1 << 20, data.length, null);
            assertEquals(new RawClient.Simple(0, 2), c.simple());
            assertArrayEquals(data, c.read(data.length).array());
        }
        try (RawClient c = client()) {
            c.go("disk", true, false);
            c.request(Nbd.CMD_FLAG_DF, Nbd.CMD_READ, 3, 1 << 20, data.length, null);
            Chunk ch = c.any();
            assertEquals(Nbd.REPLY_TYPE_OFFSET_DATA, ch.type());
            assertEquals(Nbd.REPLY_FLAG_DONE, ch.flags());
            assertEquals(3, ch.cookie());
            assertEquals(1 << 20, ch.buf().getLong());
            assertArrayEquals(data, Arrays.copyOfRange(ch.payload(), 8, ch.payload().length));
        }
        assertEquals(2 * data.length, server.export("disk").bytesRead());
        assertEquals(data.length, server.export("disk").bytesWritten());
    }

    @Test
    void repliesComeBackOutOfOrder() throws Exception {
        device.gate = new CountDownLatch(1);
        device.blockReadsAt = 4096;
        try (RawClient c = client()) {
            c.go("disk", false, false);
            c.request(0, Nbd.CMD_READ, 1, 4096, 512, null); // blocks in the device
            c.request(0, Nbd.CMD_READ, 2, 0, 512, null);
            assertEquals(2, c.simple().cookie());
            c.read(512);
            device.gate.countDown();
            assertEquals(1, c.simple().cookie());
            c.read(512);
        } finally {
            device.gate.countDown();
        }
    }

    @Test
    void readPastEndIsEinvalAndConnectionKept() throws IOException {
        try (RawClient c = client()) {
            c.go("disk", false, false);
            c.request(0, Nbd.CMD_READ, 1, SIZE - 512, 1024, null);
            assertEquals(new RawClient.Simple(Nbd.EINVAL, 1), c.simple());
            c.request(0, Nbd.CMD_READ, 2, -512, 512, null); // offset 2^64-512
            assertEquals(new RawClient.Simple(Nbd.EINVAL, 2), c.simple());
            c.request(0, Nbd.CMD_READ, 3, SIZE - 512, 512, null); // the last sector is fine
            assertEquals(new RawClient.Simple(0, 3), c.simple());
            c.read(512);
        }
        assertServerStillWorks();
    }

    @Test
    void writePastEndIsEnospcWithPayloadDrained() throws IOException {
        try (RawClient c = client()) {
            c.go("disk", true, false);
            c.request(0, Nbd.CMD_WRITE, 1, SIZE - 512, 4096, random(2, 4096));
            Chunk e = c.any();
            assertEquals(Nbd.REPLY_TYPE_ERROR, e.type());
            assertEquals(Nbd.ENOSPC, e.errno());
            assertEquals(1, e.cookie());
            c.request(0, Nbd.CMD_READ, 2, 0, 512, null);
            assertEquals(2, c.any().cookie());
        }
    }

    @Test
    void oversizeRequestsAreRefusedWithoutAllocating() throws IOException {
        try (RawClient c = client()) {
            c.go("disk", false, false);
            c.request(0, Nbd.CMD_READ, 1, 0, 0xffffffffL, null);
            assertEquals(new RawClient.Simple(Nbd.EINVAL, 1), c.simple());
            // a write claiming 64 MiB: the payload is skipped, not stored
            byte[] chunk = new byte[1 << 20];
            c.request(0, Nbd.CMD_WRITE, 2, 0, 64 << 20, null);
            for (int i = 0; i < 64; i++) {
                c.send(ByteBuffer.wrap(chunk));
            }
            assertEquals(new RawClient.Simple(Nbd.EINVAL, 2), c.simple());
            c.request(0, Nbd.CMD_FLUSH, 3, 0, 0, null);
            assertEquals(new RawClient.Simple(0, 3), c.simple());
        }
    }

    @Test
    void badRequestMagicDropsOnlyThatConnection() throws IOException {
        try (RawClient good = client(); RawClient bad = client()) {
            good.go("disk", false, false);
            bad.go("disk", false, false);
            bad.send(ByteBuffer.allocate(28).putInt(0xdeadbeef).position(28).flip());
            assertTrue(bad.closedByServer());
            good.request(0, Nbd.CMD_FLUSH, 9, 0, 0, null);
            assertEquals(new RawClient.Simple(0, 9), good.simple());
        }
        assertServerStillWorks();
    }

    @Test
    void truncatedHeaderAndPayloadDropTheConnection() throws IOException {
        try (RawClient c = client()) {
            c.go("disk", false, false);
            c.send(ByteBuffer.allocate(10).putInt(Nbd.REQUEST_MAGIC).flip());
            c.ch.shutdownOutput();
            assertTrue(c.closedByServer());
        }
        try (RawClient c = client()) {
            c.go("disk", false, false);
            c.request(0, Nbd.CMD_WRITE, 1, 0, 4096, new byte[100]);
            c.ch.shutdownOutput();
            assertTrue(c.closedByServer());
        }
        assertServerStillWorks();
    }

    @Test
    void unknownCommandsAndFlagsAreEinval() throws IOException {
        try (RawClient c = client()) {
            c.go("disk", false, false);
            c.request(0, 42, 1, 0, 512, null);
            assertEquals(new RawClient.Simple(Nbd.EINVAL, 1), c.simple());
            c.request(0x8000, Nbd.CMD_READ, 2, 0, 512, null);
            assertEquals(new RawClient.Simple(Nbd.EINVAL, 2), c.simple());
            c.request(Nbd.CMD_FLAG_DF, Nbd.CMD_READ, 3, 0, 512, null); // DF without structured replies
            assertEquals(new RawClient.Simple(Nbd.EINVAL, 3), c.simple());
            c.request(Nbd.CMD_FLAG_NO_HOLE, Nbd.CMD_WRITE, 4, 0, 512, new byte[512]);
            assertEquals(new RawClient.Simple(Nbd.EINVAL, 4), c.simple());
            c.request(0, Nbd.CMD_BLOCK_STATUS, 5, 0, 512, null); // no context selected
            assertEquals(new RawClient.Simple(Nbd.EINVAL, 5), c.simple());
            c.request(0, Nbd.CMD_READ, 6, 0, 512, null);
            assertEquals(new RawClient.Simple(0, 6), c.simple());
            c.read(512);
        }
    }

    @Test
    void readOnlyExportRefusesWrites() throws IOException {
        try (RawClient c = new RawClient(addr)) {
            c.go("ro", false, false);
            c.request(0, Nbd.CMD_WRITE, 1, 0, 512, new byte[512]);
            assertEquals(new RawClient.Simple(Nbd.EPERM, 1), c.simple());
            c.request(0, Nbd.CMD_TRIM, 2, 0, 512, null);
            assertEquals(new RawClient.Simple(Nbd.EPERM, 2), c.simple());
            c.request(0, Nbd.CMD_WRITE_ZEROES, 3, 0, 512, null);
            assertEquals(new RawClient.Simple(Nbd.EPERM, 3), c.simple());
            c.request(0, Nbd.CMD_READ, 4, 0, 512, null);
            assertEquals(new RawClient.Simple(0, 4), c.simple());
            c.read(512);
        }
    }

    @Test
    void flushTrimCacheAndFuaEverywhere() throws IOException {
        try (RawClient c = client()) {
            c.go("disk", false, false);
            c.request(Nbd.CMD_FLAG_FUA, Nbd.CMD_FLUSH, 1, 0, 0, null);
            assertEquals(new RawClient.Simple(0, 1), c.simple());
            assertTrue(device.flushes.get() >= 1);
            int flushes = device.flushes.get();
            c.request(Nbd.CMD_FLAG_FUA, Nbd.CMD_TRIM, 2, 65536, 65536, null);
            assertEquals(new RawClient.Simple(0, 2), c.simple());
            assertEquals(1, device.discards.get());
            assertEquals(flushes + 1, device.flushes.get(), "FUA on TRIM flushes");
            c.request(Nbd.CMD_FLAG_FUA, Nbd.CMD_CACHE, 3, 0, 1 << 20, null);
            assertEquals(new RawClient.Simple(0, 3), c.simple());
            c.request(0, Nbd.CMD_CACHE, 4, SIZE, 512, null);
            assertEquals(new RawClient.Simple(Nbd.EINVAL, 4), c.simple());
            c.request(Nbd.CMD_FLAG_FUA, Nbd.CMD_READ, 5, 0, 512, null);
            assertEquals(new RawClient.Simple(0, 5), c.simple());
            c.read(512);
            c.request(0, Nbd.CMD_TRIM, 6, SIZE - 512, 1024, null);
            assertEquals(new RawClient.Simple(Nbd.EINVAL, 6), c.simple());
        }
    }

    @Test
    void writeZeroesWithFlags() throws IOException {
        byte[] data = random(3, 8192);
        try (RawClient c = client()) {
            c.go("disk", false, false);
            c.request(0, Nbd.CMD_WRITE, 1, 0, 8192, data);
            assertEquals(0, c.simple().error());
            c.request(Nbd.CMD_FLAG_NO_HOLE | Nbd.CMD_FLAG_FUA, Nbd.CMD_WRITE_ZEROES, 2, 1024, 4096, null);
            assertEquals(new RawClient.Simple(0, 2), c.simple());
            assertEquals(BlockDevice.NO_HOLE | BlockDevice.FUA, device.lastZeroFlags.get());
            byte[] expect = data.clone();
            Arrays.fill(expect, 1024, 1024 + 4096, (byte) 0);
            assertArrayEquals(expect, device.bytes(0, 8192));
            c.request(Nbd.CMD_FLAG_FAST_ZERO, Nbd.CMD_WRITE_ZEROES, 3, 0, 4096, null);
            assertEquals(new RawClient.Simple(Nbd.ENOTSUP, 3), c.simple());
            assertArrayEquals(expect, device.bytes(0, 8192), "a refused fast zero changes nothing");
            c.request(0, Nbd.CMD_WRITE_ZEROES, 4, SIZE - 512, 1024, null);
            assertEquals(new RawClient.Simple(Nbd.ENOSPC, 4), c.simple());
            // unaligned zeroing: bytes 100..700
            c.request(0, Nbd.CMD_WRITE_ZEROES, 5, 100, 600, null);
            assertEquals(new RawClient.Simple(0, 5), c.simple());
            Arrays.fill(expect, 100, 700, (byte) 0);
            assertArrayEquals(expect, device.bytes(0, 8192));
        }
    }

    @Test
    void fastZeroSucceedsWhenTheDeviceCanDoIt() throws IOException {
        MemoryDevice fast = new MemoryDevice(1 << 20, true);
        server.addExport("fast", "", fast, addr, false);
        try (RawClient c = client()) {
            c.greet(Nbd.FLAG_C_FIXED_NEWSTYLE);
            c.option(Nbd.OPT_GO, RawClient.goData("fast"));
            ByteBuffer d = c.optReply().buf();
            d.getShort();
            d.getLong();
            assertTrue((d.getShort() & Nbd.FLAG_SEND_FAST_ZERO) != 0, "fast zero advertised");
            while (c.optReply().type() != Nbd.REP_ACK) {
                // block size info
            }
            c.request(Nbd.CMD_FLAG_FAST_ZERO, Nbd.CMD_WRITE_ZEROES, 1, 0, 65536, null);
            assertEquals(new RawClient.Simple(0, 1), c.simple());
        }
    }

    @Test
    void blockStatusReportsBaseAllocation() throws IOException {
        try (RawClient c = client()) {
            c.go("disk", true, true);
            c.request(0, Nbd.CMD_WRITE, 1, 0, 4096, random(4, 4096));
            c.any();
            c.request(0, Nbd.CMD_BLOCK_STATUS, 2, 0, 3 * MemoryDevice.CHUNK, null);
            Chunk s = c.any();
            assertEquals(Nbd.REPLY_TYPE_BLOCK_STATUS, s.type());
            ByteBuffer b = s.buf();
            assertEquals(1, b.getInt());
            assertEquals(MemoryDevice.CHUNK, b.getInt());
            assertEquals(0, b.getInt());
            assertEquals(2 * MemoryDevice.CHUNK, b.getInt(), "adjacent holes are merged");
            assertEquals(Nbd.STATE_HOLE | Nbd.STATE_ZERO, b.getInt());
            assertFalse(b.hasRemaining());
            c.request(Nbd.CMD_FLAG_REQ_ONE, Nbd.CMD_BLOCK_STATUS, 3, 1000, 3 * MemoryDevice.CHUNK, null);
            b = c.any().buf();
            b.getInt();
            assertEquals(MemoryDevice.CHUNK - 1000, b.getInt());
            assertFalse(b.getInt() != 0 || b.hasRemaining());
            c.request(0, Nbd.CMD_BLOCK_STATUS, 4, SIZE, 512, null);
            Chunk e = c.any();
            assertEquals(Nbd.REPLY_TYPE_ERROR, e.type());
            assertEquals(Nbd.EINVAL, e.errno());
        }
    }

    @Test
    void unalignedReadsAndWrites() throws IOException {
        byte[] before = random(5, 4096);
        byte[] patch = random(6, 1000);
        try (RawClient c = client()) {
            c.go("disk", false, false);
            c.request(0, Nbd.CMD_WRITE, 1, 0, 4096, before);
            c.simple();
            c.request(0, Nbd.CMD_WRITE, 2, 300, 1000, patch);
            assertEquals(new RawClient.Simple(0, 2), c.simple());
            byte[] expect = before.clone();
            System.arraycopy(patch, 0, expect, 300, 1000);
            assertArrayEquals(expect, device.bytes(0, 4096));
            c.request(0, Nbd.CMD_READ, 3, 7, 3001, null);
            assertEquals(new RawClient.Simple(0, 3), c.simple());
            assertArrayEquals(Arrays.copyOfRange(expect, 7, 3008), c.read(3001).array());
        }
    }

    @Test
    void zeroLengthRequestsSucceed() throws IOException {
        try (RawClient c = client()) {
            c.go("disk", true, false);
            c.request(0, Nbd.CMD_READ, 1, 0, 0, null);
            Chunk ch = c.any();
            assertEquals(Nbd.REPLY_TYPE_NONE, ch.type());
            assertEquals(Nbd.REPLY_FLAG_DONE, ch.flags());
            c.request(0, Nbd.CMD_WRITE, 2, 0, 0, null);
            assertEquals(0, c.any().errno());
        }
    }

    @Test
    void discFinishesRunningRequestsThenCloses() throws Exception {
        device.gate = new CountDownLatch(1);
        device.blockReadsAt = 8192;
        try (RawClient c = client()) {
            c.go("disk", false, false);
            c.request(0, Nbd.CMD_READ, 1, 8192, 512, null);
            c.request(0, Nbd.CMD_DISC, 2, 0, 0, null);
            device.gate.countDown();
            assertEquals(new RawClient.Simple(0, 1), c.simple());
            c.read(512);
            assertTrue(c.closedByServer());
        } finally {
            device.gate.countDown();
        }
        assertServerStillWorks();
    }

    @Test
    void clientResettingWithRepliesQueuedDisturbsNobody() throws Exception {
        try (RawClient good = client()) {
            good.go("disk", false, false);
            for (int round = 0; round < 5; round++) {
                RawClient bad = client();
                bad.go("disk", false, false);
                ByteBuffer many = ByteBuffer.allocate(28 * 200);
                for (int i = 0; i < 200; i++) {
                    many.putInt(Nbd.REQUEST_MAGIC).putShort((short) 0).putShort((short) Nbd.CMD_READ).putLong(i)
                            .putLong(0).putInt(1 << 20);
                }
                bad.send(many.flip());
                bad.ch.setOption(StandardSocketOptions.SO_LINGER, 0);
                bad.close(); // RST with megabytes of replies queued
                byte[] data = random(round, 4096);
                good.request(0, Nbd.CMD_WRITE, 100 + round, 4096L * round, 4096, data);
                assertEquals(new RawClient.Simple(0, 100 + round), good.simple());
                good.request(0, Nbd.CMD_READ, 200 + round, 4096L * round, 4096, null);
                assertEquals(new RawClient.Simple(0, 200 + round), good.simple());
                assertArrayEquals(data, good.read(4096).array());
            }
        }
        assertServerStillWorks();
    }

    @Test
    void manyRequestsInFlightOnOneConnection() throws IOException {
        try (RawClient c = client()) {
            c.go("disk", false, false);
            int n = 64;
            ByteBuffer batch = ByteBuffer.allocate(n * (28 + 4096));
            byte[][] data = new byte[n][];
            for (int i = 0; i < n; i++) {
                data[i] = random(100 + i, 4096);
                batch.putInt(Nbd.REQUEST_MAGIC).putShort((short) 0).putShort((short) Nbd.CMD_WRITE).putLong(i)
                        .putLong(4096L * i).putInt(4096).put(data[i]);
            }
            c.send(batch.flip());
            java.util.Set<Long> seen = new java.util.HashSet<>();
            for (int i = 0; i < n; i++) {
                RawClient.Simple s = c.simple();
                assertEquals(0, s.error());
                seen.add(s.cookie());
            }
            assertEquals(n, seen.size());
            for (int i = 0; i < n; i++) {
                assertArrayEquals(data[i], device.bytes(4096L * i, 4096));
            }
        }
    }
}
