package dev.strata.nbd.internal.client;

import dev.strata.api.InvalidArgumentException;
import java.net.URI;
import java.net.URISyntaxException;

/** {@code nbd://host[:port][/export]}; port 10809 by default, the empty export name by default. */
public record NbdUri(String host, int port, String export) {

    public static NbdUri parse(String text) {
        URI u;
        try {
            u = new URI(text);
        } catch (URISyntaxException e) {
            throw new InvalidArgumentException("nbd: uri=" + text + " is not a URI; use nbd://host:port/export");
        }
        if (!"nbd".equals(u.getScheme()) || u.getHost() == null) {
            throw new InvalidArgumentException("nbd: uri=" + text + " is not of the form nbd://host:port/export");
        }
        String path = u.getPath() == null ? "" : u.getPath();
        String export = path.startsWith("/") ? path.substring(1) : path;
        int port = u.getPort() < 0 ? 10809 : u.getPort();
        return new NbdUri(u.getHost(), port, export);
    }

    @Override
    public String toString() {
        String h = host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
        return "nbd://" + h + ":" + port + "/" + export;
    }
}
