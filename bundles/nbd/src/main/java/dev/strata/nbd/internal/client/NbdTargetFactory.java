package dev.strata.nbd.internal.client;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;
import dev.strata.api.TargetArguments;
import dev.strata.api.TargetContext;
import dev.strata.api.TargetFactory;
import dev.strata.nbd.internal.session.TlsMode;
import dev.strata.nbd.internal.tls.ClientTls;
import dev.strata.nbd.internal.tls.PskKeys;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.osgi.service.component.annotations.Component;

/**
 * {@code nbd uri=nbd://host:port/export [timeout=30s] [connections=1]}: a remote NBD export as a
 * device; {@code nbds://} or {@code tls=require|on} with {@code tls-creds=DIR} (X.509) or
 * {@code tls-psk=FILE [tls-username=U]} for TLS.
 */
@Component(service = TargetFactory.class, property = TargetFactory.TYPE + "=nbd")
public class NbdTargetFactory implements TargetFactory {
    static final Set<String> KEYS = Set.of("uri", "timeout", "connections", "tls", "tls-creds", "tls-psk",
            "tls-username", "tls-hostname");

    @Override
    public String usage() {
        return "nbd uri=nbd://host[:port]/export|nbds://[user@]host[:port]/export|nbd+unix:///export?socket=PATH"
                + " [timeout=30s] [connections=1] [tls=off|on|require] [tls-creds=DIR] [tls-psk=FILE]"
                + " [tls-username=U] [tls-hostname=H]";
    }

    @Override
    public List<String> lowerDevices(Map<String, String> arguments) {
        parse(arguments);
        return List.of();
    }

    @Override
    public Target create(TargetContext context) throws IOException {
        Parsed p = parse(context.arguments());
        return new NbdTarget(context.deviceName(), p.uri, p.timeoutMillis, p.connections, p.tls);
    }

    record Parsed(NbdUri uri, long timeoutMillis, int connections, ClientTls tls) {
    }

    static Parsed parse(Map<String, String> arguments) {
        TargetArguments a = TargetArguments.of("nbd", arguments, KEYS);
        NbdUri uri = NbdUri.parse(a.string("uri"));
        long timeout = duration(a.string("timeout", "30s"));
        int connections = (int) a.number("connections", 1, 1, 16);
        return new Parsed(uri, timeout, connections, tls(a, uri));
    }

    /**
     * TLS from the arguments, falling back on the URI's (nbds://, user@, libnbd's query
     * parameters). {@code nbds://} means {@code tls=require}; a contradiction is refused.
     */
    static ClientTls tls(TargetArguments a, NbdUri uri) {
        String given = a.string("tls", "");
        TlsMode mode = given.isEmpty() ? (uri.tls() ? TlsMode.REQUIRE : TlsMode.OFF) : clientMode(given);
        if (uri.tls() && mode != TlsMode.REQUIRE) {
            throw new InvalidArgumentException("nbd: uri=" + uri + " asks for TLS (nbds://) but tls=" + given
                    + "; drop tls= or use nbd://");
        }
        String creds = a.string("tls-creds", uri.query().getOrDefault("tls-certificates", ""));
        String psk = a.string("tls-psk", uri.query().getOrDefault("tls-psk-file", ""));
        String user = a.string("tls-username", uri.user() != null ? uri.user()
                : uri.query().getOrDefault("tls-username", System.getProperty("user.name", "")));
        String hostname = a.string("tls-hostname", uri.query().getOrDefault("tls-hostname", uri.host()));
        if (mode == TlsMode.OFF) {
            if (!creds.isEmpty() || !psk.isEmpty()) {
                throw new InvalidArgumentException("nbd: tls-creds/tls-psk are given but TLS is off; use nbds:// or"
                        + " tls=require");
            }
            return ClientTls.OFF;
        }
        if (uri.isUnix()) {
            throw new InvalidArgumentException("nbd: TLS over a Unix socket is not supported; use tls=off there");
        }
        if (!creds.isEmpty() && !psk.isEmpty()) {
            throw new InvalidArgumentException("nbd: give tls-creds (certificates) or tls-psk (pre-shared keys), not both");
        }
        if (!psk.isEmpty()) {
            if (user.isEmpty()) {
                throw new InvalidArgumentException("nbd: tls-psk needs a user name: tls-username=U or nbds://U@host/");
            }
            return ClientTls.psk(mode, PskKeys.load(Path.of(psk)), user);
        }
        return ClientTls.x509(mode, creds.isEmpty() ? null : Path.of(creds), hostname);
    }

    private static TlsMode clientMode(String s) {
        try {
            return TlsMode.parse(s);
        } catch (InvalidArgumentException e) {
            throw new InvalidArgumentException("nbd: tls=" + s + " is not known; use off, on (TLS if the server"
                    + " offers it) or require");
        }
    }

    /** {@code 30s}, {@code 500ms}, {@code 2m}, or plain seconds. */
    static long duration(String v) {
        String s = v.trim().toLowerCase(Locale.ROOT);
        long mult = 1000;
        if (s.endsWith("ms")) {
            mult = 1;
            s = s.substring(0, s.length() - 2);
        } else if (s.endsWith("s")) {
            s = s.substring(0, s.length() - 1);
        } else if (s.endsWith("m")) {
            mult = 60_000;
            s = s.substring(0, s.length() - 1);
        }
        try {
            long n = Long.parseLong(s.trim());
            if (n <= 0 || n > Long.MAX_VALUE / mult / 1_000_000) {
                throw new NumberFormatException();
            }
            return n * mult;
        } catch (NumberFormatException e) {
            throw new InvalidArgumentException("nbd: timeout=" + v + " is not a duration; use e.g. 30s, 500ms or 2m");
        }
    }
}
