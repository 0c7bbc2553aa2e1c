package dev.strata.nbd.internal.client;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceIOException;
import dev.strata.api.DeviceTimeoutException;
import dev.strata.api.FastZeroUnsupportedException;
import dev.strata.api.Requests;
import dev.strata.api.Target;
import dev.strata.nbd.internal.protocol.Nbd;
import dev.strata.nbd.internal.session.ClientHandshake;
import dev.strata.nbd.internal.session.ClientStartTls;
import dev.strata.nbd.internal.session.TlsMode;
import dev.strata.nbd.internal.tls.ClientTls;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.SocketChannel;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A remote NBD export as a block device ({@code nbd} target).
 *
 * <p>Requests are pipelined over {@code connections} connections (round robin). When a connection
 * drops, the requests that were on it are retried on a new one; each request gives up only when
 * {@code timeout} has passed since it was issued, with a {@link DeviceTimeoutException}. Flush
 * and FUA map to NBD FLUSH and the FUA flag; with several connections and a server that does not
 * advertise CAN_MULTI_CONN, a flush is sent on every connection.
 */
public final class NbdTarget implements Target {
    private static final Logger LOG = LoggerFactory.getLogger(NbdTarget.class);
    private static final long MAX_TRIM = 1L << 30;

    private final NbdUri uri;
    private final ClientTls tls;
    private final String device;
    private final long timeoutNanos;
    private final NbdConnection[] conns;
    private final Object[] connLocks;
    private final AtomicInteger next = new AtomicInteger();
    private final ClientHandshake.Result first;
    private final int maxIo;
    private final LongAdder requests = new LongAdder();
    private final LongAdder retries = new LongAdder();
    private final LongAdder reconnects = new LongAdder();
    private final LongAdder errors = new LongAdder();
    private volatile boolean closed;

    /** Connects (once, without retrying: a wrong address should fail at once). */
    public NbdTarget(String device, NbdUri uri, long timeoutMillis, int connections) throws IOException {
        this(device, uri, timeoutMillis, connections, ClientTls.OFF);
    }

    /** As above, with TLS ({@link ClientTls#OFF} for none). */
    public NbdTarget(String device, NbdUri uri, long timeoutMillis, int connections, ClientTls tls)
            throws IOException {
        this.device = device;
        this.uri = uri;
        this.tls = tls;
        this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        this.conns = new NbdConnection[connections];
        this.connLocks = new Object[connections];
        for (int i = 0; i < connections; i++) {
            connLocks[i] = new Object();
        }
        NbdConnection c0;
        try {
            c0 = connect(0, timeoutMillis);
        } catch (IOException e) {
            throw new DeviceIOException(device, 0, "cannot connect to " + uri + ": " + e.getMessage(), e);
        }
        conns[0] = c0;
        first = c0.session;
        if (first.size() % BlockDevice.SECTOR != 0) {
            c0.close();
            throw new DeviceIOException(device, 0, uri + ": export size " + first.size() + " is not a multiple of 512");
        }
        int max = first.maxBlock() <= 0 ? Nbd.MAX_BLOCK : Math.min(first.maxBlock(), Nbd.MAX_BLOCK);
        this.maxIo = Math.max(BlockDevice.SECTOR, max & -BlockDevice.SECTOR);
        try {
            for (int i = 1; i < connections; i++) {
                conns[i] = connect(i, timeoutMillis);
            }
        } catch (IOException e) {
            closeAll();
            throw new DeviceIOException(device, 0, "cannot connect to " + uri + ": " + e.getMessage(), e);
        }
    }

