package dev.strata.mirror.internal.log.zk;

import dev.strata.api.InvalidArgumentException;
import java.util.regex.Pattern;

/**
 * Where a {@code zookeeper:HOST:PORT[,HOST:PORT…]/PATH} log lives and who this node is in it.
 *
 * @param connect the ZooKeeper connect string ({@code host:port,host:port})
 * @param path the log's root znode, e.g. {@code /strata/m0}
 * @param node this node's name in the cluster ({@code null}: the host name, resolved by the factory)
 * @param sessionTimeoutMs the ZooKeeper session timeout: how long a dead node keeps its membership
 * @param connectTimeoutMs how long an open waits for its first connection to a server before it
 *        gives up with one line (an unreachable server is a mistake to report, not to wait out)
 */
public record ZkLogConfig(String connect, String path, String node, int sessionTimeoutMs, int connectTimeoutMs) {
    public static final String PREFIX = "zookeeper:";
    public static final int DEFAULT_SESSION_TIMEOUT_MS = 10_000;
    public static final int DEFAULT_CONNECT_TIMEOUT_MS = 15_000;

    /** With the default connect timeout. */
    public ZkLogConfig(String connect, String path, String node, int sessionTimeoutMs) {
        this(connect, path, node, sessionTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS);
    }
    private static final Pattern HOST = Pattern.compile("[A-Za-z0-9._-]+|\\[[0-9A-Fa-f:.]+\\]");
    private static final Pattern SEGMENT = Pattern.compile("[A-Za-z0-9._-]+");

    /** Parses the part after {@code log=}; one clear line for anything wrong. */
    public static ZkLogConfig parse(String log, String node, String sessionTimeout, String connectTimeout) {
        String rest = log.substring(PREFIX.length());
        int slash = rest.indexOf('/');
        if (slash <= 0) {
            throw bad(log, "needs servers and a path");
        }
        String connect = rest.substring(0, slash);
        String path = rest.substring(slash);
        for (String server : connect.split(",", -1)) {
            int colon = server.lastIndexOf(':');
            if (colon <= 0 || !HOST.matcher(server.substring(0, colon)).matches()) {
                throw bad(log, "has a bad server '" + server + "'");
            }
            int port;
            try {
                port = Integer.parseInt(server.substring(colon + 1));
            } catch (NumberFormatException e) {
                port = -1;
            }
            if (port < 1 || port > 65535) {
                throw bad(log, "has a bad port in '" + server + "'");
            }
        }
        if (path.length() < 2 || path.endsWith("/")) {
            throw bad(log, "has a bad path '" + path + "'");
        }
        for (String seg : path.substring(1).split("/", -1)) {
            if (!SEGMENT.matcher(seg).matches() || seg.equals(".") || seg.equals("..") || seg.equals("zookeeper")) {
                throw bad(log, "has a bad path '" + path + "'");
            }
        }
        if (node != null && (!SEGMENT.matcher(node).matches() || node.equals(".") || node.equals(".."))) {
            throw new InvalidArgumentException("mirror: node=" + node + " is not a name of letters, digits, '.', '_' or '-'");
        }
        int timeout = millis("session_timeout", sessionTimeout, DEFAULT_SESSION_TIMEOUT_MS, 1000, 600_000);
        return new ZkLogConfig(connect, path, node, timeout, millis("zk_connect_timeout", connectTimeout,
                DEFAULT_CONNECT_TIMEOUT_MS, 1000, 600_000));
    }

    private static int millis(String key, String value, int dflt, int min, int max) {
        if (value == null) {
            return dflt;
        }
        int v;
        try {
            v = Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            // "10s" is not 10 ms out of range: say what the value must look like
            throw new InvalidArgumentException("mirror: " + key + "=" + value + " is not a whole number of milliseconds; e.g. "
                    + key + "=" + dflt);
        }
        if (v < min || v > max) {
            throw new InvalidArgumentException("mirror: " + key + "=" + value + " is out of range; allowed " + min
                    + " to " + max + " ms");
        }
        return v;
    }

    private static InvalidArgumentException bad(String log, String what) {
        return new InvalidArgumentException("mirror: log=" + log + " " + what
                + "; use log=zookeeper:HOST:PORT[,HOST:PORT…]/PATH, e.g. zookeeper:127.0.0.1:2181/strata/m0");
    }

    public ZkLogConfig withNode(String n) {
        return new ZkLogConfig(connect, path, n, sessionTimeoutMs, connectTimeoutMs);
    }

    /** {@code zookeeper:CONNECT/PATH} as given. */
    public String describe() {
        return PREFIX + connect + path;
    }
}
