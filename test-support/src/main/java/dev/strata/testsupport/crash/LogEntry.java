package dev.strata.testsupport.crash;

/**
 * One recorded request of a log-writes recording, in completion order.
 *
 * @param seq     global order: entries of all devices recorded together are numbered in the
 *                order they completed
 * @param device  which device of the recording (0, 1, …)
 * @param kind    what it was
 * @param fua     a write or zeroing that carried FUA
 * @param offset  byte offset (writes, zeroing, discard)
 * @param length  byte length
 * @param covers  for a flush: the {@code seq} at the moment flush was called; it made durable
 *                every write of this device with a smaller {@code seq}
 * @param data    the data of a write ({@code null} otherwise)
 */
public record LogEntry(long seq, int device, Kind kind, boolean fua, long offset, long length, long covers, byte[] data) {

    /** Kinds of recorded requests (the codes are the on-disk values). */
    public enum Kind {
        WRITE(1), ZERO(2), DISCARD(3), FLUSH(4);

        public final int code;

        Kind(int code) {
            this.code = code;
        }

        public static Kind of(int code) {
            for (Kind k : values()) {
                if (k.code == code) {
                    return k;
                }
            }
            return null;
        }
    }

    /** Whether this entry ends with data durable that was not before (a crash point). */
    public boolean durabilityPoint() {
        return kind == Kind.FLUSH || fua;
    }

    @Override
    public String toString() {
        return "#" + seq + " dev" + device + " " + kind.name().toLowerCase(java.util.Locale.ROOT)
                + (kind == Kind.FLUSH ? " covers<" + covers : " " + offset + "+" + length) + (fua ? " fua" : "");
    }
}
