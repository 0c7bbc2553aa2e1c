package dev.strata.nbd.internal.server;

import dev.strata.api.BlockDevice;
import dev.strata.nbd.internal.exec.IoCounters;
import dev.strata.nbd.internal.session.ExportView;
import java.net.InetSocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/** One export: a name on a listener, the device behind it and its counters. */
public final class Export implements ExportView {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Export.class);
    private final String name;
    private final String description;
    private final BlockDevice device;
    private final boolean readOnly;
    final IoCounters counters = new IoCounters();
    final Set<Connection> connections = ConcurrentHashMap.newKeySet();
    final Object rmwLock = new Object();
    volatile Listener listener;
    final ExportLimits limits;
    /** Connections admitted at GO/EXPORT_NAME and not yet gone (what max-connections counts). */
    private final AtomicInteger admitted = new AtomicInteger();
    /**
     * Why the device cannot be served yet (null: it can). Until its owner says better, a size of 0
     * means "not built" (a handle on a device whose target is still being made reports 0), so a
     * client is never told size 0 even in the moment before {@link #readiness} is set.
     */
    private volatile Supplier<NotReady> notReady = this::zeroSize;
    /** How long a client asking for this export waits for its device to be ready before it is refused. */
    private volatile long readyWaitMillis = DEFAULT_READY_WAIT_MILLIS;
    /** Short enough for a client's connect timeout, long enough for a cache to format on start. */
    public static final long DEFAULT_READY_WAIT_MILLIS = 10_000;
    private static final long READY_POLL_MILLIS = 50;

    Export(String name, String description, BlockDevice device, boolean readOnly, ExportLimits limits) {
        this.name = name;
        this.description = description;
        this.device = device;
        this.readOnly = readOnly;
        this.limits = limits;
    }

    @Override
    public String tryAdmit() {
        int max = limits.maxConnections();
        while (true) {
            int n = admitted.get();
            if (max > 0 && n >= max) {
                return "export '" + name + "' already serves its maximum of " + max + " connections; try again later";
            }
            if (admitted.compareAndSet(n, n + 1)) {
                return null;
            }
        }
    }

    /**
     * Why a device cannot be served now, and whether a client asking for it should wait: only a
     * device that may come up within seconds by itself (its first build running, nothing named
     * that it waits for) is waited for; one that waits for something named (a failed build
     * retried later, a target type not installed, a lower device) is refused at once.
     */
    public record NotReady(String why, boolean worthWaiting) {
        public static NotReady waitFor(String why) {
            return new NotReady(why, true);
        }

        public static NotReady refuse(String why) {
            return new NotReady(why, false);
        }
    }

    /**
     * Sets what says whether the device can be served: null when it can, else why not (one line
     * for the client, e.g. "device 'wb0' is not active yet: waiting for target type 'writeboost'").
     * A size of 0 counts as not ready whatever it says.
     */
    public void readiness(Supplier<NotReady> why) {
        notReady = () -> {
            NotReady w = why.get();
            return w != null ? w : zeroSize();
        };
    }

    /** How long {@link #awaitReady()} waits at most (0: not at all). */
    public void readyWaitMillis(long millis) {
        readyWaitMillis = Math.max(0, millis);
    }

    private NotReady zeroSize() {
        return device.size() > 0 ? null : NotReady.waitFor("its device is not built yet (size unknown)");
    }

    @Override
    public String readyNow() {
        NotReady why = notReady.get();
        return why == null ? null : refusal(why);
    }

    /**
     * Waits a bounded time for the device to be ready, but only while waiting may help
     * ({@link NotReady#worthWaiting()}): a device waiting for something named is refused at once.
     * A poll, because the device manager offers no notification for "active"; a handshake has
     * its own thread, so nothing else waits.
     */
    @Override
    public String awaitReady() throws java.io.InterruptedIOException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(readyWaitMillis);
        while (true) {
            NotReady why = notReady.get();
            if (why == null) {
                return null;
            }
            if (!why.worthWaiting() || System.nanoTime() - deadline >= 0) {
                return refusal(why);
            }
            try {
                Thread.sleep(READY_POLL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException("interrupted while waiting for export '" + name + "'");
            }
        }
    }

    private String refusal(NotReady why) {
        String refusal = "export '" + name + "' is not available yet: " + why.why() + "; try again shortly";
        // libnbd does not show the server's message: the log says why the client was refused
        LOG.info("client refused: {}", refusal);
        return refusal;
    }

    @Override
    public void releaseConnection() {
        admitted.decrementAndGet();
    }

    public ExportLimits limits() {
        return limits;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public long size() {
        return device.size();
    }

    @Override
    public boolean readOnly() {
        return readOnly;
    }

    @Override
    public boolean canFastZero() {
        return device.canFastZero();
    }

    public BlockDevice device() {
        return device;
    }

    public int connectionCount() {
        return connections.size();
    }

    public long bytesRead() {
        return counters.bytesRead.sum();
    }

    public long bytesWritten() {
        return counters.bytesWritten.sum();
    }

    public long requests() {
        return counters.requests.sum();
    }

    public long errors() {
        return counters.errors.sum();
    }

    /** Puts the read, write and flush latency percentiles into {@code status}. */
    public void latency(java.util.Map<String, String> status) {
        counters.latency.render(status);
    }

    public String bindAddress() {
        Listener l = listener;
        return l == null ? "" : l.address() instanceof InetSocketAddress i ? i.getAddress().getHostAddress() : "";
    }

    /** The listener's port (the real one when 0 was asked for); 0 for a Unix socket. */
    public int port() {
        Listener l = listener;
        return l != null && l.address() instanceof InetSocketAddress i ? i.getPort() : 0;
    }

    /** True when the export listens on the socket inherited by socket activation. */
    public boolean inherited() {
        Listener l = listener;
        return l != null && l.inherited;
    }

    /** The socket file for a Unix-socket export, else null. */
    public Path unixPath() {
        Listener l = listener;
        return l != null && l.address() instanceof UnixDomainSocketAddress u ? u.getPath() : null;
    }
}
