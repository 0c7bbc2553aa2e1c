package dev.strata.itests;

import java.io.Closeable;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/** A TCP proxy whose connections a test can cut at any moment, and which can stop accepting (a copy of the nbd bundle's test proxy: test classes are not shared across modules). */
final class CuttableProxy implements Closeable {
    private final ServerSocketChannel server;
    private final InetSocketAddress upstream;
    private final List<SocketChannel> open = new CopyOnWriteArrayList<>();
    public final AtomicInteger accepted = new AtomicInteger();
    private volatile boolean refusing;
    private final Thread acceptor;

    public CuttableProxy(InetSocketAddress upstream) throws IOException {
        this.upstream = upstream;
        this.server = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        acceptor = new Thread(this::acceptLoop, "proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public int port() throws IOException {
        return ((InetSocketAddress) server.getLocalAddress()).getPort();
    }

    /** While refusing, new connections are closed at once. */
    public void refuse(boolean refuse) {
        this.refusing = refuse;
    }

    /** Drops every open connection (both sides). */
    public void cutAll() {
        for (SocketChannel c : open) {
            try {
                c.close();
            } catch (IOException ignored) {
                // already closed
            }
            open.remove(c);
        }
    }

    private void acceptLoop() {
        while (server.isOpen()) {
            try {
                SocketChannel client = server.accept();
                if (refusing) {
                    client.close();
                    continue;
                }
                SocketChannel up = SocketChannel.open(upstream);
                accepted.incrementAndGet();
                open.add(client);
                open.add(up);
                pump(client, up);
                pump(up, client);
            } catch (IOException e) {
                return;
            }
        }
    }

    private void pump(SocketChannel from, SocketChannel to) {
        Thread t = new Thread(() -> {
            ByteBuffer b = ByteBuffer.allocateDirect(256 * 1024);
            try {
                while (true) {
                    b.clear();
                    if (from.read(b) < 0) {
                        break;
                    }
                    b.flip();
                    while (b.hasRemaining()) {
                        to.write(b);
                    }
                }
            } catch (IOException ignored) {
                // cut
            } finally {
                try {
                    from.close();
                    to.close();
                } catch (IOException ignored) {
                    // cut
                }
            }
        }, "proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void close() throws IOException {
        server.close();
        cutAll();
        try {
            acceptor.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
