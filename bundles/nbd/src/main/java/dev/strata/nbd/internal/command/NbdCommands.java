package dev.strata.nbd.internal.command;

import dev.strata.nbd.internal.server.Export;
import dev.strata.nbd.internal.session.TlsMode;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** Gogo commands {@code nbd:export}, {@code nbd:exports}, {@code nbd:unexport}: parse, delegate, render. */
@Component(service = NbdCommands.class, property = {"osgi.command.scope=nbd", "osgi.command.function=export",
        "osgi.command.function=exports", "osgi.command.function=unexport"})
public class NbdCommands {

    @Reference
    NbdComponent nbd;

    @Descriptor("export a device over NBD (the export persists until nbd:unexport)")
    public String export(
            @Descriptor("export name (default: the device name)") @Parameter(names = "--name", absentValue = "") String name,
            @Descriptor("address to listen on (default 127.0.0.1; a non-loopback address must be given explicitly)")
            @Parameter(names = "--bind", absentValue = "") String bind,
            @Descriptor("TCP port (1 to 65535, default 10809; exports may share a port)")
            @Parameter(names = "--port", absentValue = "10809") int port,
            @Descriptor("refuse writes") @Parameter(names = "--readonly", presentValue = "true", absentValue = "false")
            boolean readOnly,
            @Descriptor("TLS: off (default), on (STARTTLS offered) or require (no option answered before TLS)")
            @Parameter(names = "--tls", absentValue = "off") String tls,
            @Descriptor("directory with server-cert.pem and server-key.pem (and ca-cert.pem), as qemu-nbd uses")
            @Parameter(names = "--tls-creds", absentValue = "") String tlsCreds,
            @Descriptor("TLS with pre-shared keys: a psktool key file (username:hexkey lines) or a directory with keys.psk")
            @Parameter(names = "--tls-psk", absentValue = "") String tlsPsk,
            @Descriptor("clients must present a certificate signed by ca-cert.pem")
            @Parameter(names = "--tls-verify-peer", presentValue = "true", absentValue = "false") boolean verifyPeer,
            @Descriptor("client certificate subjects let in, separated by ';' (e.g. CN=host1;CN=host2); implies --tls-verify-peer")
            @Parameter(names = "--allow", absentValue = "") String allow,
            @Descriptor("listen on this Unix socket path instead of TCP (clients: nbd+unix:///NAME?socket=PATH)")
            @Parameter(names = "--unix", absentValue = "") String unix,
            @Descriptor("the Unix socket file's mode, octal (e.g. 0660); default: as the umask says")
            @Parameter(names = "--unix-mode", absentValue = "") String unixMode,
            @Descriptor("number of clients served at once; the next one is refused (default 0: no limit)")
            @Parameter(names = "--max-connections", absentValue = "0") int maxConnections,
            @Descriptor("drop a connection that sends no request for this long, e.g. 10m (default 0: never)")
            @Parameter(names = "--idle-timeout", absentValue = "0") String idleTimeout,
            @Descriptor("listen on the socket inherited by socket activation (systemd, nbdinfo -- [ bin/strata ... ]) when"
                    + " Strata was started so; otherwise on --bind/--port or --unix")
            @Parameter(names = "--inherited", presentValue = "true", absentValue = "false") boolean inherited,
            @Descriptor("the device to export") String device) throws IOException {
        TlsMode mode = TlsMode.parse(tls);
        Export e = nbd.exports().export(device, name, bind, port, readOnly, mode, tlsCreds, verifyPeer, allow, unix,
                unixMode, maxConnections, ExportSpec.duration("--idle-timeout", idleTimeout), tlsPsk, inherited);
        String kept = nbd.exports().stored(e.name()) ? "" : " (transient, as device '" + device + "' is: gone after a restart)";
        return exportedLine(device, e, mode, bind, readOnly) + kept;
    }

    private static String exportedLine(String device, Export e, TlsMode mode, String bind, boolean readOnly) {
        if (e.inherited()) {
            return "exported " + device + " as '" + e.name() + "' on the socket inherited by socket activation ("
                    + (e.unixPath() != null ? "unix:" + e.unixPath() : hostForUri(e.bindAddress()) + ":" + e.port()) + ")"
                    + (readOnly ? " (read-only)" : "");
        }
        if (e.unixPath() != null) {
            return "exported " + device + " as nbd+unix:///" + e.name() + "?socket=" + e.unixPath()
                    + (readOnly ? " (read-only)" : "");
        }
        return "exported " + device + " as " + (mode == TlsMode.REQUIRE ? "nbds://" : "nbd://")
                + uriHost(e.bindAddress(), bind) + ":" + e.port() + "/" + e.name()
                + (readOnly ? " (read-only)" : "") + (mode == TlsMode.ON ? " (TLS offered: nbds:// works too)" : "");
    }

    @Descriptor("list NBD exports with their connections and bytes served")
    public String exports() {
        return Render.table(nbd.exports().status(),
                List.of("name", "device", "address", "readonly", "tls", "state", "connections", "bytes_read",
                        "bytes_written"));
    }

    @Descriptor("stop exporting and forget an export")
    public String unexport(@Descriptor("the export's name") String name) throws IOException {
        nbd.exports().unexport(name);
        return "unexported " + name;
    }

    /**
     * The host of the URI the command prints: the address asked for, as {@code nbd:exports} shows
     * it; the bound one only when none was given (the default, 127.0.0.1). A wildcard bind
     * ({@code --bind 0.0.0.0}) is bound as the dual-stack {@code ::}, which printed as
     * {@code nbd://[0:0:0:0:0:0:0:0]:PORT/…}: neither what was typed nor what nbd:exports says.
     */
    static String uriHost(String bound, String asked) {
        return hostForUri(asked == null || asked.isBlank() ? bound : asked.trim());
    }

    private static String hostForUri(String address) {
        return address.contains(":") ? "[" + address + "]" : address;
    }

    /** Plain-text tables for the shell. */
    static final class Render {
        static String table(List<Map<String, String>> rows, List<String> columns) {
            if (rows.isEmpty()) {
                return "no exports";
            }
            int[] w = new int[columns.size()];
            for (int i = 0; i < w.length; i++) {
                w[i] = columns.get(i).length();
                for (Map<String, String> r : rows) {
                    w[i] = Math.max(w[i], r.getOrDefault(columns.get(i), "").length());
                }
            }
            StringBuilder s = new StringBuilder();
            line(s, w, columns);
            for (Map<String, String> r : rows) {
                s.append('\n');
                line(s, w, columns.stream().map(c -> r.getOrDefault(c, "")).toList());
            }
            return s.toString();
        }

        private static void line(StringBuilder s, int[] w, List<String> cells) {
            for (int i = 0; i < cells.size(); i++) {
                String c = cells.get(i);
                s.append(c);
                if (i < cells.size() - 1) {
                    s.append(" ".repeat(w[i] - c.length() + 2));
                }
            }
        }
    }
}
