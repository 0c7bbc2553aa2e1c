package dev.strata.nbd.internal.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.nbd.internal.protocol.Nbd;
import dev.strata.nbd.internal.session.TransmissionFlags;
import dev.strata.nbd.testing.RawClient;
import dev.strata.nbd.testing.RawClient.OptReply;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Every option of the server's negotiation, including each malformed case, over raw sockets. */
class ServerNegotiationTest extends ServerFixture {
    // ---- negotiation ----

    @Test
    void greetingAdvertisesFixedNewstyleAndNoZeroes() throws IOException {
        try (RawClient c = client()) {
            assertEquals(Nbd.FLAG_FIXED_NEWSTYLE | Nbd.FLAG_NO_ZEROES, c.greet(Nbd.FLAG_C_FIXED_NEWSTYLE));
        }
    }

    @Test
    void unknownClientFlagsDropTheConnection() throws IOException {
        try (RawClient c = client()) {
            c.greet(Nbd.FLAG_C_FIXED_NEWSTYLE | 0x100);
            assertTrue(c.closedByServer());
        }
        assertServerStillWorks();
    }

    @Test
    void listNamesEveryExportAndRejectsData() throws IOException {
        try (RawClient c = client()) {
            c.greet(Nbd.FLAG_C_FIXED_NEWSTYLE);
            c.option(Nbd.OPT_LIST, new byte[] {1});
            RawClient.expect(c.optReply(), Nbd.REP_ERR_INVALID);
            c.option(Nbd.OPT_LIST, new byte[0]);
            OptReply a = RawClient.expect(c.optReply(), Nbd.REP_SERVER);
            OptReply b = RawClient.expect(c.optReply(), Nbd.REP_SERVER);
            RawClient.expect(c.optReply(), Nbd.REP_ACK);
            ByteBuffer d = a.buf();
            int len = d.getInt();
            byte[] name = new byte[len];
            d.get(name);
            assertEquals("disk", new String(name, StandardCharsets.UTF_8));
            assertEquals("test disk", StandardCharsets.UTF_8.decode(d).toString());
            assertEquals("ro", new String(b.data(), 4, 2, StandardCharsets.UTF_8));
            c.option(Nbd.OPT_GO, RawClient.goData("disk"));
            assertEquals(Nbd.REP_INFO, c.optReply().type());
        }
    }

    @Test
    void unknownOptionIsUnsupportedAndConnectionKept() throws IOException {
        try (RawClient c = client()) {
            c.greet(Nbd.FLAG_C_FIXED_NEWSTYLE);
            c.option(99, new byte[] {1, 2, 3});
            RawClient.expect(c.optReply(), Nbd.REP_ERR_UNSUP);
            c.option(Nbd.OPT_STARTTLS, new byte[0]);
            RawClient.expect(c.optReply(), Nbd.REP_ERR_UNSUP);
            c.option(Nbd.OPT_GO, RawClient.goData("disk"));
            assertEquals(Nbd.REP_INFO, c.optReply().type());
        }
    }

    @Test
    void oversizeOptionIsRefusedWithoutStoringIt() throws IOException {
        try (RawClient c = client()) {
            c.greet(Nbd.FLAG_C_FIXED_NEWSTYLE);
            c.option(Nbd.OPT_INFO, new byte[200_000]);
            RawClient.expect(c.optReply(), Nbd.REP_ERR_TOO_BIG);
            c.option(Nbd.OPT_LIST, new byte[0]);
            RawClient.expect(c.optReply(), Nbd.REP_SERVER);
        }
    }

    @Test
    void badOptionMagicDropsTheConnection() throws IOException {
        try (RawClient c = client()) {
            c.greet(Nbd.FLAG_C_FIXED_NEWSTYLE);
            c.send(ByteBuffer.allocate(16).putLong(0x1234).putInt(Nbd.OPT_LIST).putInt(0).flip());
            assertTrue(c.closedByServer());
        }
        assertServerStillWorks();
    }

    @Test
    void truncatedOptionDropsTheConnection() throws IOException {
        try (RawClient c = client()) {
            c.greet(Nbd.FLAG_C_FIXED_NEWSTYLE);
            c.send(ByteBuffer.allocate(10).putLong(Nbd.IHAVEOPT).putShort((short) 0).flip());
            c.ch.shutdownOutput();
            assertTrue(c.closedByServer());
        }
        assertServerStillWorks();
    }

