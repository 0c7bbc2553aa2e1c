package dev.strata.testsupport.crash;

/**
 * The reference model of a disk's durability, per 512-byte sector. For each sector it tracks
 * the values a read may return now, the values that are durable, and the values acknowledged
 * since they last became durable (pending). Values are {@link SectorPattern} tokens.
 *
 * <ul>
 * <li>write: the sector reads as the new value; the value is pending (durable at once with FUA);
 * <li>zeroing: as a write of zeroes; discard: the sector reads as the old value(s) or zero;
 * <li>flush: what the sector reads as now becomes durable, nothing is pending;
 * <li>crash: afterwards each sector holds a durable or a pending value, and from then on that
 * observed value is the (only) durable one.
 * </ul>
 * A request still in flight when a crash happens (log replay) adds its values as pending only.
 */
public final class ReferenceModel {
    private final long[][] current;
    private final long[][] durable;
    private final long[][] pending;

    /** A model of {@code sectors} sectors, all zero and durable. */
    public ReferenceModel(int sectors) {
        current = new long[sectors][];
        durable = new long[sectors][];
        pending = new long[sectors][];
        for (int s = 0; s < sectors; s++) {
            current[s] = LongSets.of(SectorPattern.ZERO);
            durable[s] = current[s];
            pending[s] = LongSets.EMPTY;
        }
    }

    public int sectors() {
        return current.length;
    }

    /** An acknowledged write of {@code tokens} (one per sector) at {@code first}. */
    public void write(int first, long[] tokens, boolean fua) {
        for (int i = 0; i < tokens.length; i++) {
            int s = first + i;
            long[] v = LongSets.of(tokens[i]);
            current[s] = v;
            if (fua) {
                durable[s] = v;
                pending[s] = LongSets.EMPTY;
            } else {
                pending[s] = LongSets.add(pending[s], tokens[i]);
            }
        }
    }

    /** An acknowledged zeroing of {@code count} sectors at {@code first}. */
    public void zero(int first, int count, boolean fua) {
        long[] tokens = new long[count];
        write(first, tokens, fua);
    }

    /** An acknowledged discard: each sector reads as before or as zeroes, now and after a crash. */
    public void discard(int first, int count) {
        for (int s = first; s < first + count; s++) {
            current[s] = LongSets.add(current[s], SectorPattern.ZERO);
            pending[s] = LongSets.add(pending[s], SectorPattern.ZERO);
        }
    }

    /** A completed flush: everything acknowledged is durable. */
    public void flush() {
        for (int s = 0; s < current.length; s++) {
            durable[s] = current[s];
            pending[s] = LongSets.EMPTY;
        }
    }

    /** A write that was issued but not acknowledged when the crash happened: it may or may not have landed. */
    public void inFlight(int first, long[] tokens) {
        for (int i = 0; i < tokens.length; i++) {
            pending[first + i] = LongSets.add(pending[first + i], tokens[i]);
        }
    }

    /** Whether a read of sector {@code s} may return {@code token} now. */
    public boolean readable(int s, long token) {
        return LongSets.contains(current[s], token);
    }

    /** Whether sector {@code s} may hold {@code token} after a crash. */
    public boolean survivable(int s, long token) {
        return LongSets.contains(durable[s], token) || LongSets.contains(pending[s], token);
    }

    /** After a crash: {@code observed} is what sector {@code s} holds; it is now the durable value. */
    public void settle(int s, long observed) {
        current[s] = LongSets.of(observed);
        durable[s] = current[s];
        pending[s] = LongSets.EMPTY;
    }

    /** After a clean close and reopen: what was readable is durable. */
    public void cleanRestart() {
        flush();
    }

    /** The set of values sector {@code s} reads as now. */
    public long[] currentValues(int s) {
        return current[s].clone();
    }

    public String describeCurrent(int s) {
        return LongSets.describe(current[s]);
    }

    public String describeSurvivable(int s) {
        return "durable " + LongSets.describe(durable[s]) + " or pending " + LongSets.describe(pending[s]);
    }
}
