package dev.strata.tools.internal.format;

import java.util.Arrays;
import java.util.function.Predicate;

/**
 * Mends a damaged CRC-protected structure from what its format fixes: the constant magic is
 * restored, the ranges the format keeps zero are cleared (compared in bulk against a zero
 * buffer, so any number of damaged padding bytes cost one pass), then one remaining damaged byte
 * is found by its CRC syndrome ({@link Corrector}). The result is used only when the format's own
 * decoder accepts it; otherwise the structure is left as it was and the caller drops or rebuilds it.
 */
public final class Mend {
    private static final byte[] ZERO = new byte[1 << 16];

    private Mend() {
    }

    /** The first index in {@code b[from, to)} that is not zero, or -1. */
    public static int firstNonZero(byte[] b, int from, int to) {
        for (int at = from; at < to; at += ZERO.length) {
            int n = Math.min(ZERO.length, to - at);
            int m = Arrays.mismatch(b, at, at + n, ZERO, 0, n);
            if (m >= 0) {
                return at + m;
            }
        }
        return -1;
    }

    /** The last index in {@code b[from, to)} that is not zero, or -1. */
    static int lastNonZero(byte[] b, int from, int to) {
        for (int i = to - 1; i >= from; i--) {
            if (b[i] != 0) {
                return i;
            }
        }
        return -1;
    }

    public static boolean allZero(byte[] b) {
        return firstNonZero(b, 0, b.length) < 0;
    }

    /**
     * Mends {@code b[0, length)} in place; returns what was restored, in words ("magic", "zero
     * bytes 200..3071", "byte 17"), or null (and {@code b} unchanged) when that does not
     * make {@code accept} true.
     *
     * @param zeros pairs {@code from, to} of ranges the format keeps zero
     */
    public static String mend(byte[] b, int length, byte[] magic, int[] zeros, int crcFrom, int crcTo, int crcAt,
            Predicate<byte[]> accept) {
        byte[] w = Arrays.copyOf(b, length);
        StringBuilder what = new StringBuilder();
        if (Arrays.mismatch(w, 0, magic.length, magic, 0, magic.length) >= 0) {
            System.arraycopy(magic, 0, w, 0, magic.length);
            what.append("magic");
        }
        for (int i = 0; i < zeros.length; i += 2) {
            int from = Math.min(zeros[i], length);
            int to = Math.min(zeros[i + 1], length);
            int first = firstNonZero(w, from, to);
            if (first >= 0) {
                int last = lastNonZero(w, first, to);
                Arrays.fill(w, first, last + 1, (byte) 0);
                what.append(what.length() == 0 ? "" : ", ").append(first == last ? "zero byte " + first
                        : "zero bytes " + first + ".." + last);
            }
        }
        if (!accept.test(w)) {
            Corrector.Fix fix = Corrector.correct(w, 0, length, magic, crcFrom, crcTo, crcAt, accept);
            if (fix == null) {
                return null;
            }
            what.append(what.length() == 0 ? "" : ", ").append("byte ").append(fix.position());
        }
        if (what.length() == 0) {
            return null;
        }
        System.arraycopy(w, 0, b, 0, length);
        return what.toString();
    }

    /** As above, for a structure whose CRC covers {@code [crcFrom, length)} and sits just before it. */
    public static String mend(byte[] b, int length, byte[] magic, int[] zeros, int crcFrom, Predicate<byte[]> accept) {
        return mend(b, length, magic, zeros, crcFrom, length, crcFrom - 4, accept);
    }
}
