package dev.strata.nbd.internal.server;

import dev.strata.api.BlockDevice;
import dev.strata.nbd.internal.exec.IoCounters;
import dev.strata.nbd.internal.session.ExportView;
import java.net.InetSocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** One export: a name on a listener, the device behind it and its counters. */
public final class Export implements ExportView {
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
