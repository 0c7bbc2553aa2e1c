package dev.strata.cache.support.units;

import java.util.Locale;

/**
 * Sizes in bad-input messages in IEC units, as the shell shows them ({@code 8.0 MiB}), so that a
 * user compares like with like: "the cache device has 8.0 MiB; at least 17 MiB are needed".
 * A size a device <em>has</em> is rounded down and a size that is <em>needed</em> up, so that
 * rounding never makes a device that is too small look big enough.
 */
public final class Iec {
    private static final String[] UNITS = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};

    private Iec() {
    }

    /** What a device has: one decimal, rounded down ({@code 8388608} → {@code 8.0 MiB}); below 1 KiB in bytes. */
    public static String size(long bytes) {
        if (bytes < 1024) {
            return bytes + (bytes == 1 ? " byte" : " bytes");
        }
        int u = unit(bytes);
        long scale = 1L << (10 * (u + 1));
        long q = bytes / (scale >> 10); // in 1/1024 of the unit: no overflow, no double rounding
        long tenths = q * 10 / 1024;
        return String.format(Locale.ROOT, "%d.%d %s", tenths / 10, tenths % 10, UNITS[u]);
    }

    /**
     * What is needed: a whole number when exact ({@code 17825792} → {@code 17 MiB}), else one
     * decimal rounded up; below 1 KiB in bytes.
     */
    public static String atLeast(long bytes) {
        if (bytes < 1024) {
            return bytes + (bytes == 1 ? " byte" : " bytes");
        }
        int u = unit(bytes);
        long scale = 1L << (10 * (u + 1));
        if (bytes % scale == 0) {
            return (bytes / scale) + " " + UNITS[u];
        }
        long fine = scale >> 10;
        long q = bytes / fine + (bytes % fine == 0 ? 0 : 1);
        long tenths = (q * 10 + 1023) / 1024;
        return String.format(Locale.ROOT, "%d.%d %s", tenths / 10, tenths % 10, UNITS[u]);
    }

    /**
     * Where the exact number matters (a multiple of a block, two sizes that must match): the IEC
     * size and the bytes ({@code 9.7 KiB (10,000 bytes)}); below 1 KiB in bytes.
     */
    public static String exact(long bytes) {
        if (bytes < 1024) {
            return size(bytes);
        }
        return size(bytes) + String.format(Locale.ROOT, " (%,d bytes)", bytes);
    }

    /** The largest unit the size has at least one of (0: KiB). */
    private static int unit(long bytes) {
        int u = 0;
        while (u < UNITS.length - 1 && bytes >= 1L << (10 * (u + 2))) {
            u++;
        }
        return u;
    }
}
