package dev.strata.nbd.internal.session;

import dev.strata.nbd.internal.protocol.Nbd;

/** The transmission flags an export advertises. */
public final class TransmissionFlags {
    private TransmissionFlags() {
    }

    /**
     * FLUSH, FUA, CACHE and CAN_MULTI_CONN always (every connection shares the one device, so a
     * flush on any connection covers writes acknowledged on all); TRIM and WRITE_ZEROES unless
     * read-only, FAST_ZERO too if the device zeroes faster than it writes; DF once structured
     * replies are on (reads are always one chunk).
     */
    public static int of(boolean readOnly, boolean structured, boolean fastZero) {
        int f = Nbd.FLAG_HAS_FLAGS | Nbd.FLAG_SEND_FLUSH | Nbd.FLAG_SEND_FUA | Nbd.FLAG_SEND_CACHE
                | Nbd.FLAG_CAN_MULTI_CONN;
        if (readOnly) {
            f |= Nbd.FLAG_READ_ONLY;
        } else {
            f |= Nbd.FLAG_SEND_TRIM | Nbd.FLAG_SEND_WRITE_ZEROES | (fastZero ? Nbd.FLAG_SEND_FAST_ZERO : 0);
        }
        if (structured) {
            f |= Nbd.FLAG_SEND_DF;
        }
        return f;
    }
}
