package dev.strata.nbd.internal.session;

import dev.strata.nbd.internal.protocol.Nbd;
import dev.strata.nbd.internal.protocol.OptionCodec;
import dev.strata.nbd.internal.protocol.ProtocolException;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ByteChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The server side of fixed-newstyle negotiation, as a state machine driven over a blocking
 * channel: GREETING → CLIENT_FLAGS → OPTIONS → (TRANSMISSION | CLOSED).
 *
 * <p>Rules kept here: unknown client flags drop the connection; every option header is checked
 * before its data is read; option data longer than {@link #MAX_OPTION_DATA} is skipped without
 * being stored and answered with an error (for EXPORT_NAME, which cannot fail politely, the
 * connection is dropped); unknown options get ERR_UNSUP; INFO and GO give identical answers.
 *
 * <h2>TLS</h2>
 * With a {@link TlsUpgrade} of mode ON or REQUIRE, {@code NBD_OPT_STARTTLS} is acknowledged and
 * the TLS handshake runs at once on the same socket; option haggling then starts again with
 * everything negotiated before (structured replies, the meta-context selection) forgotten, as
 * the protocol asks. Options are read with exact-length reads, never buffered ahead, so bytes a
 * client (or a man in the middle) sends after STARTTLS but before the TLS handshake reach the
 * TLS engine as handshake input (and fail it); they are never read as options. In REQUIRE mode
 * every option before TLS except STARTTLS and ABORT is answered {@code ERR_TLS_REQD}, and
 * {@code EXPORT_NAME}, which cannot be refused politely, drops the connection.
 */
public final class ServerHandshake {
    /** The id of {@code base:allocation} in SET_META_CONTEXT replies and BLOCK_STATUS chunks. */
    public static final int BASE_ALLOCATION_ID = 1;
    /** Longest option data stored; longer options are skipped (no legitimate option comes near it). */
    public static final int MAX_OPTION_DATA = 64 * 1024;

    public enum State { GREETING, CLIENT_FLAGS, OPTIONS, TRANSMISSION, CLOSED }

    private ByteChannel channel;
    private final ExportCatalog catalog;
    private final TlsUpgrade tls;
    private boolean tlsDone;
    private final ByteBuffer out = ByteBuffer.allocate(64 * 1024).order(ByteOrder.BIG_ENDIAN);
    private final ByteBuffer header = ByteBuffer.allocate(Nbd.OPTION_HEADER_SIZE);
    private final OptionCodec.OptionHeader option = new OptionCodec.OptionHeader();
    private State state = State.GREETING;
    private boolean noZeroes;
    private boolean structured;
    /** Export name the current meta-context selection applies to; null when nothing is selected. */
    private String metaExport;
    /** Set once a client was refused for a device not ready: it is not made to wait again (INFO then GO). */
    private boolean refusedNotReady;

    public ServerHandshake(ByteChannel channel, ExportCatalog catalog) {
        this(channel, catalog, null);
    }

    /** @param tls how to start TLS; null or mode OFF when the listener has no TLS */
    public ServerHandshake(ByteChannel channel, ExportCatalog catalog, TlsUpgrade tls) {
        this.channel = channel;
        this.catalog = catalog;
        this.tls = tls == null || tls.mode() == TlsMode.OFF ? null : tls;
    }

    /** The channel the transmission phase uses: the TLS channel once STARTTLS succeeded. */
    public ByteChannel channel() {
        return channel;
    }

    /** Whether the connection is encrypted. */
    public boolean tls() {
        return tlsDone;
    }

    public State state() {
        return state;
    }

    /**
     * Runs the negotiation.
     *
     * @return the agreement, or null if the client ended the negotiation (ABORT)
     * @throws ProtocolException when the client broke the protocol (the caller drops the connection)
     * @throws IOException when the connection failed
     */
    public Negotiated run() throws IOException {
        try {
            out.clear();
            OptionCodec.greeting(out, Nbd.FLAG_FIXED_NEWSTYLE | Nbd.FLAG_NO_ZEROES);
            flush();
            state = State.CLIENT_FLAGS;
            ByteBuffer flags = ByteBuffer.allocate(4);
            readFully(flags);
            int clientFlags = flags.getInt(0);
            if ((clientFlags & ~Nbd.KNOWN_CLIENT_FLAGS) != 0) {
                throw new ProtocolException(String.format("unknown client flags 0x%08x", clientFlags));
            }
            noZeroes = (clientFlags & Nbd.FLAG_C_NO_ZEROES) != 0;
            state = State.OPTIONS;
            while (true) {
                header.clear();
                readFully(header);
                header.flip();
                OptionCodec.decode(header, option);
                Negotiated done = handleOption(option.option, option.length);
                if (done != null) {
                    state = State.TRANSMISSION;
                    return done;
                }
                if (state == State.CLOSED) {
                    return null;
                }
            }
        } catch (IOException | RuntimeException e) {
            state = State.CLOSED;
            throw e;
        }
    }

    private Negotiated handleOption(int opt, long length) throws IOException {
        if (length > MAX_OPTION_DATA) {
            if (opt == Nbd.OPT_EXPORT_NAME) {
                throw new ProtocolException("EXPORT_NAME with " + length + " bytes of data");
            }
            skip(length);
            replyError(opt, Nbd.REP_ERR_TOO_BIG, "option data of " + length + " bytes is too long");
            return null;
        }
        if (tls != null && tls.mode() == TlsMode.REQUIRE && !tlsDone && opt != Nbd.OPT_STARTTLS
                && opt != Nbd.OPT_ABORT) {
            if (opt == Nbd.OPT_EXPORT_NAME) {
                throw new ProtocolException("EXPORT_NAME before STARTTLS on an export that requires TLS");
            }
            skip(length);
            replyError(opt, Nbd.REP_ERR_TLS_REQD, "this server requires TLS: use STARTTLS first");
            return null;
        }
        ByteBuffer data = ByteBuffer.allocate((int) length);
        readFully(data);
        data.flip();
        switch (opt) {
            case Nbd.OPT_STARTTLS:
                startTls(data);
                return null;
            case Nbd.OPT_EXPORT_NAME:
                return exportName(data);
            case Nbd.OPT_ABORT:
                reply(opt, Nbd.REP_ACK);
                state = State.CLOSED;
                return null;
            case Nbd.OPT_LIST:
                list(data);
                return null;
            case Nbd.OPT_INFO:
            case Nbd.OPT_GO:
                return infoOrGo(opt, data);
            case Nbd.OPT_STRUCTURED_REPLY:
                if (data.hasRemaining()) {
                    replyError(opt, Nbd.REP_ERR_INVALID, "STRUCTURED_REPLY takes no data");
                } else if (structured) {
                    replyError(opt, Nbd.REP_ERR_INVALID, "structured replies are already negotiated");
                } else {
                    structured = true;
                    reply(opt, Nbd.REP_ACK);
                }
                return null;
            case Nbd.OPT_LIST_META_CONTEXT:
            case Nbd.OPT_SET_META_CONTEXT:
                metaContext(opt, data);
                return null;
            default:
                replyError(opt, Nbd.REP_ERR_UNSUP, "option " + Nbd.optionName(opt) + " is not supported");
                return null;
        }
    }

    private void startTls(ByteBuffer data) throws IOException {
        if (tls == null) {
            replyError(Nbd.OPT_STARTTLS, Nbd.REP_ERR_UNSUP, "TLS is not configured on this server");
        } else if (data.hasRemaining()) {
            replyError(Nbd.OPT_STARTTLS, Nbd.REP_ERR_INVALID, "STARTTLS takes no data");
        } else if (tlsDone) {
            replyError(Nbd.OPT_STARTTLS, Nbd.REP_ERR_INVALID, "TLS is already negotiated");
        } else {
            reply(Nbd.OPT_STARTTLS, Nbd.REP_ACK);
            channel = tls.startTls();
            tlsDone = true;
            // everything agreed in plaintext could have been forged: start again from nothing
            structured = false;
            metaExport = null;
        }
    }

    private Negotiated exportName(ByteBuffer data) throws IOException {
        String name = decodeString(data, data.remaining());
        ExportView export = name == null ? null : catalog.find(name);
        if (export == null) {
            throw new ProtocolException("EXPORT_NAME: no export '" + name + "'");
        }
        String notReady = notReady(export);
        if (notReady != null) {
            // EXPORT_NAME has no error reply: dropping the connection is the only refusal
            throw new ProtocolException("EXPORT_NAME: " + notReady);
        }
        String full = export.tryAdmit();
        if (full != null) {
            // EXPORT_NAME has no error reply: dropping the connection is the only refusal
            throw new ProtocolException("EXPORT_NAME: " + full);
        }
        int flags = TransmissionFlags.of(export.readOnly(), structured, export.canFastZero());
        out.clear();
        out.putLong(export.size()).putShort((short) flags);
        if (!noZeroes) {
            out.put(new byte[124]);
        }
        flushAdmitted(export);
        return new Negotiated(export, structured, baseAllocationFor(name, export), flags);
    }

    private void list(ByteBuffer data) throws IOException {
        if (data.hasRemaining()) {
            replyError(Nbd.OPT_LIST, Nbd.REP_ERR_INVALID, "LIST takes no data");
            return;
        }
        List<? extends ExportView> exports = catalog.list();
        for (ExportView e : exports) {
            out.clear();
            OptionCodec.server(out, Nbd.OPT_LIST, OptionCodec.utf8(e.name()), OptionCodec.utf8(e.description()));
            flush();
        }
        reply(Nbd.OPT_LIST, Nbd.REP_ACK);
    }

    private Negotiated infoOrGo(int opt, ByteBuffer data) throws IOException {
        // data: name length (4) | name | number of info requests (2) | requests (2 each)
        if (data.remaining() < 6) {
            replyError(opt, Nbd.REP_ERR_INVALID, Nbd.optionName(opt) + ": data too short");
            return null;
        }
        long nameLength = data.getInt() & 0xffffffffL;
        if (nameLength > Nbd.MAX_STRING || nameLength > data.remaining() - 2) {
            replyError(opt, Nbd.REP_ERR_INVALID, Nbd.optionName(opt) + ": bad name length " + nameLength);
            return null;
        }
        String name = decodeString(data, (int) nameLength);
        int requests = data.getShort() & 0xffff;
        if (data.remaining() != 2 * requests) {
            replyError(opt, Nbd.REP_ERR_INVALID, Nbd.optionName(opt) + ": " + requests
                    + " information requests announced, " + data.remaining() + " bytes sent");
            return null;
        }
        if (name == null) {
            replyError(opt, Nbd.REP_ERR_INVALID, Nbd.optionName(opt) + ": export name is not UTF-8");
            return null;
        }
        boolean wantName = false;
        boolean wantDescription = false;
        for (int i = 0; i < requests; i++) {
            int type = data.getShort() & 0xffff;
            wantName |= type == Nbd.INFO_NAME;
            wantDescription |= type == Nbd.INFO_DESCRIPTION;
        }
        ExportView export = catalog.find(name);
        if (export == null) {
            replyError(opt, Nbd.REP_ERR_UNKNOWN, "no export '" + name + "'");
            return null;
        }
        // a size is only ever told for a device that is built (never 0 for one being built).
        // The spec has no "unavailable" error: ERR_UNKNOWN would make libnbd say "server has no
        // export named", wrong for an export that exists; POLICY is what a full export gets too
        // (a refusal for now), and the message says why and that it is temporary
        String notReady = notReady(export);
        if (notReady != null) {
            replyError(opt, Nbd.REP_ERR_POLICY, notReady);
            return null;
        }
        if (opt == Nbd.OPT_GO) {
            String full = export.tryAdmit();
            if (full != null) {
                replyError(opt, Nbd.REP_ERR_POLICY, full);
                return null;
            }
        }
        int flags = TransmissionFlags.of(export.readOnly(), structured, export.canFastZero());
        out.clear();
        OptionCodec.infoExport(out, opt, export.size(), flags);
        OptionCodec.infoBlockSize(out, opt, Nbd.MIN_BLOCK, Nbd.PREFERRED_BLOCK, Nbd.MAX_BLOCK);
        if (wantName) {
            OptionCodec.infoString(out, opt, Nbd.INFO_NAME, OptionCodec.utf8(export.name()));
        }
        if (wantDescription && !export.description().isEmpty()) {
            OptionCodec.infoString(out, opt, Nbd.INFO_DESCRIPTION, OptionCodec.utf8(export.description()));
        }
        OptionCodec.replyHeader(out, opt, Nbd.REP_ACK, 0);
        if (opt == Nbd.OPT_INFO) {
            flush();
            return null;
        }
        flushAdmitted(export);
        return new Negotiated(export, structured, baseAllocationFor(name, export), flags);
    }

    /** Null when {@code export} can be served; else the refusal, after a bounded wait only the first time. */
    private String notReady(ExportView export) throws IOException {
        String why = refusedNotReady ? export.readyNow() : export.awaitReady();
        refusedNotReady |= why != null;
        return why;
    }

    private boolean baseAllocationFor(String name, ExportView export) {
        if (metaExport == null) {
            return false;
        }
        ExportView selected = catalog.find(metaExport);
        return selected != null && selected.name().equals(export.name());
    }

    private void metaContext(int opt, ByteBuffer data) throws IOException {
        String what = Nbd.optionName(opt);
        if (!structured) {
            replyError(opt, Nbd.REP_ERR_INVALID, what + " needs structured replies first");
            return;
        }
        // data: export name length (4) | name | number of queries (4) | { query length (4) | query }*
        String name = OptionCodec.string(data);
        if (name == null || data.remaining() < 4) {
            replyError(opt, Nbd.REP_ERR_INVALID, what + ": malformed export name");
            return;
        }
        long queries = data.getInt() & 0xffffffffL;
        if (queries > data.remaining() / 4) {
            replyError(opt, Nbd.REP_ERR_INVALID, what + ": " + queries + " queries announced");
            return;
        }
        boolean match = false;
        for (long i = 0; i < queries; i++) {
            String q = OptionCodec.string(data);
            if (q == null) {
                replyError(opt, Nbd.REP_ERR_INVALID, what + ": malformed query " + i);
                return;
            }
            if (q.equals(Nbd.BASE_ALLOCATION) || (opt == Nbd.OPT_LIST_META_CONTEXT && q.equals("base:"))) {
                match = true;
            }
        }
        if (data.hasRemaining()) {
            replyError(opt, Nbd.REP_ERR_INVALID, what + ": " + data.remaining() + " bytes after the last query");
            return;
        }
        if (catalog.find(name) == null) {
            replyError(opt, Nbd.REP_ERR_UNKNOWN, "no export '" + name + "'");
            return;
        }
        if (opt == Nbd.OPT_LIST_META_CONTEXT) {
            match |= queries == 0;
        } else {
            metaExport = match ? name : null;
        }
        out.clear();
        if (match) {
            OptionCodec.metaContext(out, opt, opt == Nbd.OPT_SET_META_CONTEXT ? BASE_ALLOCATION_ID : 0,
                    OptionCodec.utf8(Nbd.BASE_ALLOCATION));
        }
        OptionCodec.replyHeader(out, opt, Nbd.REP_ACK, 0);
        flush();
    }

    /** Sends the final answer; the place taken is given back if that fails (no connection will own it). */
    private void flushAdmitted(ExportView export) throws IOException {
        try {
            flush();
        } catch (IOException | RuntimeException e) {
            export.releaseConnection();
            throw e;
        }
    }

    private static String decodeString(ByteBuffer data, int length) {
        ByteBuffer slice = data.slice();
        slice.limit(length);
        data.position(data.position() + length);
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(slice).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    private void reply(int opt, int type) throws IOException {
        out.clear();
        OptionCodec.replyHeader(out, opt, type, 0);
        flush();
    }

    private void replyError(int opt, int type, String message) throws IOException {
        out.clear();
        OptionCodec.error(out, opt, type, message);
        flush();
    }

    private void flush() throws IOException {
        out.flip();
        while (out.hasRemaining()) {
            channel.write(out);
        }
        out.clear();
    }

    private void readFully(ByteBuffer dst) throws IOException {
        while (dst.hasRemaining()) {
            if (channel.read(dst) < 0) {
                throw new EOFException("connection closed during negotiation (state " + state + ")");
            }
        }
    }

    private void skip(long n) throws IOException {
        ByteBuffer scratch = ByteBuffer.allocate(8192);
        while (n > 0) {
            scratch.clear();
            scratch.limit((int) Math.min(n, scratch.capacity()));
            int r = channel.read(scratch);
            if (r < 0) {
                throw new EOFException("connection closed during negotiation");
            }
            n -= r;
        }
    }
}
