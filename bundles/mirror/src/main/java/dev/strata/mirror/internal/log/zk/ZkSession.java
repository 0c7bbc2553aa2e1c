package dev.strata.mirror.internal.log.zk;

import java.io.IOException;
import java.io.InterruptedIOException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One node's ZooKeeper connection: the current client handle and what its events said
 * (connected, disconnected, expired). An expired handle is dead for good; {@link #renew} makes a
 * new one (a new session). Events of an older handle are ignored.
 */
final class ZkSession {
    private static final Logger LOG = LoggerFactory.getLogger(ZkSession.class);
    private final ZkLogConfig config;
    private final Object lock = new Object();
    private volatile ZooKeeper zk;
    private int generation;
    private volatile boolean connected;
    private volatile boolean expired;
    private volatile boolean closed;
    private volatile boolean watchFired;
    private final Watcher changeWatcher = e -> watchFired = true;
    private long expiries;
    private long disconnects;

    ZkSession(ZkLogConfig config) {
        this.config = config;
    }

    /** The current handle; {@link #renew} first if there is none. */
    ZooKeeper handle() {
        synchronized (lock) {
            return zk;
        }
    }

    boolean connected() {
        return connected && !expired;
    }

    boolean expired() {
        return expired || zk == null;
    }

    long expiries() {
        synchronized (lock) {
            return expiries;
        }
    }

    long disconnects() {
        synchronized (lock) {
            return disconnects;
        }
    }

    /** Whether a watch set through {@link #watcher()} fired since the last call. */
    boolean takeWatchFired() {
        boolean f = watchFired;
        watchFired = false;
        return f;
    }

    /**
     * The watcher that only records that something changed (members joined or left). One
     * instance: the client keeps a set of watchers per path, so a new one per scan would pile up.
     */
    Watcher watcher() {
        return changeWatcher;
    }

    /** Closes the old handle (if any) and opens a new session. */
    void renew() throws IOException {
        ZooKeeper old;
        int gen;
        synchronized (lock) {
            if (closed) {
                throw new IOException("mirror: the ZooKeeper log is closed");
            }
            old = zk;
            gen = ++generation;
            connected = false;
            expired = false;
        }
        closeQuietly(old);
        ZKClientConfig c = new ZKClientConfig();
        // no JAAS lookup in an OSGi framework; a request never waits longer than a session lives
        c.setProperty(ZKClientConfig.ENABLE_CLIENT_SASL_KEY, "false");
        c.setProperty(ZKClientConfig.ZOOKEEPER_REQUEST_TIMEOUT, Integer.toString(config.sessionTimeoutMs()));
        ZooKeeper nz;
        try {
            nz = new ZooKeeper(config.connect(), config.sessionTimeoutMs(), e -> event(gen, e), c);
        } catch (IllegalArgumentException e) {
            throw new IOException("mirror: ZooKeeper connect string '" + config.connect() + "' is not usable: " + e.getMessage());
        }
        synchronized (lock) {
            if (generation == gen && !closed) {
                zk = nz;
                return;
            }
        }
        closeQuietly(nz);
        throw new IOException("mirror: the ZooKeeper log is closed");
    }

    private void event(int gen, WatchedEvent e) {
        if (e.getType() != Watcher.Event.EventType.None) {
            watchFired = true;
            return;
        }
        synchronized (lock) {
            if (gen != generation) {
                return;
            }
            switch (e.getState()) {
                case SyncConnected, ConnectedReadOnly -> connected = e.getState() == Watcher.Event.KeeperState.SyncConnected;
                case Disconnected -> {
                    if (connected) {
                        disconnects++;
                    }
                    connected = false;
                }
                case Expired -> {
                    connected = false;
                    expired = true;
                    expiries++;
                }
                default -> {
                    // auth events: nothing to do, no SASL
                }
            }
            lock.notifyAll();
        }
    }

    /** Waits until connected, expired or closed, or until {@code deadlineNanos}. */
    void awaitChange(long deadlineNanos) throws IOException {
        synchronized (lock) {
            if (connected() || expired || closed) {
                return;
            }
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                return;
            }
            try {
                lock.wait(Math.max(1, Math.min(left / 1_000_000, 200)));
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while waiting for ZooKeeper");
            }
        }
    }

    boolean closed() {
        return closed;
    }

    /**
     * Waits for the first connection of a new handle, at most {@code zk_connect_timeout}: a server
     * that cannot be reached is one clear line soon, not a wait for the whole open's deadline.
     */
    void awaitFirstConnection() throws IOException {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(config.connectTimeoutMs());
        while (!connected() && !expired() && !closed && System.nanoTime() - deadline < 0) {
            awaitChange(deadline);
        }
        if (!connected() && !expired() && !closed) {
            String why = "mirror: cannot reach ZooKeeper at " + config.connect() + " for the log at "
                    + config.describe() + " within " + config.connectTimeoutMs() / 1000.0 + " s (zk_connect_timeout="
                    + config.connectTimeoutMs() + "); is ZooKeeper running and reachable from here?";
            // one line per open that gives up (the client's own WARN with a stack trace for each of
            // its connection attempts, about one a second, is off in the distribution's logback.xml)
            LOG.warn(why);
            throw new IOException(why);
        }
    }

    long sessionId() {
        ZooKeeper z = handle();
        return z == null ? 0 : z.getSessionId();
    }

    byte[] sessionPassword() {
        ZooKeeper z = handle();
        return z == null ? new byte[0] : z.getSessionPasswd();
    }

    void close() {
        ZooKeeper old;
        synchronized (lock) {
            closed = true;
            old = zk;
            zk = null;
            connected = false;
            lock.notifyAll();
        }
        closeSoon(old);
    }

    /**
     * Closes {@code z} and returns once the server has ended its session (the client's state is
     * {@code CLOSED} right after the server's reply), or after one session timeout. The client
     * then pauses 100 ms before it closes its socket ({@code ClientCnxnSocketNIO.cleanup}); that
     * happens on a short-lived thread of its own, so a restart or a test's crash does not wait
     * for it (it was most of a crash model's run).
     */
    private void closeSoon(ZooKeeper z) {
        if (z == null) {
            return;
        }
        Thread t = new Thread(() -> closeQuietly(z), "mirror-zookeeper-close");
        t.setDaemon(true);
        t.start();
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(config.sessionTimeoutMs());
        try {
            while (t.isAlive() && z.getState().isAlive() && System.nanoTime() - deadline < 0) {
                t.join(1);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void closeQuietly(ZooKeeper z) {
        if (z == null) {
            return;
        }
        try {
            z.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Runs {@code c} on the current handle, retrying while the connection is lost (the log's
     * calls are idempotent or conflict-checked), and turns ZooKeeper's errors into the log's
     * outcomes ({@link ZkCall}); {@code where} names the log in messages.
     */
    <T> T call(ZkCall<T> c, long deadline, String where) throws IOException {
        while (true) {
            ZooKeeper h = handle();
            if (closed() || h == null) {
                throw new IOException("mirror: the log at " + where + " is closed");
            }
            if (expired()) {
                throw new ZkCall.SessionLost();
            }
            try {
                return c.run(h);
            } catch (org.apache.zookeeper.KeeperException e) {
                switch (e.code()) {
                    case CONNECTIONLOSS, OPERATIONTIMEOUT, REQUESTTIMEOUT, SESSIONMOVED -> {
                        if (System.nanoTime() > deadline) {
                            throw timeout(where);
                        }
                        awaitChange(Math.min(deadline, System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(200)));
                        if (!connected() && !expired()) {
                            sleepQuietly(50);
                        }
                    }
                    case SESSIONEXPIRED -> throw new ZkCall.SessionLost();
                    case BADVERSION, NONODE, NOTEMPTY -> throw new ZkCall.Fenced(e.getMessage());
                    case NODEEXISTS -> throw new ZkCall.Conflict(e.getMessage());
                    default -> throw new IOException("mirror: ZooKeeper refused an update of the log at " + where + ": "
                            + e.code().name().toLowerCase(java.util.Locale.ROOT));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while talking to ZooKeeper");
            }
        }
    }

    static IOException timeout(String where) {
        // one line for both waits: a write (up to pause, 120 s) and the start (2 session timeouts + 30 s)
        return new IOException("mirror: no ZooKeeper session for the log at " + where
                + "; waited for one and gave up (is ZooKeeper running and reachable from here?)");
    }

    static void sleepQuietly(long ms) throws InterruptedIOException {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for ZooKeeper");
        }
    }
}
