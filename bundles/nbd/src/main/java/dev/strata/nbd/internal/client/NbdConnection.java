package dev.strata.nbd.internal.client;

import dev.strata.nbd.internal.protocol.Nbd;
import dev.strata.nbd.internal.protocol.ProtocolException;
import dev.strata.nbd.internal.protocol.RequestCodec;
import dev.strata.nbd.internal.session.ClientHandshake;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.GatheringByteChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One negotiated client connection with many requests in flight.
 *
 * <h2>Threads</h2>
 * Callers send their request under the write lock and wait on their slot; one reader thread
 * decodes replies and completes slots (reading READ data straight into the caller's buffer). A
 * request's cookie is its slot index plus a generation, so no map or object is needed per
 * request. When the connection breaks, every waiting slot is completed as {@link Lost} and the
 * callers retry on a new connection.
 */
final class NbdConnection implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(NbdConnection.class);
    static final int SLOTS = 128;

    /** The connection broke while the request was in flight (it may or may not have run). */
    static final class Lost extends IOException {
        private static final long serialVersionUID = 1L;

        Lost(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** The server answered with an error. */
    static final class RemoteError extends IOException {
        private static final long serialVersionUID = 1L;
        final int errno;

        RemoteError(int errno, String message) {
            super(message);
            this.errno = errno;
        }
    }

    private static final int FREE = 0;
    private static final int WAITING = 1;
    private static final int DONE = 2;

    private static final class Slot {
        final int index;
        int generation;
        int state = FREE;
        int type;
        long offset;
        long length;
        ByteBuffer dst;
        int dstBase;
        int dstLimit;
        int errno;
        String message;
        boolean lost;
        final ByteBuffer header = ByteBuffer.allocateDirect(Nbd.REQUEST_HEADER_SIZE);
        final ByteBuffer[] gather = new ByteBuffer[2];

        Slot(int index) {
            this.index = index;
        }

        long cookie() {
            return ((long) generation << 16) | index;
        }
    }

    final ClientHandshake.Result session;
    final String name;
    /** The socket, or the TLS channel over it (closing it closes the socket). */
    private final ByteChannel ch;
    private final GatheringByteChannel gather;
    private final Slot[] slots = new Slot[SLOTS];
    private final int[] freeStack = new int[SLOTS];
    private int freeTop;
    private final Object slotLock = new Object();
    private final ReentrantLock writeLock = new ReentrantLock();
    private final ByteBuffer in = ByteBuffer.allocateDirect(64 * 1024);
    private final Thread reader;
    private volatile IOException broken;

    /** @param ch a {@link SocketChannel} or a TLS channel: both gather */
    NbdConnection(ByteChannel ch, ClientHandshake.Result session, String name) {
        this.ch = ch;
        this.gather = (GatheringByteChannel) ch;
        this.session = session;
        this.name = name;
        for (int i = 0; i < SLOTS; i++) {
            slots[i] = new Slot(i);
            freeStack[i] = SLOTS - 1 - i;
        }
        freeTop = SLOTS;
        in.flip();
        reader = new Thread(this::readLoop, name + "-reader");
        reader.setDaemon(true);
        reader.start();
    }

    boolean isBroken() {
        return broken != null;
    }

    /**
     * Sends a request and waits for its reply until {@code deadlineNanos}.
     *
     * @param data WRITE payload (position to limit, consumed on success) or READ destination
     *             (filled position to limit), otherwise null
     * @throws Lost if the connection broke (retry elsewhere)
     * @throws RemoteError if the server replied with an error
     * @throws java.util.concurrent.TimeoutException-like {@link Lost} after breaking the connection when the deadline passes
     */
    void execute(int type, int flags, long offset, long length, ByteBuffer data, long deadlineNanos) throws IOException {
        Slot s = acquire(deadlineNanos);
        try {
            s.type = type;
            s.offset = offset;
            s.length = length;
            s.errno = 0;
            s.message = null;
            s.lost = false;
            boolean isRead = type == Nbd.CMD_READ;
            if (isRead) {
                s.dst = data;
                s.dstBase = data.position();
                s.dstLimit = data.limit();
            } else {
                s.dst = null;
            }
            synchronized (s) {
                s.state = WAITING;
            }
            s.header.clear();
            RequestCodec.encode(s.header, flags, type, s.cookie(), offset, length);
            s.header.flip();
            int payloadStart = data == null ? 0 : data.position();
            writeLock.lock();
            try {
                checkBroken();
                if (type == Nbd.CMD_WRITE) {
                    s.gather[0] = s.header;
                    s.gather[1] = data;
                    while (data.hasRemaining()) {
                        gather.write(s.gather);
                    }
                    s.gather[1] = null;
                } else {
                    while (s.header.hasRemaining()) {
                        ch.write(s.header);
                    }
                }
            } catch (IOException e) {
                fail(e);
                if (type == Nbd.CMD_WRITE) {
                    data.position(payloadStart);
                }
                throw new Lost(name + ": connection lost while sending: " + e.getMessage(), e);
            } finally {
                writeLock.unlock();
            }
            boolean timedOut;
            synchronized (s) {
                while (s.state == WAITING) {
                    long left = deadlineNanos - System.nanoTime();
                    if (left <= 0) {
                        break;
                    }
                    try {
                        TimeUnit.NANOSECONDS.timedWait(s, left);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new java.io.InterruptedIOException("interrupted waiting for the NBD server");
                    }
                }
                timedOut = s.state == WAITING;
                if (timedOut) {
                    // no answer in time: the connection is no good; break it so nothing waits forever
                    s.lost = true;
                    s.state = DONE;
                }
            }
            if (timedOut) {
                fail(new IOException("no reply within the timeout"));
                try {
                    reader.join(10_000); // the reader must not touch the caller's buffer after we return
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            if (s.lost) {
                if (isRead) {
                    data.limit(s.dstLimit).position(s.dstBase);
                } else if (type == Nbd.CMD_WRITE) {
                    data.position(payloadStart);
                }
                IOException b = broken;
                throw new Lost(name + ": connection lost: " + (b == null ? "?" : b.getMessage()), b);
            }
            if (s.errno != 0) {
                if (isRead) {
                    data.limit(s.dstLimit).position(s.dstBase);
                }
                throw new RemoteError(s.errno, name + ": " + Nbd.commandName(type) + " at " + offset + " failed with "
                        + Nbd.errnoName(s.errno) + (s.message == null || s.message.isEmpty() ? "" : ": " + s.message));
            }
            if (isRead) {
                data.limit(s.dstLimit).position(s.dstLimit);
            }
        } finally {
            release(s);
        }
    }

    private void checkBroken() throws IOException {
        IOException b = broken;
        if (b != null) {
            throw b;
        }
    }

    private Slot acquire(long deadlineNanos) throws IOException {
        synchronized (slotLock) {
            while (freeTop == 0) {
                checkBroken();
                long left = deadlineNanos - System.nanoTime();
                if (left <= 0) {
                    throw new Lost(name + ": no free request slot within the timeout", null);
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(slotLock, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new java.io.InterruptedIOException();
                }
            }
            Slot s = slots[freeStack[--freeTop]];
            s.generation = (s.generation + 1) & 0xffffff;
            return s;
        }
    }

    private void release(Slot s) {
        synchronized (s) {
            // a slot abandoned on timeout stays unusable until the connection is dropped
            if (s.state == WAITING) {
                return;
            }
            s.state = FREE;
            s.dst = null;
        }
        synchronized (slotLock) {
            freeStack[freeTop++] = s.index;
            slotLock.notify();
        }
    }

    /** Marks the connection broken and completes every waiting request as lost. */
    void fail(IOException cause) {
        synchronized (this) {
            if (broken != null) {
                return;
            }
            broken = cause;
        }
        try {
            ch.close();
        } catch (IOException e) {
            LOG.debug("{}: close: {}", name, e.toString());
        }
        for (Slot s : slots) {
            synchronized (s) {
                if (s.state == WAITING) {
                    s.lost = true;
                    s.state = DONE;
                    s.notifyAll();
                }
            }
        }
        synchronized (slotLock) {
            slotLock.notifyAll();
        }
    }

    /** Sends DISC and closes. */
    @Override
    public void close() {
        if (broken == null) {
            writeLock.lock();
            try {
                ByteBuffer b = ByteBuffer.allocate(Nbd.REQUEST_HEADER_SIZE);
                RequestCodec.encode(b, 0, Nbd.CMD_DISC, 0, 0, 0);
                b.flip();
                while (b.hasRemaining()) {
                    ch.write(b);
                }
            } catch (IOException e) {
                LOG.debug("{}: DISC: {}", name, e.toString());
            } finally {
                writeLock.unlock();
            }
        }
        fail(new IOException("connection closed"));
        try {
            reader.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ---- the reader ----

    private void readLoop() {
        try {
            while (true) {
                fill(4);
                int magic = in.getInt();
                if (magic == Nbd.SIMPLE_REPLY_MAGIC) {
                    fill(12);
                    int error = in.getInt();
                    long cookie = in.getLong();
                    Slot s = slotFor(cookie);
                    if (error == 0 && s.type == Nbd.CMD_READ) {
                        s.dst.limit(s.dstLimit).position(s.dstBase);
                        readInto(s.dst);
                    }
                    complete(s, error, null);
                } else if (magic == Nbd.STRUCTURED_REPLY_MAGIC) {
                    fill(16);
                    int flags = in.getShort() & 0xffff;
                    int type = in.getShort() & 0xffff;
                    long cookie = in.getLong();
                    long length = in.getInt() & 0xffffffffL;
                    chunk(slotFor(cookie), flags, type, length);
                } else {
                    throw new ProtocolException(String.format("bad reply magic 0x%08x", magic));
                }
            }
        } catch (IOException | RuntimeException e) {
            if (broken == null) {
                LOG.debug("{}: reader stops: {}", name, e.toString());
            }
            fail(e instanceof IOException io ? io : new IOException(e));
        }
    }

    private void chunk(Slot s, int flags, int type, long length) throws IOException {
        int errno = 0;
        String message = null;
        switch (type) {
            case Nbd.REPLY_TYPE_NONE:
                if (length != 0) {
                    throw new ProtocolException("NONE chunk with a payload");
                }
                break;
            case Nbd.REPLY_TYPE_OFFSET_DATA: {
                if (s.type != Nbd.CMD_READ || length < 8) {
                    throw new ProtocolException("unexpected OFFSET_DATA chunk");
                }
                fill(8);
                long off = in.getLong();
                long n = length - 8;
                long rel = off - s.offset;
                if (rel < 0 || n > s.length - rel) {
                    throw new ProtocolException("OFFSET_DATA chunk outside the request");
                }
                s.dst.limit(s.dstBase + (int) (rel + n)).position(s.dstBase + (int) rel);
                readInto(s.dst);
                break;
            }
            case Nbd.REPLY_TYPE_OFFSET_HOLE: {
                if (s.type != Nbd.CMD_READ || length != 12) {
                    throw new ProtocolException("unexpected OFFSET_HOLE chunk");
                }
                fill(12);
                long off = in.getLong();
                long n = in.getInt() & 0xffffffffL;
                long rel = off - s.offset;
                if (rel < 0 || n > s.length - rel) {
                    throw new ProtocolException("OFFSET_HOLE chunk outside the request");
                }
                for (int i = 0; i < n; i++) {
                    s.dst.put(s.dstBase + (int) rel + i, (byte) 0);
                }
                break;
            }
            default:
                if ((type & 0x8000) != 0) {
                    if (length < 6 || length > 65536) {
                        throw new ProtocolException("malformed error chunk");
                    }
                    fill((int) length);
                    errno = in.getInt();
                    int mlen = in.getShort() & 0xffff;
                    if (mlen > length - 6) {
                        throw new ProtocolException("malformed error chunk");
                    }
                    byte[] m = new byte[mlen];
                    in.get(m);
                    in.position(in.position() + (int) (length - 6 - mlen));
                    message = new String(m, java.nio.charset.StandardCharsets.UTF_8);
                    if (errno == 0) {
                        errno = Nbd.EIO;
                    }
                } else {
                    skip(length); // e.g. BLOCK_STATUS, which we never ask for
                }
        }
        if (errno != 0) {
            s.errno = errno;
            s.message = message;
        }
        if ((flags & Nbd.REPLY_FLAG_DONE) != 0) {
            complete(s, s.errno, s.message);
        }
    }

    private Slot slotFor(long cookie) throws ProtocolException {
        int index = (int) (cookie & 0xffff);
        if (index >= SLOTS) {
            throw new ProtocolException("reply for unknown cookie " + cookie);
        }
        Slot s = slots[index];
        synchronized (s) {
            if (s.state != WAITING || s.cookie() != cookie) {
                throw new ProtocolException("reply for unknown cookie " + cookie);
            }
        }
        return s;
    }

    private static void complete(Slot s, int errno, String message) {
        synchronized (s) {
            s.errno = errno;
            s.message = message;
            s.state = DONE;
            s.notifyAll();
        }
    }

    private void fill(int n) throws IOException {
        if (in.remaining() >= n) {
            return;
        }
        in.compact();
        try {
            while (in.position() < n) {
                if (ch.read(in) < 0) {
                    throw new EOFException("the server closed the connection");
                }
            }
        } finally {
            in.flip();
        }
    }

    private void readInto(ByteBuffer dst) throws IOException {
        if (in.hasRemaining()) {
            int n = Math.min(in.remaining(), dst.remaining());
            int lim = in.limit();
            in.limit(in.position() + n);
            dst.put(in);
            in.limit(lim);
        }
        while (dst.hasRemaining()) {
            if (ch.read(dst) < 0) {
                throw new EOFException("the server closed the connection inside a reply");
            }
        }
    }

    private void skip(long n) throws IOException {
        while (n > 0) {
            if (!in.hasRemaining()) {
                fill(1);
            }
            int k = (int) Math.min(n, in.remaining());
            in.position(in.position() + k);
            n -= k;
        }
    }
}
