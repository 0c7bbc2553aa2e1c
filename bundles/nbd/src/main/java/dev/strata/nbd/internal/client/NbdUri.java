package dev.strata.nbd.internal.client;

import dev.strata.api.InvalidArgumentException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;

/**
 * {@code nbd://host[:port][/export]} (port 10809 by default, the empty export name by default),
 * or {@code nbd+unix:///export?socket=PATH} as libnbd writes a Unix-socket export; {@code socket}
 * is null for TCP.
 */
public record NbdUri(String host, int port, String export, String socket) {

    public NbdUri(String host, int port, String export) {
        this(host, port, export, null);
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
        if (!"nbd".equals(u.getScheme()) || u.getHost() == null) {
            throw new InvalidArgumentException("nbd: uri=" + text
                    + " is not of the form nbd://host:port/export or nbd+unix:///export?socket=PATH");
        }
        int port = u.getPort() < 0 ? 10809 : u.getPort();
        return new NbdUri(u.getHost(), port, export);
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
        return "nbd://" + h + ":" + port + "/" + export;
    }
}
