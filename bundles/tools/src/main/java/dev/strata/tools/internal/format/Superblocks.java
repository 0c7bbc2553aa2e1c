package dev.strata.tools.internal.format;

import java.io.IOException;

/**
 * Reads a cache's superblock through its own decoder, correcting one damaged byte where that
 * mends it: the same steps for every format, with the format's decoder, magic and CRC range.
 */
public final class Superblocks {
    private Superblocks() {
    }

    /** A format's decoder: returns the superblock or throws its format exception (with the reason). */
    @FunctionalInterface
    public interface Decoder<T> {
        T decode(byte[] block) throws Exception;
    }

    /** The superblock at offset 0, corrected on the overlay if one byte was damaged; null if unreadable (recorded as fatal). */
    public static <T> T read(Findings f, int length, byte[] magic, int crcFrom, Decoder<T> decoder) throws IOException {
        byte[] b = f.read(0, length);
        String why;
        try {
            return decoder.decode(b);
        } catch (Exception e) {
            why = e.getMessage();
        }
        if (allZero(b)) {
            f.fatal("superblock: the device is blank (never formatted)");
            return null;
        }
        Corrector.Fix fix = Corrector.correct(b, 0, length, magic, crcFrom, w -> orNull(decoder, w) != null);
        if (fix == null) {
            f.fatal("superblock: " + why + "; more than one byte is damaged, it cannot be rebuilt");
            return null;
        }
        f.overlay().patch(0, b);
        f.corrected("superblock: byte " + fix.position() + " is damaged (" + why + ")",
                "superblock byte " + fix.position() + " restored");
        return orNull(decoder, b);
    }

    private static <T> T orNull(Decoder<T> decoder, byte[] b) {
        try {
            return decoder.decode(b);
        } catch (Exception e) {
            return null;
        }
    }

    public static boolean allZero(byte[] b) {
        for (byte x : b) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }
}
