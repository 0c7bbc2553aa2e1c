package dev.strata.nbd.internal.server;

import dev.strata.nbd.internal.session.ExportCatalog;
import dev.strata.nbd.internal.tls.TlsConfig;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A listening socket (TCP, or a Unix-domain socket file) and the exports reachable through it
 * (chosen by export name). Both kinds hand the same {@link Connection} a {@link SocketChannel}:
 * the transport differs, the session does not.
 */
final class Listener implements ExportCatalog {
    private static final Logger LOG = LoggerFactory.getLogger(Listener.class);

    private final ServerSocketChannel server;
    /** The bound address: an {@link InetSocketAddress} or a {@link UnixDomainSocketAddress}. */
    private final SocketAddress address;
    /** The socket file to remove on close; null for TCP. */
    private final Path unixPath;
    /** The socket file's identity when bound, so close never removes a file that replaced it. */
    private final Object unixKey;
    private final NbdServer owner;
    /**
     * TLS for every export here (STARTTLS comes before the client picks an export). Changes only
     * on the inherited listener, and only while it has no export (see NbdServer).
     */
    volatile TlsConfig tls;
    /**
     * The socket this process inherited by socket activation: it outlives its exports (it cannot
     * be made again), so it stays open, and clients are answered "no such export", while none is left.
     */
    final boolean inherited;
    final Map<String, Export> exports = new ConcurrentSkipListMap<>();
    final Set<Connection> connections = ConcurrentHashMap.newKeySet();
    private final Thread acceptor;
    private volatile boolean closed;

    Listener(InetSocketAddress bind, NbdServer owner, TlsConfig tls) throws IOException {
        this.owner = owner;
        this.tls = tls;
        this.unixPath = null;
        this.unixKey = null;
        this.inherited = false;
        this.server = ServerSocketChannel.open();
        try {
            server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            server.bind(bind, 128);
        } catch (IOException e) {
            server.close();
            throw e;
        }
        this.address = server.getLocalAddress();
        this.acceptor = newAcceptor();
    }

    /** A Unix-domain listener at {@code path} (see {@link UnixSocketFile} for an existing file). */
    Listener(Path path, Set<PosixFilePermission> mode, NbdServer owner, TlsConfig tls) throws IOException {
        this.owner = owner;
        this.tls = tls;
        this.unixPath = path;
        this.inherited = false;
        this.server = UnixSocketFile.bind(path, mode, 128);
        this.unixKey = UnixSocketFile.fileKey(path);
        this.address = UnixDomainSocketAddress.of(path);
        this.acceptor = newAcceptor();
    }

    /**
     * A listener on a socket someone else bound (TCP or Unix-domain): the one inherited by socket
     * activation. Its socket file, if any, belongs to whoever made it and is never removed here.
     */
    Listener(ServerSocketChannel inheritedChannel, NbdServer owner, TlsConfig tls) throws IOException {
        this.owner = owner;
        this.tls = tls;
        this.unixPath = null;
        this.unixKey = null;
        this.inherited = true;
        this.server = inheritedChannel;
        this.address = inheritedChannel.getLocalAddress();
        this.acceptor = newAcceptor();
    }

    private Thread newAcceptor() {
        Thread acceptor = new Thread(this::acceptLoop, "nbd-accept-" + key(address));
        acceptor.setDaemon(true);
        return acceptor;
    }

    /**
     * Starts accepting (once; the server calls it after adding an export). Not in the constructor:
     * a client already waiting in the socket's backlog (socket activation) would otherwise be
     * accepted before the first export is in {@link #exports} and be told there is no such export.
     */
    void start() {
        if (acceptor.getState() == Thread.State.NEW && !closed) {
            acceptor.start();
        }
    }

    SocketAddress address() {
        return address;
    }

    /** {@code host:port}, or {@code unix:PATH}: how listeners are told apart. */
    static String key(SocketAddress a) {
        if (a instanceof InetSocketAddress i) {
            return i.getAddress().getHostAddress() + ":" + i.getPort();
        }
        return "unix:" + ((UnixDomainSocketAddress) a).getPath();
    }

    @Override
    public Export find(String name) {
        Export e = exports.get(name);
        if (e == null && name.isEmpty() && exports.size() == 1) {
            e = exports.values().iterator().next();
        }
        return e;
    }

    @Override
    public List<Export> list() {
        return new ArrayList<>(exports.values());
    }

    private void acceptLoop() {
        while (!closed) {
            SocketChannel ch;
            try {
                ch = server.accept();
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                if (!closed) {
                    LOG.warn("accept on {} failed: {}", address, e.toString());
                }
                continue;
            }
            try {
                if (address instanceof InetSocketAddress) {
                    ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                    ch.setOption(StandardSocketOptions.SO_KEEPALIVE, true);
                }
                Connection c = new Connection(ch, this, owner);
                connections.add(c);
                if (closed) {
                    c.close();
                    connections.remove(c);
                    return;
                }
                c.start();
            } catch (IOException | RuntimeException e) {
                LOG.warn("cannot set up connection from {}: {}", ch, e.toString());
                try {
                    ch.close();
                } catch (IOException ignored) {
                    // nothing more to do
                }
            }
        }
    }

    /** Stops accepting and drops every connection. */
    void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException e) {
            LOG.debug("close {}: {}", address, e.toString());
        }
        if (unixPath != null) {
            UnixSocketFile.remove(unixPath, unixKey);
        }
        for (Connection c : connections) {
            c.close();
        }
        try {
            acceptor.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
