package dev.strata.testsupport.crash;

import java.util.ArrayList;
import java.util.List;

/**
 * The stronger "log property" of a log-structured cache: after a crash the device equals the
 * state after some <em>prefix</em> of the acknowledged writes (in acknowledgement order), and
 * the prefix includes every write acknowledged before the last completed flush and every FUA
 * write. A cache that may lose writes from the middle of its log, or reorder them, fails it even
 * when each sector on its own holds a legal value.
 *
 * <p>Feed it the same acknowledged requests as the {@link ReferenceModel}; call {@link #check}
 * with what the device holds after a crash, then {@link #rebase} with it.
 */
public final class LogModel {
    private long[][] base;
    private final List<Event> events = new ArrayList<>();
    private int minPrefix;

    /** A model of {@code sectors} zero sectors. */
    public LogModel(int sectors) {
        base = new long[sectors][];
        for (int s = 0; s < sectors; s++) {
            base[s] = LongSets.of(SectorPattern.ZERO);
        }
    }

    /** An acknowledged write. */
    public void write(int first, long[] tokens, boolean fua) {
        events.add(new Event(first, tokens.clone(), false));
        if (fua) {
            minPrefix = events.size();
        }
    }

    public void zero(int first, int count, boolean fua) {
        write(first, new long[count], fua);
    }

    /** An acknowledged discard (the sectors may read as zero or as before). */
    public void discard(int first, int count) {
        events.add(new Event(first, new long[count], true));
    }

    /** A completed flush: every acknowledged write must survive. */
    public void flush() {
        minPrefix = events.size();
    }

    /** After a crash: the observed contents are the new starting state. */
    public void rebase(long[] observed) {
        for (int s = 0; s < base.length; s++) {
            base[s] = LongSets.of(observed[s]);
        }
        events.clear();
        minPrefix = 0;
    }

    /** After a clean restart: every acknowledged write is in. */
    public void cleanRestart() {
        long[][] state = stateAfter(events.size());
        base = state;
        events.clear();
        minPrefix = 0;
    }

    /** Number of acknowledged writes since the last rebase. */
    public int acknowledged() {
        return events.size();
    }

    /**
     * Checks that {@code observed} (one token per sector) is the state after some prefix of at
     * least {@code minPrefix} acknowledged writes, optionally followed by part of the write
     * {@code inFlight} (issued, not acknowledged; may be null). Returns null if so, else a
     * description of the closest prefix and where it differs.
     */
    public String check(long[] observed, int inFlightFirst, long[] inFlight) {
        long[][] state = stateAfter(minPrefix);
        int mismatches = 0;
        for (int s = 0; s < state.length; s++) {
            if (!LongSets.contains(state[s], observed[s])) {
                mismatches++;
            }
        }
        int bestPrefix = minPrefix;
        int bestMismatches = mismatches;
        for (int p = minPrefix; ; p++) {
            if (mismatches == 0) {
                return null;
            }
            if (inFlight != null && p == events.size()) {
                int left = mismatches;
                for (int i = 0; i < inFlight.length; i++) {
                    int s = inFlightFirst + i;
                    if (!LongSets.contains(state[s], observed[s]) && observed[s] == inFlight[i]) {
                        left--;
                    }
                }
                if (left == 0) {
                    return null;
                }
            }
            if (p == events.size()) {
                break;
            }
            Event e = events.get(p);
            for (int i = 0; i < e.tokens.length; i++) {
                int s = e.first + i;
                boolean before = LongSets.contains(state[s], observed[s]);
                state[s] = e.discard ? LongSets.add(state[s], SectorPattern.ZERO) : LongSets.of(e.tokens[i]);
                boolean after = LongSets.contains(state[s], observed[s]);
                mismatches += (before ? 0 : -1) + (after ? 0 : 1);
            }
            if (mismatches < bestMismatches) {
                bestMismatches = mismatches;
                bestPrefix = p + 1;
            }
        }
        long[][] best = stateAfter(bestPrefix);
        StringBuilder sb = new StringBuilder("log property violated: no prefix of the ")
                .append(events.size()).append(" acknowledged writes (at least ").append(minPrefix)
                .append(" must survive) matches; closest prefix ").append(bestPrefix).append(" differs in ")
                .append(bestMismatches).append(" sector(s):");
        int shown = 0;
        for (int s = 0; s < best.length && shown < 5; s++) {
            if (!LongSets.contains(best[s], observed[s])) {
                sb.append(" s").append(s).append("=").append(SectorPattern.describe(observed[s]))
                        .append(" expected ").append(LongSets.describe(best[s])).append(';');
                shown++;
            }
        }
        return sb.toString();
    }

    private long[][] stateAfter(int prefix) {
        long[][] state = base.clone();
        for (int p = 0; p < prefix; p++) {
            Event e = events.get(p);
            for (int i = 0; i < e.tokens.length; i++) {
                int s = e.first + i;
                state[s] = e.discard ? LongSets.add(state[s], SectorPattern.ZERO) : LongSets.of(e.tokens[i]);
            }
        }
        return state;
    }

    private record Event(int first, long[] tokens, boolean discard) {
    }
}
