package dev.strata.nbd.internal.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.nbd.internal.protocol.Nbd;
import dev.strata.nbd.internal.protocol.Request;
import dev.strata.nbd.internal.protocol.RequestCodec;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What SocketInput asks the socket for, and that every byte lands where it belongs. */
class SocketInputTest {

    /** A channel over a byte stream that records how many bytes each read asked for. */
    static class StreamChannel implements ReadableByteChannel {
        final ByteBuffer data;
        final List<Integer> asked = new ArrayList<>();

        StreamChannel(ByteBuffer data) {
            this.data = data;
        }

        @Override
        public int read(ByteBuffer dst) {
            asked.add(dst.remaining());
            if (!data.hasRemaining()) {
                return -1;
            }
            int n = Math.min(dst.remaining(), data.remaining());
            ByteBuffer part = data.duplicate();
            part.limit(part.position() + n);
            dst.put(part);
            data.position(data.position() + n);
            return n;
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() {
        }
    }

    private static void write(ByteBuffer out, long cookie, long offset, byte[] payload) {
        RequestCodec.encode(out, 0, Nbd.CMD_WRITE, cookie, offset, payload.length);
        out.put(payload);
    }

    private static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + seed);
        }
        return b;
    }

    private static byte[] payload(SocketInput in, Request r) throws Exception {
        ByteBuffer dst = ByteBuffer.allocateDirect((int) r.length);
        in.readFully(dst);
        dst.flip();
        byte[] b = new byte[dst.remaining()];
        dst.get(b);
        return b;
    }

    @Test
    void afterALargePayloadTheNextHeaderIsReadAloneAndSmallRequestsAreBufferedAgain() throws Exception {
        byte[] big1 = pattern(1 << 20, 1);
        byte[] big2 = pattern(1 << 20, 2);
        byte[] small = pattern(4096, 3);
        ByteBuffer wire = ByteBuffer.allocate(3 * (1 << 20));
        write(wire, 1, 0, big1);
        write(wire, 2, 1 << 20, big2);
        write(wire, 3, 8192, small);
        write(wire, 4, 16384, small);
        wire.flip();
        StreamChannel ch = new StreamChannel(wire);
        SocketInput in = new SocketInput(ch, 64 * 1024);
        Request r = new Request();

        assertTrue(in.readHeader(r));
        assertEquals(1, r.cookie);
        assertEquals(64 * 1024, ch.asked.get(0), "the first header read is buffered");
        assertArrayEquals(big1, payload(in, r));

        int before = ch.asked.size();
        assertTrue(in.readHeader(r));
        assertEquals(2, r.cookie);
        assertEquals(1 << 20, r.offset);
        assertEquals(Nbd.REQUEST_HEADER_SIZE, ch.asked.get(before),
                "after a 1 MiB payload the next header is read alone, not with the next payload's start");
        assertArrayEquals(big2, payload(in, r));

        before = ch.asked.size();
        assertTrue(in.readHeader(r));
        assertEquals(3, r.cookie);
        assertEquals(Nbd.REQUEST_HEADER_SIZE, ch.asked.get(before));
        assertArrayEquals(small, payload(in, r));

        before = ch.asked.size();
        assertTrue(in.readHeader(r));
        assertEquals(4, r.cookie);
        assertEquals(64 * 1024, ch.asked.get(before), "after a small payload reads are buffered again");
        assertArrayEquals(small, payload(in, r));
        assertFalse(in.readHeader(r), "clean end of stream between requests");
    }

    @Test
    void aHeaderArrivingInPiecesAfterALargePayloadIsStillWhole() throws Exception {
        byte[] big = pattern(64 * 1024, 5);
        ByteBuffer wire = ByteBuffer.allocate(2 * 64 * 1024 + 64);
        write(wire, 7, 0, big);
        write(wire, 8, 65536, big);
        wire.flip();
        // a channel that hands out at most 5 bytes per read
        ReadableByteChannel trickle = new StreamChannel(wire) {
            @Override
            public int read(ByteBuffer dst) {
                ByteBuffer lim = dst.duplicate();
                lim.limit(Math.min(dst.limit(), dst.position() + 5));
                int n = super.read(lim);
                if (n > 0) {
                    dst.position(dst.position() + n);
                }
                return n;
            }
        };
        SocketInput in = new SocketInput(trickle, 64 * 1024);
        Request r = new Request();
        assertTrue(in.readHeader(r));
        assertEquals(7, r.cookie);
        assertArrayEquals(big, payload(in, r));
        assertTrue(in.readHeader(r));
        assertEquals(8, r.cookie);
        assertEquals(65536, r.offset);
        assertArrayEquals(big, payload(in, r));
        assertFalse(in.readHeader(r));
    }
}
