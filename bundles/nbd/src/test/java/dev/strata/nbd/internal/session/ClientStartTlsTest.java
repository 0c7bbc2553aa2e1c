package dev.strata.nbd.internal.session;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.nbd.internal.protocol.Nbd;
import dev.strata.nbd.internal.protocol.ProtocolException;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The client's STARTTLS against scripted server replies: what it sends, and that with TLS
 * required no refusal ever leads to a plaintext option.
 */
class ClientStartTlsTest {

    /** Serves scripted bytes and records what the client writes. */
    static final class Scripted implements ByteChannel {
        final ByteBuffer in;
        final ByteArrayOutputStream out = new ByteArrayOutputStream();

        Scripted(ByteBuffer in) {
            this.in = in.flip();
        }

        @Override
        public int read(ByteBuffer dst) {
            if (!in.hasRemaining()) {
                return -1;
            }
            int n = Math.min(dst.remaining(), in.remaining());
            ByteBuffer s = in.slice(in.position(), n);
            dst.put(s);
            in.position(in.position() + n);
            return n;
        }

        @Override
        public int write(ByteBuffer src) {
            int n = src.remaining();
            byte[] b = new byte[n];
            src.get(b);
            out.writeBytes(b);
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

    static ByteBuffer greetingThenReply(int type, byte[] data) {
        ByteBuffer b = ByteBuffer.allocate(18 + 20 + data.length);
        b.putLong(Nbd.NBDMAGIC).putLong(Nbd.IHAVEOPT).putShort((short) (Nbd.FLAG_FIXED_NEWSTYLE | Nbd.FLAG_NO_ZEROES));
        b.putLong(Nbd.OPTION_REPLY_MAGIC).putInt(Nbd.OPT_STARTTLS).putInt(type).putInt(data.length).put(data);
        return b;
    }

    static ClientStartTls tls(boolean required, AtomicInteger handshakes) {
        return new ClientStartTls() {
            @Override
            public boolean required() {
                return required;
            }

            @Override
            public ByteChannel startTls() throws IOException {
                handshakes.incrementAndGet();
                throw new IOException("handshake failed (scripted)");
            }
        };
    }

    /** Client flags then exactly one option, STARTTLS without data. */
    static byte[] flagsAndStartTls() {
        return ByteBuffer.allocate(4 + 16).putInt(Nbd.FLAG_C_FIXED_NEWSTYLE | Nbd.FLAG_C_NO_ZEROES)
                .putLong(Nbd.IHAVEOPT).putInt(Nbd.OPT_STARTTLS).putInt(0).array();
    }

    @Test
    void requiredTlsRefusedByTheServerSendsNothingMore() {
        for (int refusal : new int[] {Nbd.REP_ERR_UNSUP, Nbd.REP_ERR_POLICY, Nbd.REP_ERR_INVALID}) {
            Scripted ch = new Scripted(greetingThenReply(refusal, "no TLS here".getBytes()));
            AtomicInteger handshakes = new AtomicInteger();
            ClientHandshake.Refused e = assertThrows(ClientHandshake.Refused.class,
                    () -> new ClientHandshake(ch, tls(true, handshakes)).run("disk"));
            assertTrue(e.getMessage().contains("does not do TLS") && e.getMessage().contains("no TLS here"),
                    e.getMessage());
            assertArrayEquals(flagsAndStartTls(), ch.out.toByteArray(), "no plaintext option after the refusal");
            assertEquals(0, handshakes.get());
        }
    }

    @Test
    void anAckStartsTheHandshakeAtOnce() {
        Scripted ch = new Scripted(greetingThenReply(Nbd.REP_ACK, new byte[0]));
        AtomicInteger handshakes = new AtomicInteger();
        IOException e = assertThrows(IOException.class, () -> new ClientHandshake(ch, tls(true, handshakes)).run("d"));
        assertEquals("handshake failed (scripted)", e.getMessage());
        assertEquals(1, handshakes.get());
        assertArrayEquals(flagsAndStartTls(), ch.out.toByteArray(), "nothing in plaintext after the ACK");
    }

    @Test
    void malformedStartTlsRepliesAreProtocolErrors() {
        AtomicInteger handshakes = new AtomicInteger();
        ProtocolException e = assertThrows(ProtocolException.class, () -> new ClientHandshake(
                new Scripted(greetingThenReply(Nbd.REP_ACK, new byte[] {1, 2})), tls(true, handshakes)).run("d"));
        assertTrue(e.getMessage().contains("acknowledged STARTTLS with 2 bytes"), e.getMessage());
        e = assertThrows(ProtocolException.class, () -> new ClientHandshake(
                new Scripted(greetingThenReply(Nbd.REP_SERVER, new byte[0])), tls(true, handshakes)).run("d"));
        assertTrue(e.getMessage().contains("answered STARTTLS with reply type"), e.getMessage());
        assertEquals(0, handshakes.get());
    }

    @Test
    void tlsOnGoesOnInPlaintextWhenTheServerHasNoTls() {
        Scripted ch = new Scripted(greetingThenReply(Nbd.REP_ERR_UNSUP, new byte[0]));
        // the script ends after the refusal: the client's next step (STRUCTURED_REPLY) meets EOF
        assertThrows(EOFException.class, () -> new ClientHandshake(ch, tls(false, new AtomicInteger())).run("d"));
        byte[] sent = ch.out.toByteArray();
        ByteBuffer next = ByteBuffer.wrap(sent, 20, sent.length - 20);
        assertEquals(Nbd.IHAVEOPT, next.getLong());
        assertEquals(Nbd.OPT_STRUCTURED_REPLY, next.getInt(), "plaintext negotiation goes on, as tls=on allows");
    }
}
