package dev.strata.nbd.internal.client;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;
import dev.strata.api.TargetArguments;
import dev.strata.api.TargetContext;
import dev.strata.api.TargetFactory;
import java.io.IOException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.osgi.service.component.annotations.Component;

/** {@code nbd uri=nbd://host:port/export [timeout=30s] [connections=1]}: a remote NBD export as a device. */
@Component(service = TargetFactory.class, property = TargetFactory.TYPE + "=nbd")
public class NbdTargetFactory implements TargetFactory {
    static final Set<String> KEYS = Set.of("uri", "timeout", "connections");

    @Override
    public String usage() {
        return "nbd uri=nbd://host[:port]/export|nbd+unix:///export?socket=PATH [timeout=30s] [connections=1]";
    }

    @Override
    public List<String> lowerDevices(Map<String, String> arguments) {
        parse(arguments);
        return List.of();
    }

    @Override
    public Target create(TargetContext context) throws IOException {
        Parsed p = parse(context.arguments());
        return new NbdTarget(context.deviceName(), p.uri, p.timeoutMillis, p.connections);
    }

    record Parsed(NbdUri uri, long timeoutMillis, int connections) {
    }

    static Parsed parse(Map<String, String> arguments) {
        TargetArguments a = TargetArguments.of("nbd", arguments, KEYS);
        NbdUri uri = NbdUri.parse(a.string("uri"));
        long timeout = duration(a.string("timeout", "30s"));
        int connections = (int) a.number("connections", 1, 1, 16);
        return new Parsed(uri, timeout, connections);
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
