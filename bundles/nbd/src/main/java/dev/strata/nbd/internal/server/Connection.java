package dev.strata.nbd.internal.server;

import dev.strata.nbd.internal.exec.Replies;
import dev.strata.nbd.internal.exec.RequestExecutor;
import dev.strata.nbd.internal.protocol.Nbd;
import dev.strata.nbd.internal.protocol.ReplyCodec;
import dev.strata.nbd.internal.protocol.Request;
import dev.strata.nbd.internal.session.Negotiated;
import dev.strata.nbd.internal.session.ServerHandshake;
import dev.strata.nbd.internal.session.TlsMode;
import dev.strata.nbd.internal.session.TlsUpgrade;
import dev.strata.nbd.internal.tls.TlsChannel;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.GatheringByteChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection.
 *
 * <h2>Threads and locks</h2>
 * The first thread runs the negotiation, then becomes a worker. Workers take turns holding the
 * <em>read lock</em>: the holder reads and checks one request (header, then its payload into a
 * pooled buffer, or skips the payload of a rejected write), releases the lock, runs the request
 * against the device and writes the reply under the <em>write lock</em> with one gathering write.
 * So up to {@code workers} requests run at once and replies leave in completion order. Workers
 * are started on demand: when the reader finds nobody waiting to read next, it starts another
 * (up to the limit), so a queue-depth-1 client costs one thread and a deep queue gets many.
 * The last worker to leave closes the socket; nothing else closes it except {@link #close()}.
 *
 * <p>With TLS the socket stays the thing that is closed (that also stops a TLS read or write
 * blocked on it); reads and writes go through {@link #transport}, the TLS channel once
 * STARTTLS succeeded.
 *
 * <p>A client's bad input (bad magic, truncated header or payload) drops only this connection:
 * requests already running finish against the device; their replies are discarded.
 */
final class Connection {
    private static final Logger LOG = LoggerFactory.getLogger(Connection.class);
    private static final AtomicInteger IDS = new AtomicInteger();

    private final SocketChannel channel;
    /** What requests are read from and replies written to: the socket, or the TLS channel over it. */
    private volatile ByteChannel transport;
    /** The same channel as {@link #transport}, for gathering writes of replies. */
    private volatile GatheringByteChannel replyOut;
    private final Listener listener;
    private final NbdServer server;
    private final String id;
    private final ReentrantLock readLock = new ReentrantLock();
    private final ReentrantLock writeLock = new ReentrantLock();
    private final AtomicInteger live = new AtomicInteger(1);
    private final CountDownLatch closed = new CountDownLatch(1);
    private volatile boolean stopping;
    private volatile Export export;
    private RequestExecutor exec;
    private boolean structured;
    private SocketInput input;
    /** Requests read and not yet answered; the idle timeout never drops a connection with one running. */
    private final AtomicInteger running = new AtomicInteger();
    private volatile long lastActive;
    /** A worker is blocked reading the next request header (only kept while an idle timeout is set). */
    private volatile boolean awaitingInput;
    /** An idle timeout is set: written before the first worker starts, read by workers only. */
    private boolean watchingIdle;
    private volatile ScheduledFuture<?> idleWatch;

    Connection(SocketChannel channel, Listener listener, NbdServer server) {
        this.channel = channel;
        this.transport = channel;
        this.replyOut = channel;
        this.listener = listener;
        this.server = server;
        this.id = "nbd-" + IDS.incrementAndGet();
    }

    void start() {
        Thread t = new Thread(this::negotiateThenServe, id);
        t.setDaemon(true);
        t.start();
    }

    Export export() {
        return export;
    }

    /** Drops the connection at once; running requests finish, their replies are discarded. */
    void close() {
        stopping = true;
        try {
            channel.close();
        } catch (IOException e) {
            LOG.debug("{}: close: {}", id, e.toString());
        }
    }

    /** Waits until every worker has left. */
    boolean awaitClosed(long timeout, TimeUnit unit) throws InterruptedException {
        return closed.await(timeout, unit);
    }

    private void negotiateThenServe() {
        try {
            ScheduledFuture<?> timeout = server.timer.schedule(() -> {
                LOG.info("{}: negotiation took longer than {} ms; dropping the connection", id,
                        server.settings.handshakeTimeoutMillis());
                close();
            }, server.settings.handshakeTimeoutMillis(), TimeUnit.MILLISECONDS);
            Negotiated n;
            ServerHandshake handshake = new ServerHandshake(channel, listener, tlsUpgrade());
            try {
                n = handshake.run();
                transport = handshake.channel();
                replyOut = (GatheringByteChannel) transport; // the socket or a TlsChannel: both gather
            } catch (IOException e) {
                LOG.debug("{}: negotiation failed: {}", id, e.toString());
                n = null;
            } finally {
                timeout.cancel(false);
            }
            if (n == null) {
                return;
            }
            Export e = (Export) n.export();
            export = e; // from here on leave() gives back the place the handshake took
            e.connections.add(this);
            if (stopping || e.listener != listener) {
                // unexported while we negotiated
                return;
            }
            structured = n.structuredReplies();
            exec = new RequestExecutor(e.device(), e.readOnly(), structured, n.baseAllocation(), server.pool,
                    e.counters, e.rmwLock);
            input = new SocketInput(transport, server.settings.inputBuffer());
            initReplies(2 * server.settings.workers() + 8);
            watchIdle(e.limits().idleTimeoutMillis());
            LOG.debug("{}: export '{}' (structured={}, base:allocation={})", id, e.name(), structured,
                    n.baseAllocation());
            serve();
        } catch (Throwable e) {
            LOG.error("{}: worker failed; dropping the connection", id, e);
            close();
            throw e;
        } finally {
            leave();
        }
    }

    private TlsUpgrade tlsUpgrade() {
        TlsMode mode = listener.tls.mode();
        if (mode == TlsMode.OFF) {
            return null;
        }
        return new TlsUpgrade() {
            @Override
            public TlsMode mode() {
                return mode;
            }

            @Override
            public ByteChannel startTls() throws IOException {
                TlsChannel t;
                try {
                    t = listener.tls.serverHandshake(channel);
                } catch (IOException e) {
                    LOG.info("{}: TLS refused: {}; dropping the connection", id, e.getMessage());
                    throw e;
                }
                LOG.debug("{}: TLS {} established{}", id, t.protocol(),
                        t.pskIdentity() == null ? "" : " for PSK user " + t.pskIdentity());
                return t;
            }
        };
    }

    private void spawnWorker() {
        live.incrementAndGet();
        try {
            Thread t = new Thread(() -> {
                try {
                    serve();
                } catch (Throwable e) {
                    LOG.error("{}: worker failed; dropping the connection", id, e);
                    close();
                    throw e;
                } finally {
                    leave();
                }
            }, id + "-w" + live.get());
            t.setDaemon(true);
            t.start();
        } catch (Throwable e) {
            LOG.warn("{}: cannot start another worker: {}", id, e.toString());
            leave();
        }
    }

    /** Drops the connection once no request has arrived or run for {@code idleMillis} (0: never). */
    private void watchIdle(long idleMillis) {
        if (idleMillis <= 0) {
            return;
        }
        lastActive = System.nanoTime();
        watchingIdle = true;
        long period = Math.max(10, idleMillis / 4);
        long idleNanos = TimeUnit.MILLISECONDS.toNanos(idleMillis);
        idleWatch = server.timer.scheduleWithFixedDelay(() -> {
            // idle means the server has waited for input that long: a worker held up by the
            // scheduler before it read a request the client already sent is not an idle client
            if (awaitingInput && running.get() == 0 && System.nanoTime() - lastActive > idleNanos) {
                LOG.info("{}: idle for more than {} ms; dropping the connection", id, idleMillis);
                close();
            }
        }, period, period, TimeUnit.MILLISECONDS);
    }

    private void leave() {
        if (live.decrementAndGet() == 0) {
            close();
            ScheduledFuture<?> w = idleWatch;
            if (w != null) {
                w.cancel(false);
            }
            Export e = export;
            if (e != null) {
                e.releaseConnection(); // before leaving the set, so a count seen there is already free
                e.connections.remove(this);
            }
            listener.connections.remove(this);
            closed.countDown();
        }
    }

    private void serve() {
        Request req = new Request();
        WorkerReplies replies = new WorkerReplies();
        // One request per call: this loop runs once per thread, so the JIT would compile it only
        // after tens of thousands of iterations (on-stack replacement) and new connections' first
        // requests ran interpreted; serveOne is compiled after a few hundred calls.
        boolean more = true;
        while (more) {
            more = serveOne(req, replies);
        }
    }

    /** Reads, runs and answers one request; false when this worker must leave. */
    private boolean serveOne(Request req, WorkerReplies replies) {
        ByteBuffer payload = null;
        int errno;
        boolean counted = false;
        readLock.lock();
        try {
            if (stopping) {
                return false;
            }
            boolean header;
            if (watchingIdle) {
                lastActive = System.nanoTime();
                awaitingInput = true;
                try {
                    header = input.readHeader(req);
                } finally {
                    awaitingInput = false;
                }
            } else {
                header = input.readHeader(req);
            }
            if (!header) {
                stopping = true;
                return false;
            }
            running.incrementAndGet();
            counted = true;
            lastActive = System.nanoTime();
            errno = exec.check(req);
            if (req.type == Nbd.CMD_DISC) {
                // soft disconnect: finish what runs, read nothing more
                stopping = true;
                running.decrementAndGet();
                return false;
            }
            if (RequestExecutor.hasPayload(req)) {
                if (errno != 0) {
                    input.skip(req.length);
                } else {
                    payload = server.pool.acquire((int) req.length);
                    input.readFully(payload);
                    payload.flip();
                }
            }
            if (!readLock.hasQueuedThreads() && live.get() < server.settings.workers()) {
                spawnWorker();
            }
        } catch (IOException | RuntimeException e) {
            if (!stopping) {
                LOG.debug("{}: dropping connection: {}", id, e.toString());
            }
            if (payload != null) {
                server.pool.release(payload);
            }
            if (counted) {
                running.decrementAndGet();
            }
            close();
            return false;
        } finally {
            readLock.unlock();
        }
        try {
            if (errno != 0) {
                export.counters.errors.increment();
                replies.error(req, errno, exec.checkMessage(req, errno));
            } else {
                exec.execute(req, payload, replies);
            }
        } catch (IOException | RuntimeException e) {
            if (!stopping) {
                LOG.debug("{}: cannot send reply: {}", id, e.toString());
            }
            close();
            return false;
        } finally {
            if (payload != null) {
                server.pool.release(payload);
            }
            lastActive = System.nanoTime();
            running.decrementAndGet();
        }
        return true;
    }

    // ---- replies: combined writes ----
    //
    // A worker never waits for the socket: it puts its reply (header + optional pooled body) in
    // the pending queue and tries to become the writer. The writer (whoever holds writeLock)
    // sends every pending reply with gathering writes, releases their buffers and slots, and
    // after unlocking checks the queue once more so that no reply is stranded. Reply slots are
    // bounded, so a client that stops reading stalls its own workers, nothing else.

    /** A reply waiting to be sent. */
    private static final class ReplySlot {
        final ByteBuffer header = ByteBuffer.allocateDirect(64);
        ByteBuffer head;
        ByteBuffer body;
    }

    private final ReentrantLock queueLock = new ReentrantLock();
    private final java.util.concurrent.locks.Condition slotFree = queueLock.newCondition();
    private ReplySlot[] freeSlots;
    private int freeCount;
    private ReplySlot[] pending;
    private int pendingHead;
    private int pendingCount;
    private ReplySlot[] batch;
    private ByteBuffer[] gather;

    private void initReplies(int slots) {
        freeSlots = new ReplySlot[slots];
        for (int i = 0; i < slots; i++) {
            freeSlots[i] = new ReplySlot();
        }
        freeCount = slots;
        pending = new ReplySlot[slots];
        batch = new ReplySlot[slots];
        gather = new ByteBuffer[2 * slots];
    }

    private ReplySlot takeSlot() throws IOException {
        queueLock.lock();
        try {
            while (freeCount == 0) {
                if (stopping && !channel.isOpen()) {
                    throw new java.nio.channels.ClosedChannelException();
                }
                try {
                    slotFree.await(1, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new java.io.InterruptedIOException();
                }
            }
            return freeSlots[--freeCount];
        } finally {
            queueLock.unlock();
        }
    }

    private void enqueue(ReplySlot s) {
        queueLock.lock();
        try {
            pending[(pendingHead + pendingCount) % pending.length] = s;
            pendingCount++;
        } finally {
            queueLock.unlock();
        }
    }

    private boolean hasPending() {
        queueLock.lock();
        try {
            return pendingCount > 0;
        } finally {
            queueLock.unlock();
        }
    }

    /** Sends pending replies unless another thread is already doing so. */
    private void drain() throws IOException {
        while (writeLock.tryLock()) {
            try {
                drainLocked();
            } finally {
                writeLock.unlock();
            }
            if (!hasPending()) {
                return;
            }
        }
    }

    private void drainLocked() throws IOException {
        while (true) {
            int n;
            queueLock.lock();
            try {
                n = pendingCount;
                for (int i = 0; i < n; i++) {
                    batch[i] = pending[(pendingHead + i) % pending.length];
                    pending[(pendingHead + i) % pending.length] = null;
                }
                pendingHead = (pendingHead + n) % pending.length;
                pendingCount = 0;
            } finally {
                queueLock.unlock();
            }
            if (n == 0) {
                return;
            }
            int g = 0;
            for (int i = 0; i < n; i++) {
                gather[g++] = batch[i].head;
                if (batch[i].body != null) {
                    gather[g++] = batch[i].body;
                }
            }
            try {
                ByteBuffer last = gather[g - 1];
                while (last.hasRemaining()) {
                    replyOut.write(gather, 0, g);
                }
            } finally {
                java.util.Arrays.fill(gather, 0, g, null);
                queueLock.lock();
                try {
                    for (int i = 0; i < n; i++) {
                        ReplySlot s = batch[i];
                        batch[i] = null;
                        if (s.body != null) {
                            server.pool.release(s.body);
                            s.body = null;
                        }
                        s.head = null;
                        freeSlots[freeCount++] = s;
                    }
                    slotFree.signalAll();
                } finally {
                    queueLock.unlock();
                }
            }
        }
    }

    /** Encodes replies into reply slots and hands them to the combined writer. */
    private final class WorkerReplies implements Replies {

        @Override
        public void ok(Request r) throws IOException {
            ReplySlot s = takeSlot();
            ByteBuffer h = s.header.clear();
            if (structured && r.type == Nbd.CMD_READ) {
                ReplyCodec.structured(h, Nbd.REPLY_FLAG_DONE, Nbd.REPLY_TYPE_NONE, r.cookie, 0);
            } else {
                ReplyCodec.simple(h, 0, r.cookie);
            }
            send(s, h.flip(), null);
        }

        @Override
        public void error(Request r, int errno, String message) throws IOException {
            ReplySlot s = takeSlot();
            if (structured) {
                byte[] m = ReplyCodec.messageBytes(message);
                ByteBuffer b = ByteBuffer.allocate(Nbd.STRUCTURED_REPLY_HEADER_SIZE + 6 + m.length);
                ReplyCodec.error(b, r.cookie, errno, m);
                send(s, b.flip(), null);
            } else {
                ByteBuffer h = s.header.clear();
                ReplyCodec.simple(h, errno, r.cookie);
                send(s, h.flip(), null);
            }
        }

        @Override
        public void data(Request r, ByteBuffer data) throws IOException {
            ReplySlot s;
            try {
                s = takeSlot();
            } catch (IOException | RuntimeException e) {
                server.pool.release(data);
                throw e;
            }
            ByteBuffer h = s.header.clear();
            if (structured) {
                ReplyCodec.offsetData(h, r.cookie, r.offset, data.remaining());
            } else {
                ReplyCodec.simple(h, 0, r.cookie);
            }
            send(s, h.flip(), data);
        }

        @Override
        public void extents(Request r, int contextId, int[] lengths, int[] flags, int count) throws IOException {
            ReplySlot s = takeSlot();
            ByteBuffer b = ByteBuffer.allocate(Nbd.STRUCTURED_REPLY_HEADER_SIZE + 4 + 8 * count);
            ReplyCodec.blockStatusHeader(b, r.cookie, contextId, count);
            for (int i = 0; i < count; i++) {
                b.putInt(lengths[i]).putInt(flags[i]);
            }
            send(s, b.flip(), null);
        }

        private void send(ReplySlot s, ByteBuffer head, ByteBuffer body) throws IOException {
            s.head = head;
            s.body = body;
            enqueue(s);
            drain();
        }
    }
}
