package dev.strata.nbd.internal.session;

import dev.strata.api.InvalidArgumentException;
import java.util.Locale;

/** An export's TLS setting: no TLS, TLS offered (STARTTLS), or TLS required before anything else. */
public enum TlsMode {
    OFF, ON, REQUIRE;

    public static TlsMode parse(String s) {
        if (s == null || s.isBlank()) {
            return OFF;
        }
        try {
            return valueOf(s.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new InvalidArgumentException("nbd:export: --tls=" + s + " is not known; use off, on or require");
        }
    }

    public String text() {
        return name().toLowerCase(Locale.ROOT);
    }
}
