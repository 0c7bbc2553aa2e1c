package dev.strata.nbd.internal.server;

import dev.strata.api.BlockDevice;
import dev.strata.api.InvalidArgumentException;
import dev.strata.nbd.internal.exec.BufferPool;
import dev.strata.nbd.internal.session.TlsMode;
import dev.strata.nbd.internal.tls.TlsConfig;
import java.io.Closeable;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The NBD server: exports by name, each bound to a listener (address and port). Several exports
 * may share a listener; a client picks one by name. Thread-safe.
 */
public final class NbdServer implements Closeable {

    /**
     * @param workers                 most requests run at once per connection
     * @param handshakeTimeoutMillis  a client that has not finished negotiating by then is dropped
     * @param inputBuffer             bytes buffered per connection when reading requests
     * @param poolBudget              most bytes of idle I/O buffers kept for reuse
     */
    public record Settings(int workers, long handshakeTimeoutMillis, int inputBuffer, long poolBudget) {
        public static Settings defaults() {
            return new Settings(16, 30_000, 64 * 1024, 256L << 20);
        }
    }

    final Settings settings;
    final BufferPool pool;
    final ScheduledExecutorService timer;
    /** The key of the listener on the socket inherited by socket activation (there is one at most). */
    private static final String INHERITED = "inherited";
    private final Map<String, Listener> listeners = new HashMap<>();
    private final Map<String, Export> exports = new LinkedHashMap<>();
    private boolean closed;

    public NbdServer() {
        this(Settings.defaults());
    }

    public NbdServer(Settings settings) {
        this.settings = settings;
        this.pool = new BufferPool(settings.poolBudget());
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "nbd-timer");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Exports {@code device} as {@code name} on {@code bind} (port 0 picks a free port).
     *
     * @throws InvalidArgumentException if the name is taken or the address cannot be bound; nothing is started
     */
    public Export addExport(String name, String description, BlockDevice device, InetSocketAddress bind,
            boolean readOnly) throws IOException {
        return addExport(name, description, device, bind, readOnly, TlsConfig.OFF);
    }

    /**
     * As above, with TLS. Exports that share a listener (address and port) must have the same
     * TLS setting, because STARTTLS comes before the client names an export.
     *
     * @throws InvalidArgumentException also when the listener serves exports with another TLS setting
     */
    public Export addExport(String name, String description, BlockDevice device, InetSocketAddress bind,
            boolean readOnly, TlsConfig tls) throws IOException {
        return addExport(name, description, device, bind, readOnly, tls, ExportLimits.NONE);
    }

    /** As above, with connection limits. */
    public synchronized Export addExport(String name, String description, BlockDevice device, InetSocketAddress bind,
            boolean readOnly, TlsConfig tls, ExportLimits limits) throws IOException {
        checkName(name);
        String key = Listener.key(bind);
        Listener l = bind.getPort() == 0 ? null : listeners.get(key);
        if (l != null && !l.tls.sameAs(tls)) {
            throw new InvalidArgumentException("port " + bind.getPort() + " already serves exports with TLS "
                    + l.tls.describe() + "; exports sharing a port share its TLS setting: choose another --port");
        }
        if (l == null) {
            try {
                l = new Listener(bind, this, tls);
            } catch (IOException e) {
                throw new InvalidArgumentException("cannot listen on " + bind.getAddress().getHostAddress() + ":"
                        + bind.getPort() + ": " + e.getMessage() + "; choose another --port or --bind");
            }
            listeners.put(Listener.key(l.address()), l);
        }
        return attach(name, description, device, readOnly, l, limits);
    }

