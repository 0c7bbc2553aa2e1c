package dev.strata.tools.internal.format;

import java.util.function.Predicate;
import java.util.zip.CRC32C;

/**
 * Finds the one damaged byte of a CRC32C-protected structure, if one byte explains the mismatch.
 *
 * <p>Every Strata metadata structure ends with a CRC32C range that runs to its end
 * ({@code [crcFrom, length)}), with the CRC in the 4 bytes before it and a constant magic in
 * front. CRC32C is linear: flipping byte {@code p} by {@code v} changes the CRC by a value that
 * depends only on {@code v} and the distance from {@code p} to the end of the range. So the
 * <em>syndrome</em> (computed CRC xor stored CRC) names the damage: one nonzero byte in the
 * syndrome is a damaged CRC field; otherwise the (position, value) pairs whose change equals the
 * syndrome are the candidates. A correction is used only when exactly one candidate exists and
 * the caller's own decoder accepts the corrected bytes: a block damaged in more than one byte (a
 * torn write, stale data) is never "corrected" into something it was not.
 */
public final class Corrector {
    private static final int POLY = 0x82F63B78; // CRC32C, reflected

    private Corrector() {
    }

    /** A one-byte correction: byte {@code position} of the structure becomes {@code value}. */
    public record Fix(int position, byte value, byte was) {
    }

    /**
     * Corrects {@code b[0, length)} in place and returns the fix, or returns null (and leaves
     * {@code b} as it was) when no unique one-byte fix makes {@code accept} true.
     *
     * @param magic    the structure's constant first bytes (restored first when damaged; that alone may be the fix)
     * @param crcFrom  first byte the CRC covers; the CRC is the little-endian int at {@code crcFrom - 4}
     */
    public static Fix correct(byte[] b, int offset, int length, byte[] magic, int crcFrom, Predicate<byte[]> accept) {
        return correct(b, offset, length, magic, crcFrom, length, crcFrom - 4, accept);
    }

    /**
     * As above, for a structure whose CRC covers {@code [crcFrom, crcTo)} and sits at {@code crcAt}
     * (the mirror log's header keeps it after the range, at its end).
     */
    public static Fix correct(byte[] b, int offset, int length, byte[] magic, int crcFrom, int crcTo, int crcAt,
            Predicate<byte[]> accept) {
        byte[] w = java.util.Arrays.copyOfRange(b, offset, offset + length);
        for (int i = 0; i < magic.length; i++) {
            if (w[i] != magic[i]) {
                byte[] m = w.clone();
                byte was = m[i];
                m[i] = magic[i];
                if (accept.test(m)) {
                    b[offset + i] = magic[i];
                    return new Fix(i, magic[i], was);
                }
                return null; // a damaged magic and more: not one byte
            }
        }
        int stored = (w[crcAt] & 0xFF) | (w[crcAt + 1] & 0xFF) << 8 | (w[crcAt + 2] & 0xFF) << 16 | (w[crcAt + 3] & 0xFF) << 24;
        CRC32C c = new CRC32C();
        c.update(w, crcFrom, crcTo - crcFrom);
        int syndrome = (int) c.getValue() ^ stored;
        if (syndrome == 0) {
            return null; // the CRC matches: whatever is wrong is not a flipped byte
        }
        Fix found = null;
        int candidates = 0;
        // damage in the CRC field: one nonzero syndrome byte
        for (int k = 0; k < 4; k++) {
            if ((syndrome & ~(0xFF << (8 * k))) == 0) {
                int p = crcAt + k;
                found = new Fix(p, (byte) (w[p] ^ (syndrome >>> (8 * k))), w[p]);
                candidates++;
            }
        }
        // damage in the covered range: changing the range's last byte by v changes the CRC by
        // step(v); a byte d places earlier, by step^(d+1)(v). So walk the syndrome back one byte
        // per position (unstep) and look it up among the 255 values of step(v): O(length), not
        // O(255 length)
        int s = syndrome;
        for (int p = crcTo - 1; p >= crcFrom; p--) {
            int v = LAST_BYTE.getOrDefault(s, 0);
            if (v != 0) {
                candidates++;
                found = new Fix(p, (byte) (w[p] ^ v), w[p]);
            }
            s = unstep(s);
        }
        if (candidates != 1) {
            return null;
        }
        w[found.position()] = found.value();
        if (!accept.test(w)) {
            return null;
        }
        b[offset + found.position()] = found.value();
        return found;
    }

    /** step(v) -> v for the 255 nonzero byte values. */
    private static final java.util.Map<Integer, Integer> LAST_BYTE = new java.util.HashMap<>();

    static {
        for (int v = 1; v < 256; v++) {
            LAST_BYTE.put(step(v), v);
        }
    }

    /** The inverse of {@link #step}: POLY's top bit is set, so a shifted-out 1 shows as bit 31. */
    private static int unstep(int r) {
        for (int i = 0; i < 8; i++) {
            int b = r >>> 31;
            r = ((r ^ (POLY & -b)) << 1) | b;
        }
        return r;
    }

    /** One byte of CRC register arithmetic (the linear part: no initial value, no final inversion). */
    private static int step(int r) {
        for (int i = 0; i < 8; i++) {
            r = (r >>> 1) ^ (POLY & -(r & 1));
        }
        return r;
    }
}