    @Test
    void infoAndGoGiveIdenticalAnswers() throws IOException {
        try (RawClient c = client()) {
            c.greet(Nbd.FLAG_C_FIXED_NEWSTYLE);
            c.option(Nbd.OPT_INFO, RawClient.goData("disk", Nbd.INFO_NAME, Nbd.INFO_BLOCK_SIZE, Nbd.INFO_DESCRIPTION));
            java.util.List<String> info = replies(c);
            c.option(Nbd.OPT_GO, RawClient.goData("disk", Nbd.INFO_NAME, Nbd.INFO_BLOCK_SIZE, Nbd.INFO_DESCRIPTION));
            java.util.List<String> go = replies(c);
            assertEquals(info, go);
            assertTrue(info.contains("3:" + hex(ByteBuffer.allocate(14).putShort((short) Nbd.INFO_BLOCK_SIZE)
                    .putInt(512).putInt(4096).putInt(32 << 20).array())), info.toString());
            assertTrue(info.contains("3:" + hex(ByteBuffer.allocate(12).putShort((short) Nbd.INFO_EXPORT).putLong(SIZE)
                    .putShort((short) TransmissionFlags.of(false, false, false)).array())), info.toString());
            // transmission works after GO
            c.request(0, Nbd.CMD_FLUSH, 1, 0, 0, null);
            assertEquals(0, c.simple().error());
        }
    }

    private static java.util.List<String> replies(RawClient c) throws IOException {
        java.util.List<String> out = new java.util.ArrayList<>();
        while (true) {
            OptReply r = c.optReply();
            out.add(r.type() + ":" + hex(r.data()));
            if (r.type() == Nbd.REP_ACK || r.type() < 0) {
                return out;
            }
        }
    }

    private static String hex(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (byte x : b) {
            s.append(String.format("%02x", x));
        }
        return s.toString();
    }

    @Test
    void infoOfUnknownExportAndMalformedInfo() throws IOException {
        try (RawClient c = client()) {
            c.greet(Nbd.FLAG_C_FIXED_NEWSTYLE);
            c.option(Nbd.OPT_INFO, RawClient.goData("nope"));
            RawClient.expect(c.optReply(), Nbd.REP_ERR_UNKNOWN);
            c.option(Nbd.OPT_GO, RawClient.goData("nope"));
            RawClient.expect(c.optReply(), Nbd.REP_ERR_UNKNOWN);
            // name length beyond the data
            c.option(Nbd.OPT_GO, ByteBuffer.allocate(8).putInt(100).putShort((short) 0).putShort((short) 0).array());
            RawClient.expect(c.optReply(), Nbd.REP_ERR_INVALID);
            // number of info requests does not match
            c.option(Nbd.OPT_INFO, ByteBuffer.allocate(6 + 4).putInt(4).put("disk".getBytes()).putShort((short) 3).array());
            RawClient.expect(c.optReply(), Nbd.REP_ERR_INVALID);
            // too short
            c.option(Nbd.OPT_INFO, new byte[3]);
            RawClient.expect(c.optReply(), Nbd.REP_ERR_INVALID);
            c.option(Nbd.OPT_GO, RawClient.goData("disk"));
            assertEquals(Nbd.REP_INFO, c.optReply().type());
        }
    }

    @Test
    void emptyNameIsNotDefaultWhenTwoExportsExist() throws IOException {
        try (RawClient c = client()) {
            c.greet(Nbd.FLAG_C_FIXED_NEWSTYLE);
            c.option(Nbd.OPT_GO, RawClient.goData(""));
            RawClient.expect(c.optReply(), Nbd.REP_ERR_UNKNOWN);
        }
    }

    @Test
    void structuredReplyRejectsDataAndRepeats() throws IOException {
        try (RawClient c = client()) {
            c.greet(Nbd.FLAG_C_FIXED_NEWSTYLE);
            c.option(Nbd.OPT_STRUCTURED_REPLY, new byte[] {0});
            RawClient.expect(c.optReply(), Nbd.REP_ERR_INVALID);
            c.option(Nbd.OPT_STRUCTURED_REPLY, new byte[0]);
            RawClient.expect(c.optReply(), Nbd.REP_ACK);
            c.option(Nbd.OPT_STRUCTURED_REPLY, new byte[0]);
            RawClient.expect(c.optReply(), Nbd.REP_ERR_INVALID);
            c.option(Nbd.OPT_GO, RawClient.goData("disk"));
            ByteBuffer d = c.optReply().buf();
            d.getShort();
            d.getLong();
            assertTrue((d.getShort() & Nbd.FLAG_SEND_DF) != 0, "DF advertised with structured replies");
        }
    }