    /**
     * Exports {@code device} on a Unix-domain socket at {@code path} (several exports may share
     * one), the file made with octal {@code mode} such as {@code 0660} (null or empty: as the umask says). A stale socket file is
     * replaced; a live socket or a file that is not a socket is refused and left alone.
     *
     * @throws InvalidArgumentException name taken, directory missing, path in use; nothing is started
     */
    public synchronized Export addUnixExport(String name, String description, BlockDevice device, Path path,
            String mode, boolean readOnly, ExportLimits limits) throws IOException {
        checkName(name);
        Set<PosixFilePermission> perms = UnixSocketFile.parseMode(mode);
        Path abs = path.toAbsolutePath().normalize();
        Listener l = listeners.get(Listener.key(UnixDomainSocketAddress.of(abs)));
        if (l == null) {
            l = new Listener(abs, perms, this, TlsConfig.OFF);
            listeners.put(Listener.key(l.address()), l);
        }
        return attach(name, description, device, readOnly, l, limits);
    }

    /**
     * Exports {@code device} on {@code inherited}, the listening socket (TCP or Unix-domain) this
     * process was given by socket activation. Every export asking for it shares it, as exports
     * share a port; it is never closed before the server, so a later export can use it again.
     *
     * @throws InvalidArgumentException name taken, TLS asked for on a Unix socket, or TLS
     *         different from that of the exports already on it
     */
    public synchronized Export addInheritedExport(String name, String description, BlockDevice device,
            ServerSocketChannel inherited, boolean readOnly, TlsConfig tls, ExportLimits limits) throws IOException {
        checkName(name);
        Listener l = listeners.get(INHERITED);
        if (l == null) {
            if (!(inherited.getLocalAddress() instanceof InetSocketAddress) && tls.mode() != TlsMode.OFF) {
                throw new InvalidArgumentException("TLS is not supported on the inherited Unix socket; let the socket"
                        + " file's mode say who may connect, or give the .socket unit a TCP ListenStream= for TLS");
            }
            l = new Listener(inherited, this, tls);
            listeners.put(INHERITED, l);
        } else if (!l.tls.sameAs(tls)) {
            if (!l.exports.isEmpty()) {
                throw new InvalidArgumentException("the inherited socket already serves exports with TLS "
                        + l.tls.describe() + "; exports sharing a socket share its TLS setting");
            }
            l.tls = tls; // nobody is served here: the next clients negotiate with the new setting
        }
        return attach(name, description, device, readOnly, l, limits);
    }

    private void checkName(String name) {
        if (closed) {
            throw new IllegalStateException("NBD server is closed");
        }
        if (exports.containsKey(name)) {
            throw new InvalidArgumentException("an export named '" + name + "' exists already; choose another --name or nbd:unexport it first");
        }
    }

    private Export attach(String name, String description, BlockDevice device, boolean readOnly, Listener l,
            ExportLimits limits) {
        Export e = new Export(name, description, device, readOnly, limits);
        e.listener = l;
        l.exports.put(name, e);
        exports.put(name, e);
        l.start(); // after the put: a client accepted now finds the export
        return e;
    }

    /**
     * Removes an export: drops its connections and waits (up to {@code timeoutMillis}) for their
     * running requests to finish, so the device may be closed afterwards. Closes the listener when
     * no export is left on it.
     *
     * @return false if there is no such export
     */
    public boolean removeExport(String name, long timeoutMillis) {
        Export e;
        synchronized (this) {
            e = exports.remove(name);
            if (e == null) {
                return false;
            }
            Listener l = e.listener;
            l.exports.remove(name);
            e.listener = null;
            if (l.exports.isEmpty() && !l.inherited) {
                listeners.remove(Listener.key(l.address()));
                l.close();
            }
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        for (Connection c : new ArrayList<>(e.connections)) {
            c.close();
        }
        for (Connection c : new ArrayList<>(e.connections)) {
            try {
                c.awaitClosed(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        return true;
    }

    public synchronized Export export(String name) {
        return exports.get(name);
    }

    public synchronized List<Export> exports() {
        return new ArrayList<>(exports.values());
    }

    @Override
    public void close() {
        List<String> names;
        synchronized (this) {
            closed = true;
            names = new ArrayList<>(exports.keySet());
        }
        for (String n : names) {
            removeExport(n, 10_000);
        }
        synchronized (this) {
            for (Listener l : listeners.values()) {
                l.close();
            }
            listeners.clear();
        }
        timer.shutdownNow();
    }
}