    private NbdConnection connect(int index, long connectTimeoutMillis) throws IOException {
        SocketChannel ch = uri.isUnix() ? SocketChannel.open(StandardProtocolFamily.UNIX) : SocketChannel.open();
        try {
            if (uri.isUnix()) {
                // a local connect either succeeds or fails at once: no timeout needed
                ch.connect(UnixDomainSocketAddress.of(uri.socket()));
            } else {
                ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                ch.setOption(StandardSocketOptions.SO_KEEPALIVE, true);
                ch.socket().connect(new InetSocketAddress(uri.host(), uri.port()),
                        (int) Math.max(1, Math.min(connectTimeoutMillis, Integer.MAX_VALUE)));
            }
            int handshakeMillis = (int) Math.max(1, Math.min(connectTimeoutMillis, Integer.MAX_VALUE));
            boolean[] tlsUp = {false};
            ClientStartTls startTls = tls.mode() == TlsMode.OFF ? null : new ClientStartTls() {
                @Override
                public boolean required() {
                    return tls.mode() == TlsMode.REQUIRE;
                }

                @Override
                public ByteChannel startTls() throws IOException {
                    ByteChannel t = tls.handshake(ch, uri.host() + ":" + uri.port(), handshakeMillis);
                    tlsUp[0] = true;
                    return t;
                }
            };
            ClientHandshake h = new ClientHandshake(ch, startTls);
            ClientHandshake.Result r;
            try {
                r = h.run(uri.export());
            } catch (IOException e) {
                if (tlsUp[0] && !(e instanceof ClientHandshake.Refused)) {
                    // a TLS 1.3 server checks the client's certificate after the client's handshake is done
                    throw new IOException("the server dropped the connection right after the TLS handshake ("
                            + e.getMessage() + "); it may not admit this client: a server with --tls-verify-peer or"
                            + " --allow wants a client certificate it lists (client-cert.pem in tls-creds)", e);
                }
                throw e;
            }
            return new NbdConnection(h.channel(), r, "nbd-client-" + device + "-" + index);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    /** The connection at {@code index}, reconnecting (with backoff, until the deadline) if it broke. */
    private NbdConnection connection(int index, long deadline, long offset) throws IOException {
        NbdConnection c = conns[index];
        if (c != null && !c.isBroken()) {
            return c;
        }
        synchronized (connLocks[index]) {
            long backoff = 50;
            IOException last = null;
            while (true) {
                c = conns[index];
                if (c != null && !c.isBroken()) {
                    return c;
                }
                if (closed) {
                    throw new DeviceIOException(device, offset, "the nbd target is closed");
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new DeviceTimeoutException(device, offset, "cannot reconnect to " + uri + " within the timeout of "
                            + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms"
                            + (last == null ? "" : ": " + last.getMessage()));
                }
                try {
                    NbdConnection n = connect(index, Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                    if (n.session.size() != first.size()) {
                        n.close();
                        throw new DeviceIOException(device, offset, uri + " changed size from " + first.size() + " to "
                                + n.session.size() + " bytes");
                    }
                    conns[index] = n;
                    reconnects.increment();
                    LOG.info("{}: reconnected to {}", device, uri);
                    return n;
                } catch (DeviceIOException e) {
                    throw e;
                } catch (IOException e) {
                    last = e;
                    long wait = Math.min(TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()), backoff);
                    if (wait > 0) {
                        try {
                            connLocks[index].wait(wait);
                        } catch (InterruptedException ie) {
                            Thread.currentThread().interrupt();
                            throw new java.io.InterruptedIOException("interrupted while reconnecting");
                        }
                    }
                    backoff = Math.min(1000, backoff * 2);
                }
            }
        }
    }

    /** One request with retries across reconnects. */
    private void call(int type, int flags, long offset, long length, ByteBuffer data, int connIndex) throws IOException {
        requests.increment();
        long deadline = System.nanoTime() + timeoutNanos;
        int index = connIndex >= 0 ? connIndex : Math.floorMod(next.getAndIncrement(), conns.length);
        while (true) {
            NbdConnection c = connection(index, deadline, offset);
            try {
                c.execute(type, flags, offset, length, data, deadline);
                return;
            } catch (NbdConnection.Lost e) {
                if (closed) {
                    throw new DeviceIOException(device, offset, "the nbd target is closed");
                }
                retries.increment();
                if (System.nanoTime() - deadline >= 0) {
                    errors.increment();
                    throw new DeviceTimeoutException(device, offset, Nbd.commandName(type) + " to " + uri
                            + " did not complete within the timeout of " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos)
                            + " ms: " + e.getMessage());
                }
            } catch (NbdConnection.RemoteError e) {
                errors.increment();
                if (e.errno == Nbd.ENOTSUP && type == Nbd.CMD_WRITE_ZEROES && (flags & Nbd.CMD_FLAG_FAST_ZERO) != 0) {
                    throw new FastZeroUnsupportedException(device);
                }
                throw new DeviceIOException(device, offset, e.getMessage());
            }
        }
    }

    @Override
    public String type() {
        return "nbd";
    }

    @Override
    public long size() {
        return first.size();
    }

    @Override
    public int blockSize() {
        return first.size() % 4096 == 0 && first.preferredBlock() >= 4096 && first.minBlock() <= 4096 ? 4096
                : BlockDevice.SECTOR;
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        Requests.check(this, offset, dst.remaining());
        int end = dst.limit();
        try {
            long off = offset;
            while (dst.position() < end) {
                int n = Math.min(maxIo, end - dst.position());
                dst.limit(dst.position() + n);
                call(Nbd.CMD_READ, 0, off, n, dst, -1);
                off += n;
            }
        } finally {
            dst.limit(end);
        }
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        Requests.check(this, offset, src.remaining());
        boolean fua = (flags & FUA) != 0;
        boolean remoteFua = fua && first.has(Nbd.FLAG_SEND_FUA);
        int end = src.limit();
        try {
            while (src.position() < end) {
                int n = Math.min(maxIo, end - src.position());
                src.limit(src.position() + n);
                call(Nbd.CMD_WRITE, remoteFua ? Nbd.CMD_FLAG_FUA : 0, offset, n, src, -1);
                offset += n;
            }
        } finally {
            src.limit(end);
        }
        if (fua && !remoteFua) {
            flush();
        }
    }

    @Override
    public void flush() throws IOException {
        if (!first.has(Nbd.FLAG_SEND_FLUSH)) {
            return; // the server has no volatile cache to flush
        }
        if (conns.length == 1 || first.has(Nbd.FLAG_CAN_MULTI_CONN)) {
            call(Nbd.CMD_FLUSH, 0, 0, 0, null, -1);
        } else {
            for (int i = 0; i < conns.length; i++) {
                call(Nbd.CMD_FLUSH, 0, 0, 0, null, i);
            }
        }
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        Requests.check(this, offset, length);
        if (!first.has(Nbd.FLAG_SEND_TRIM)) {
            return;
        }
        while (length > 0) {
            long n = Math.min(length, MAX_TRIM);
            call(Nbd.CMD_TRIM, 0, offset, n, null, -1);
            offset += n;
            length -= n;
        }
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws IOException {
        Requests.check(this, offset, length);
        boolean fastZero = (flags & FAST_ZERO) != 0;
        if (!first.has(Nbd.FLAG_SEND_WRITE_ZEROES)) {
            if (fastZero) {
                throw new FastZeroUnsupportedException(device);
            }
            ByteBuffer zero = ByteBuffer.allocateDirect((int) Math.min(length, 1 << 20));
            while (length > 0) {
                int n = (int) Math.min(length, zero.capacity());
                zero.clear().limit(n);
                write(offset, zero, flags & FUA);
                offset += n;
                length -= n;
            }
            return;
        }
        if (fastZero && !first.has(Nbd.FLAG_SEND_FAST_ZERO)) {
            throw new FastZeroUnsupportedException(device);
        }
        int nf = ((flags & FUA) != 0 && first.has(Nbd.FLAG_SEND_FUA) ? Nbd.CMD_FLAG_FUA : 0)
                | ((flags & NO_HOLE) != 0 ? Nbd.CMD_FLAG_NO_HOLE : 0) | (fastZero ? Nbd.CMD_FLAG_FAST_ZERO : 0);
        while (length > 0) {
            long n = Math.min(length, MAX_TRIM);
            call(Nbd.CMD_WRITE_ZEROES, nf, offset, n, null, -1);
            offset += n;
            length -= n;
        }
        if ((flags & FUA) != 0 && !first.has(Nbd.FLAG_SEND_FUA)) {
            flush();
        }
    }

    @Override
    public boolean canFastZero() {
        return first.has(Nbd.FLAG_SEND_WRITE_ZEROES) && first.has(Nbd.FLAG_SEND_FAST_ZERO);
    }

    @Override
    public Map<String, String> status() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("uri", uri.toString());
        m.put("tls", tls.toString());
        m.put("connections", Integer.toString(conns.length));
        int up = 0;
        for (NbdConnection c : conns) {
            up += c != null && !c.isBroken() ? 1 : 0;
        }
        m.put("connected", Integer.toString(up));
        m.put("timeout_ms", Long.toString(TimeUnit.NANOSECONDS.toMillis(timeoutNanos)));
        m.put("max_request", Integer.toString(maxIo));
        m.put("requests", Long.toString(requests.sum()));
        m.put("retries", Long.toString(retries.sum()));
        m.put("reconnects", Long.toString(reconnects.sum()));
        m.put("errors", Long.toString(errors.sum()));
        return m;
    }

    /**
     * Makes everything durable on the server (a flush, as a disk's close would), then
     * disconnects. If that flush fails, the connections are closed all the same and the failure
     * is thrown: nothing may be assumed durable.
     */
    @Override
    public void close() throws IOException {
        IOException failed = null;
        if (!closed) {
            try {
                flush();
            } catch (IOException e) {
                failed = e;
            }
        }
        closed = true;
        closeAll();
        if (failed != null) {
            throw new DeviceIOException(device, -1, "flush before disconnecting from " + uri + " failed: "
                    + failed.getMessage(), failed);
        }
    }

    private void closeAll() {
        for (int i = 0; i < conns.length; i++) {
            synchronized (connLocks[i]) {
                NbdConnection c = conns[i];
                if (c != null) {
                    c.close();
                }
                connLocks[i].notifyAll();
            }
        }
    }
}
