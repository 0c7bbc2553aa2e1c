package dev.strata.nbd.internal.client;

import dev.strata.api.InvalidArgumentException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * {@code nbd://host[:port][/export]} (port 10809 by default, the empty export name by default),
 * {@code nbds://[user@]host[:port][/export]} for TLS, or {@code nbd+unix:///export?socket=PATH}
 * as libnbd writes a Unix-socket export; {@code socket} is null for TCP. libnbd's TLS query
 * parameters ({@code tls-certificates}, {@code tls-psk-file}, {@code tls-hostname},
 * {@code tls-username}) are kept in {@code query} for the target's arguments to fall back on.
 */
public record NbdUri(String host, int port, String export, String socket, boolean tls, String user,
        Map<String, String> query) {

    public NbdUri(String host, int port, String export) {
        this(host, port, export, null);
    }

    public NbdUri(String host, int port, String export, String socket) {
        this(host, port, export, socket, false, null, Map.of());
    }

    public NbdUri {
        query = query == null ? Map.of() : Map.copyOf(query);
    }

    public boolean isUnix() {
        return socket != null;
    }

    public static NbdUri parse(String text) {
        URI u;
        try {
            u = new URI(text);
        } catch (URISyntaxException e) {
            throw new InvalidArgumentException("nbd: uri=" + text + " is not a URI; use nbd://host:port/export");
        }
        String path = u.getPath() == null ? "" : u.getPath();
        String export = path.startsWith("/") ? path.substring(1) : path;
        if ("nbd+unix".equals(u.getScheme())) {
            String socket = query(u.getRawQuery(), "socket");
            if (socket == null || socket.isEmpty() || u.getRawAuthority() != null) {
                throw new InvalidArgumentException("nbd: uri=" + text
                        + " is not of the form nbd+unix:///export?socket=PATH");
            }
            return new NbdUri("", 0, export, socket);
        }
        if ("nbds+unix".equals(u.getScheme())) {
            throw new InvalidArgumentException("nbd: uri=" + text + ": TLS over a Unix socket is not supported"
                    + " (the socket file's mode is its access control); use nbd+unix:// or nbds://host:port");
        }
        boolean tls = "nbds".equals(u.getScheme());
        if (!(tls || "nbd".equals(u.getScheme())) || u.getHost() == null) {
            throw new InvalidArgumentException("nbd: uri=" + text
                    + " is not of the form nbd://host:port/export, nbds://host:port/export or nbd+unix:///export?socket=PATH");
        }
        int port = u.getPort() < 0 ? 10809 : u.getPort();
        Map<String, String> q = new HashMap<>();
        for (String k : new String[] {"tls-certificates", "tls-psk-file", "tls-hostname", "tls-username"}) {
            String v = query(u.getRawQuery(), k);
            if (v != null) {
                q.put(k, v);
            }
        }
        return new NbdUri(u.getHost(), port, export, null, tls, u.getUserInfo(), q);
    }

    private static String query(String raw, String key) {
        if (raw == null) {
            return null;
        }
        for (String kv : raw.split("&")) {
            int eq = kv.indexOf('=');
            String k = eq < 0 ? kv : kv.substring(0, eq);
            if (k.equals(key)) {
                return URLDecoder.decode(eq < 0 ? "" : kv.substring(eq + 1), StandardCharsets.UTF_8);
            }
        }
        return null;
    }

    @Override
    public String toString() {
        if (socket != null) {
            return "nbd+unix:///" + export + "?socket=" + socket;
        }
        String h = host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
        return (tls ? "nbds://" : "nbd://") + h + ":" + port + "/" + export;
    }
}