    @Test
    void metaContexts() throws IOException {
        try (RawClient c = client()) {
            c.greet(Nbd.FLAG_C_FIXED_NEWSTYLE);
            c.option(Nbd.OPT_LIST_META_CONTEXT, RawClient.metaData("disk"));
            RawClient.expect(c.optReply(), Nbd.REP_ERR_INVALID); // needs structured replies
            c.option(Nbd.OPT_STRUCTURED_REPLY, new byte[0]);
            RawClient.expect(c.optReply(), Nbd.REP_ACK);
            c.option(Nbd.OPT_LIST_META_CONTEXT, RawClient.metaData("disk"));
            OptReply m = RawClient.expect(c.optReply(), Nbd.REP_META_CONTEXT);
            assertEquals(Nbd.BASE_ALLOCATION, new String(m.data(), 4, m.data().length - 4, StandardCharsets.UTF_8));
            RawClient.expect(c.optReply(), Nbd.REP_ACK);
            c.option(Nbd.OPT_LIST_META_CONTEXT, RawClient.metaData("disk", "base:"));
            RawClient.expect(c.optReply(), Nbd.REP_META_CONTEXT);
            RawClient.expect(c.optReply(), Nbd.REP_ACK);
            c.option(Nbd.OPT_SET_META_CONTEXT, RawClient.metaData("disk", "x-other:thing"));
            RawClient.expect(c.optReply(), Nbd.REP_ACK);
            c.option(Nbd.OPT_SET_META_CONTEXT, RawClient.metaData("nope", Nbd.BASE_ALLOCATION));
            RawClient.expect(c.optReply(), Nbd.REP_ERR_UNKNOWN);
            byte[] bad = RawClient.metaData("disk", Nbd.BASE_ALLOCATION);
            bad[bad.length - 16] = 0x7f; // corrupt the query length
            c.option(Nbd.OPT_SET_META_CONTEXT, bad);
            RawClient.expect(c.optReply(), Nbd.REP_ERR_INVALID);
            c.option(Nbd.OPT_SET_META_CONTEXT, RawClient.metaData("disk", Nbd.BASE_ALLOCATION));
            OptReply s = RawClient.expect(c.optReply(), Nbd.REP_META_CONTEXT);
            assertEquals(1, s.buf().getInt());
            RawClient.expect(c.optReply(), Nbd.REP_ACK);
        }
    }

    @Test
    void exportNameEntersTransmissionOrDropsForUnknownName() throws IOException {
        try (RawClient c = client()) {
            c.greet(Nbd.FLAG_C_FIXED_NEWSTYLE);
            c.option(Nbd.OPT_EXPORT_NAME, "disk".getBytes());
            ByteBuffer b = c.read(10 + 124);
            assertEquals(SIZE, b.getLong());
            assertEquals(TransmissionFlags.of(false, false, false), b.getShort() & 0xffff);
            c.request(0, Nbd.CMD_READ, 5, 0, 512, null);
            assertEquals(5, c.simple().cookie());
            c.read(512);
        }
        try (RawClient c = client()) {
            c.greet(Nbd.FLAG_C_FIXED_NEWSTYLE | Nbd.FLAG_C_NO_ZEROES);
            c.option(Nbd.OPT_EXPORT_NAME, "ro".getBytes());
            ByteBuffer b = c.read(10);
            assertEquals(1 << 20, b.getLong());
            assertTrue((b.getShort() & Nbd.FLAG_READ_ONLY) != 0);
            c.request(0, Nbd.CMD_FLUSH, 6, 0, 0, null);
            assertEquals(new RawClient.Simple(0, 6), c.simple()); // no zero padding was sent
        }
        try (RawClient c = client()) {
            c.greet(Nbd.FLAG_C_FIXED_NEWSTYLE);
            c.option(Nbd.OPT_EXPORT_NAME, "nope".getBytes());
            assertTrue(c.closedByServer());
        }
    }

    @Test
    void abortIsAcknowledgedAndClosed() throws IOException {
        try (RawClient c = client()) {
            c.greet(Nbd.FLAG_C_FIXED_NEWSTYLE);
            c.option(Nbd.OPT_ABORT, new byte[0]);
            RawClient.expect(c.optReply(), Nbd.REP_ACK);
            assertTrue(c.closedByServer());
        }
    }

    @Test
    void clientThatNeverNegotiatesIsDroppedAfterTheTimeout() throws IOException {
        server.close();
        server = new NbdServer(new NbdServer.Settings(4, 200, 65536, 1 << 20));
        Export e = server.addExport("disk", "", device, new InetSocketAddress("127.0.0.1", 0), false);
        addr = new InetSocketAddress("127.0.0.1", e.port());
        try (RawClient c = client()) {
            assertTrue(c.closedByServer());
        }
    }

}
