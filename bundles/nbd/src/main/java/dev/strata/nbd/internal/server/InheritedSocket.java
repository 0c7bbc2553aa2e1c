package dev.strata.nbd.internal.server;

import dev.strata.api.InvalidArgumentException;
import java.io.IOException;
import java.nio.channels.Channel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * The listening socket this process was started with by socket activation (systemd's
 * {@code LISTEN_FDS} protocol, also libnbd's {@code nbd_connect_systemd_socket_activation}).
 *
 * <p>Java cannot adopt file descriptor 3, where the protocol puts the socket; {@code bin/strata}
 * checks {@code LISTEN_PID}/{@code LISTEN_FDS}, moves descriptor 3 to 0 before it execs the JVM
 * and sets {@code strata.socket.activation=true}. The JDK then hands descriptor 0 out as
 * {@link System#inheritedChannel()}: a {@link ServerSocketChannel} for a listening TCP or (JDK 16+)
 * Unix-domain socket. The JDK makes that channel once per process; once closed (the NBD bundle
 * stopped) it stays closed.
 */
public final class InheritedSocket {
    private InheritedSocket() {
    }

    /**
     * The inherited listening socket.
     *
     * @throws InvalidArgumentException with one line saying what was inherited instead and what to do
     */
    public static ServerSocketChannel get() {
        Channel c;
        try {
            c = System.inheritedChannel();
        } catch (IOException | SecurityException e) {
            throw new InvalidArgumentException("socket activation: cannot take the inherited socket: " + e.getMessage());
        }
        if (c instanceof ServerSocketChannel s) {
            if (!s.isOpen()) {
                throw new InvalidArgumentException("socket activation: the inherited socket was closed when the NBD"
                        + " bundle stopped; restart Strata (systemctl restart strata.socket strata.service) to serve on it again");
            }
            return s;
        }
        if (c instanceof SocketChannel) {
            throw new InvalidArgumentException("socket activation: the inherited socket is a connection, not a listening"
                    + " socket; use Accept=no (the default) in the .socket unit");
        }
        throw new InvalidArgumentException("socket activation: file descriptor 3 is not a listening stream socket"
                + " (TCP or Unix); use ListenStream= in the .socket unit");
    }
}
