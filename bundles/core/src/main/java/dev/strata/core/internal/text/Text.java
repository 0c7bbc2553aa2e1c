package dev.strata.core.internal.text;

import java.util.Locale;

import dev.strata.api.DeviceState;

/**
 * The spellings that the manager's own messages and the {@code dev:} commands' output share: a
 * size, a count of blocks, a state. A leaf: it uses nothing of core, so both {@code internal}
 * (errors, {@code dev:status}'s state) and {@code command} ({@code Render}) can use it without
 * {@code internal} using {@code command}, which uses {@code internal} (see {@code SourceShapeTest}).
 */
public final class Text {
    private Text() {
    }

    /** {@code 1536} → {@code 1.5 KiB} (one decimal, rounded down); below 1 KiB in bytes. */
    public static String size(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        // one decimal rounded down, as the caches' own messages (cache-support's Iec) print it: a
        // size never reads larger than it is (1 GiB - 8 KiB is 1023.9 MiB, not 1024.0 MiB)
        String[] units = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
        int u = 0;
        while (u < units.length - 1 && bytes >>> (10 * (u + 1)) >= 1024) {
            u++;
        }
        long q = bytes >>> (10 * u); // in 1/1024 of the unit: exact, no overflow
        long tenths = q * 10 / 1024;
        return String.format(Locale.ROOT, "%d.%d %s", tenths / 10, tenths % 10, units[u]);
    }

    /** {@code blocks(1, "dirty")} → {@code 1 dirty block}, {@code 8,192 dirty blocks}: a count for a sentence. */
    public static String blocks(long n, String adjective) {
        return String.format(Locale.ROOT, "%,d", n) + (adjective.isEmpty() ? "" : " " + adjective) + (n == 1 ? " block" : " blocks");
    }

    /** The one spelling of a state, in every command: {@code active}, {@code suspended}, {@code waiting-for-target}. */
    public static String label(DeviceState s) {
        return s.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
}
