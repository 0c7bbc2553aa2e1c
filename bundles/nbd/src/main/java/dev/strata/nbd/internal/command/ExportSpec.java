package dev.strata.nbd.internal.command;

import dev.strata.api.InvalidArgumentException;
import dev.strata.nbd.internal.session.TlsMode;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One export's settings, as given to {@code nbd:export} or stored in a configuration with
 * factory PID {@value #FACTORY_PID} (properties {@code device}, {@code name}, {@code bind},
 * {@code port}, {@code readonly}, {@code tls} = off|on|require, {@code tls-creds} = a directory,
 * {@code tls-verify-peer}, {@code tls-allow} = client subjects separated by {@code ;},
 * {@code tls-psk} = a psktool key file (or a directory holding {@code keys.psk}) instead of {@code tls-creds},
 * {@code unix} = a socket file path instead of TCP, {@code unix-mode} = its octal file mode,
 * {@code max-connections} = clients served at once (0: no limit), {@code idle-timeout} = a
 * connection with no request for that long is dropped (milliseconds, or text such as
 * {@code 5m}; 0: never), {@code inherited} = listen on the socket inherited by socket activation
 * when Strata was started so, else on the address the other keys give).
 */
public record ExportSpec(String device, String name, String bind, int port, boolean readOnly, TlsMode tls,
        String tlsCreds, boolean tlsVerifyPeer, String tlsAllow, String unix, String unixMode, int maxConnections,
        long idleTimeoutMillis, String tlsPsk, boolean inherited) {
    public static final String FACTORY_PID = "dev.strata.nbd.export";
    public static final String DEFAULT_BIND = "127.0.0.1";
    public static final int DEFAULT_PORT = 10809;

    /** A plaintext export. */
    public ExportSpec(String device, String name, String bind, int port, boolean readOnly) {
        this(device, name, bind, port, readOnly, TlsMode.OFF, "", false, "");
    }

    /** A TCP export. */
    public ExportSpec(String device, String name, String bind, int port, boolean readOnly, TlsMode tls,
            String tlsCreds, boolean tlsVerifyPeer, String tlsAllow) {
        this(device, name, bind, port, readOnly, tls, tlsCreds, tlsVerifyPeer, tlsAllow, "", "", 0, 0);
    }

    /** Without TLS-PSK, not on the inherited socket. */
    public ExportSpec(String device, String name, String bind, int port, boolean readOnly, TlsMode tls,
            String tlsCreds, boolean tlsVerifyPeer, String tlsAllow, String unix, String unixMode, int maxConnections,
            long idleTimeoutMillis) {
        this(device, name, bind, port, readOnly, tls, tlsCreds, tlsVerifyPeer, tlsAllow, unix, unixMode, maxConnections,
                idleTimeoutMillis, "", false);
    }

    /** True when the export's TLS uses pre-shared keys rather than certificates. */
    public boolean isPsk() {
        return !tlsPsk.isEmpty();
    }

    /** True for an export on a Unix-domain socket ({@link #unix} is its path). */
    public boolean isUnix() {
        return !unix.isEmpty();
    }

    /** The client subjects in {@link #tlsAllow}. */
    public java.util.List<String> allowList() {
        return java.util.Arrays.stream(tlsAllow.split(";")).map(String::trim).filter(x -> !x.isEmpty()).toList();
    }

    public ExportSpec {
        if (device == null || device.isBlank()) {
            throw new InvalidArgumentException("nbd:export: no device given; usage: nbd:export DEVICE [--name N] [--bind A] [--port P] [--readonly]");
        }
        if (name == null || name.isEmpty()) {
            name = device;
        }
        if (name.length() > 256 || name.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
            throw new InvalidArgumentException("nbd:export: name '" + name + "' is not usable; use at most 256 printable characters");
        }
        if (bind == null || bind.isEmpty()) {
            bind = DEFAULT_BIND;
        }
        if (port < 1 || port > 65535) {
            throw new InvalidArgumentException("nbd:export: port " + port + " is out of range; use 1 to 65535");
        }
        if (tls == null) {
            tls = TlsMode.OFF;
        }
        tlsCreds = tlsCreds == null ? "" : tlsCreds.trim();
        tlsPsk = tlsPsk == null ? "" : tlsPsk.trim();
        if (tls != TlsMode.OFF && tlsCreds.isEmpty() && tlsPsk.isEmpty()) {
            throw new InvalidArgumentException("nbd:export: --tls=" + tls.text() + " needs --tls-creds DIR, a directory"
                    + " with server-cert.pem and server-key.pem, or --tls-psk FILE, a psktool key file"
                    + " (docs/nbd.md, TLS, shows how to make them)");
        }
        if (!tlsCreds.isEmpty() && !tlsPsk.isEmpty()) {
            throw new InvalidArgumentException("nbd:export: give --tls-creds (certificates) or --tls-psk (pre-shared"
                    + " keys), not both: a port does one kind of TLS");
        }
        if (tls == TlsMode.OFF && !tlsPsk.isEmpty()) {
            throw new InvalidArgumentException("nbd:export: --tls-psk is given but TLS is off; add --tls=require"
                    + " (or --tls=on to allow plaintext clients too)");
        }
        tlsAllow = tlsAllow == null ? "" : tlsAllow.trim();
        if (!tlsPsk.isEmpty() && (tlsVerifyPeer || !tlsAllow.isEmpty())) {
            throw new InvalidArgumentException("nbd:export: --tls-verify-peer and --allow are for client certificates;"
                    + " with --tls-psk the users in the key file are the ones let in");
        }
        if (tls != TlsMode.REQUIRE && (tlsVerifyPeer || !tlsAllow.isEmpty())) {
            // with --tls=on a plaintext client would walk around the client check
            throw new InvalidArgumentException("nbd:export: --tls-verify-peer and --allow need --tls=require");
        }
        if (tls == TlsMode.OFF && !tlsCreds.isEmpty()) {
            throw new InvalidArgumentException("nbd:export: --tls-creds is given but TLS is off; add --tls=require"
                    + " (or --tls=on to allow plaintext clients too)");
        }
        unix = unix == null ? "" : unix.trim();
        unixMode = unixMode == null ? "" : unixMode.trim();
        if (!unix.isEmpty() && tls != TlsMode.OFF) {
            // the socket file's mode says who may connect; JSSE needs a TCP socket to layer on
            throw new InvalidArgumentException("nbd:export: --tls is not supported on a --unix socket; use the socket's"
                    + " --unix-mode to say who may connect, or export over TCP for TLS");
        }
        if (unix.isEmpty() && !unixMode.isEmpty()) {
            throw new InvalidArgumentException("nbd:export: --unix-mode needs --unix PATH");
        }
        if (!unixMode.isEmpty() && !unixMode.matches("0?[0-7]{3}")) {
            throw new InvalidArgumentException("nbd:export: --unix-mode " + unixMode
                    + " is not a file mode; use octal digits such as 0660");
        }
        if (maxConnections < 0 || maxConnections > 100_000) {
            throw new InvalidArgumentException("nbd:export: --max-connections " + maxConnections
                    + " is out of range; use 1 to 100000, or 0 for no limit");
        }
        if (idleTimeoutMillis < 0) {
            throw new InvalidArgumentException("nbd:export: --idle-timeout must not be negative; use e.g. 5m, or 0 for none");
        }
    }

    /**
     * Parses a duration: a number with {@code ms}, {@code s}, {@code m} or {@code h}, or plain
     * milliseconds; {@code 0} (or empty) means none.
     */
    public static long duration(String option, String v) {
        if (v == null || v.isBlank()) {
            return 0;
        }
        String t = v.trim().toLowerCase(java.util.Locale.ROOT);
        long mult = 1;
        String n = t;
        if (t.endsWith("ms")) {
            n = t.substring(0, t.length() - 2);
        } else if (t.endsWith("s")) {
            mult = 1000;
            n = t.substring(0, t.length() - 1);
        } else if (t.endsWith("m")) {
            mult = 60_000;
            n = t.substring(0, t.length() - 1);
        } else if (t.endsWith("h")) {
            mult = 3_600_000;
            n = t.substring(0, t.length() - 1);
        }
        try {
            long x = Long.parseLong(n.trim());
            if (x < 0 || x > Long.MAX_VALUE / mult / 1_000_000) {
                throw new NumberFormatException();
            }
            return x * mult;
        } catch (NumberFormatException e) {
            throw new InvalidArgumentException("nbd:export: " + option + " " + v
                    + " is not a duration; use e.g. 30s, 5m or 1h (0 for none)");
        }
    }

    /** Reads a stored configuration (values may be strings, as FileInstall writes them). */
    public static ExportSpec fromProperties(Dictionary<String, ?> props) {
        Object device = props.get("device");
        Object name = props.get("name");
        Object bind = props.get("bind");
        Object port = props.get("port");
        Object ro = props.get("readonly");
        int p;
        try {
            p = port == null ? DEFAULT_PORT : port instanceof Number n ? n.intValue() : Integer.parseInt(port.toString().trim());
        } catch (NumberFormatException e) {
            throw new InvalidArgumentException("nbd:export: port=" + port + " is not a number");
        }
        boolean readOnly = ro != null && (ro instanceof Boolean b ? b : Boolean.parseBoolean(ro.toString().trim()));
        Object tls = props.get("tls");
        Object creds = props.get("tls-creds");
        Object verify = props.get("tls-verify-peer");
        Object allow = props.get("tls-allow");
        return new ExportSpec(device == null ? null : device.toString(), name == null ? null : name.toString(),
                bind == null ? null : bind.toString(), p, readOnly, TlsMode.parse(tls == null ? null : tls.toString()),
                creds == null ? null : creds.toString(),
                verify != null && (verify instanceof Boolean b ? b : Boolean.parseBoolean(verify.toString().trim())),
                allow == null ? null : allow.toString(), str(props.get("unix")), str(props.get("unix-mode")),
                integer(props.get("max-connections")), duration("idle-timeout=", str(props.get("idle-timeout"))),
                str(props.get("tls-psk")), bool(props.get("inherited")));
    }

    private static boolean bool(Object o) {
        return o != null && (o instanceof Boolean b ? b : Boolean.parseBoolean(o.toString().trim()));
    }

    private static int integer(Object o) {
        if (o == null) {
            return 0;
        }
        if (o instanceof Number n) {
            return n.intValue();
        }
        try {
            return o.toString().isBlank() ? 0 : Integer.parseInt(o.toString().trim());
        } catch (NumberFormatException e) {
            throw new InvalidArgumentException("nbd:export: max-connections=" + o + " is not a number");
        }
    }

    private static String str(Object o) {
        return o == null ? null : o.toString();
    }

    public Dictionary<String, Object> toProperties() {
        Hashtable<String, Object> t = new Hashtable<>();
        t.put("device", device);
        t.put("name", name);
        t.put("bind", bind);
        t.put("port", port);
        t.put("readonly", readOnly);
        t.put("tls", tls.text());
        t.put("tls-creds", tlsCreds);
        t.put("tls-verify-peer", tlsVerifyPeer);
        t.put("tls-allow", tlsAllow);
        t.put("tls-psk", tlsPsk);
        t.put("unix", unix);
        t.put("unix-mode", unixMode);
        t.put("max-connections", maxConnections);
        t.put("idle-timeout", Long.toString(idleTimeoutMillis));
        t.put("inherited", inherited);
        return t;
    }

    public Map<String, String> asMap() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("device", device);
        m.put("name", name);
        m.put("bind", bind);
        m.put("port", Integer.toString(port));
        m.put("readonly", Boolean.toString(readOnly));
        m.put("tls", tls.text());
        m.put("tls-creds", tlsCreds);
        m.put("tls-verify-peer", Boolean.toString(tlsVerifyPeer));
        m.put("tls-allow", tlsAllow);
        m.put("tls-psk", tlsPsk);
        m.put("unix", unix);
        m.put("unix-mode", unixMode);
        m.put("max-connections", Integer.toString(maxConnections));
        m.put("idle-timeout", Long.toString(idleTimeoutMillis));
        m.put("inherited", Boolean.toString(inherited));
        return m;
    }
}
