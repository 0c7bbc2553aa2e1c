package dev.strata.tools.internal.format;

import java.io.IOException;

/**
 * Reads a cache's superblock through its own decoder, mending it where the format allows
 * ({@link Mend}: magic, zero padding, one damaged byte), else rebuilding it from what the rest of
 * the device and the operator's {@link Hints} say: the same steps for every format, with the
 * format's decoder, magic, CRC range, zero ranges and rebuilder.
 */
public final class Superblocks {
    private Superblocks() {
    }

    /** A format's decoder: returns the superblock or throws its format exception (with the reason). */
    @FunctionalInterface
    public interface Decoder<T> {
        T decode(byte[] block) throws Exception;
    }

    /** What a rebuild found: the new superblock's bytes and how they were derived, or why it cannot be. */
    public record Rebuilt(byte[] bytes, String how, String refusal) {
        public static Rebuilt of(byte[] bytes, String how) {
            return new Rebuilt(bytes, how, null);
        }

        /** Not rebuildable: {@code refusal} says what the operator must pass (one line). */
        public static Rebuilt refused(String refusal) {
            return new Rebuilt(null, null, refusal);
        }
    }

    /** Derives a superblock from the rest of the device; null when nothing on it belongs to this format. */
    @FunctionalInterface
    public interface Rebuilder {
        Rebuilt rebuild(Findings f) throws IOException;
    }

    /**
     * The superblock at offset 0, mended or rebuilt on the overlay if damaged; null if neither
     * (recorded as fatal). A zeroed superblock over a device whose other structures are this
     * format's is damage (rebuilt), not a blank device.
     */
    public static <T> T read(Findings f, int length, byte[] magic, int crcFrom, int[] zeros, Decoder<T> decoder,
            Rebuilder rebuilder) throws IOException {
        byte[] b = f.read(0, length);
        String why;
        try {
            return decoder.decode(b);
        } catch (Exception e) {
            why = e.getMessage();
        }
        boolean blank = Mend.allZero(b);
        if (!blank) {
            String mended = Mend.mend(b, length, magic, zeros, crcFrom, w -> orNull(decoder, w) != null);
            if (mended != null) {
                f.overlay().patch(0, b);
                f.corrected("superblock: " + mended + " is damaged (" + why + ")", "superblock " + mended + " restored");
                return orNull(decoder, b);
            }
        }
        Rebuilt r = rebuilder.rebuild(f);
        if (r == null) {
            f.fatal(blank ? "superblock: the device is blank (never formatted)"
                    : "superblock: " + why + "; nothing else on the device is this format's, so it cannot be rebuilt");
            return null;
        }
        String what = blank ? "superblock: zeroed" : "superblock: " + why + "; damaged beyond what its CRC can mend";
        if (r.refusal() != null) {
            f.needs(what + "; " + r.refusal());
            return null;
        }
        T sb = orNull(decoder, r.bytes());
        if (sb == null) {
            f.fatal(what + "; the rebuilt superblock does not decode (" + r.how() + ")");
            return null;
        }
        f.overlay().patch(0, r.bytes());
        f.corrected(what, "superblock rebuilt: " + r.how());
        return sb;
    }

    static <T> T orNull(Decoder<T> decoder, byte[] b) {
        try {
            return decoder.decode(b);
        } catch (Exception e) {
            return null;
        }
    }

    public static boolean allZero(byte[] b) {
        return Mend.allZero(b);
    }
}
