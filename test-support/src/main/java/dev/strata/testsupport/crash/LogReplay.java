package dev.strata.testsupport.crash;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Rebuilds device images from a log-writes recording at crash points. Entries are replayed in
 * {@code seq} order onto one {@link CrashableDevice} replica per recorded device: writes,
 * zeroing and discards land in its volatile cache (FUA ones durably), a flush entry makes
 * durable exactly the writes of its device whose {@code seq} is below its {@code covers}.
 * At a crash point the images come from the replicas' {@link CrashableDevice#crashImage}:
 * {@link CrashMode#KEEP_ALL} is every completed write (what dm-log-writes' replay shows),
 * {@link CrashMode#DROP_ALL} the worst legal state (only what was durable), {@link CrashMode#SUBSET}
 * and {@link CrashMode#TORN} random legal states in between.
 */
public final class LogReplay {
    private final List<LogEntry> entries;
    private final List<CrashableDevice> replicas = new ArrayList<>();
    private final List<List<long[]>> seqMaps = new ArrayList<>();
    private int next;

    /**
     * A replay of {@code entries} (any order; sorted here by seq) onto devices that held
     * {@code initialImages} when the recording started.
     */
    public LogReplay(List<LogEntry> entries, List<byte[]> initialImages, List<Integer> blockSizes) {
        this.entries = new ArrayList<>(entries);
        this.entries.sort((a, b) -> Long.compare(a.seq(), b.seq()));
        for (int i = 0; i < initialImages.size(); i++) {
            replicas.add(CrashableDevice.ofImage("replay" + i, initialImages.get(i), blockSizes.get(i)));
            seqMaps.add(new ArrayList<>());
        }
    }

    /** A crash point: the state after the first {@code entriesApplied} entries. */
    public record Point(int entriesApplied, long seq, LogEntry last) {
    }

    /** The crash points: after every flush and every FUA entry, and after the last entry. */
    public static List<Integer> durabilityPoints(List<LogEntry> entries) {
        List<Integer> points = new ArrayList<>();
        for (int i = 0; i < entries.size(); i++) {
            if (entries.get(i).durabilityPoint()) {
                points.add(i + 1);
            }
        }
        if (points.isEmpty() || points.get(points.size() - 1) != entries.size()) {
            points.add(entries.size());
        }
        return points;
    }

    public List<LogEntry> entries() {
        return List.copyOf(entries);
    }

    /** Replays forward until {@code entriesApplied} entries are applied (never backwards). */
    public Point advanceTo(int entriesApplied) {
        if (entriesApplied < next || entriesApplied > entries.size()) {
            throw new IllegalArgumentException("cannot replay to " + entriesApplied + " from " + next + " of " + entries.size());
        }
        while (next < entriesApplied) {
            apply(entries.get(next++));
        }
        LogEntry last = next == 0 ? null : entries.get(next - 1);
        return new Point(next, last == null ? 0 : last.seq() + 1, last);
    }

    /** The images of every device at the current point, as a crash in {@code mode} would leave them. */
    public List<byte[]> images(CrashMode mode, Random random) {
        List<byte[]> out = new ArrayList<>();
        for (CrashableDevice r : replicas) {
            out.add(r.crashImage(mode, random));
        }
        return out;
    }

    private void apply(LogEntry e) {
        CrashableDevice r = replicas.get(e.device());
        switch (e.kind()) {
            case WRITE -> seqMaps.get(e.device()).add(new long[] {e.seq(), r.record(e.offset(), e.data(), e.data().length, e.fua())});
            case ZERO, DISCARD -> seqMaps.get(e.device()).add(new long[] {e.seq(),
                    r.record(e.offset(), null, (int) e.length(), e.kind() == LogEntry.Kind.ZERO && e.fua())});
            case FLUSH -> {
                // durable: this device's writes with seq < covers; find the replica's own sequence number for that
                List<long[]> map = seqMaps.get(e.device());
                long internal = Long.MAX_VALUE;
                for (long[] m : map) {
                    if (m[0] >= e.covers()) {
                        internal = m[1];
                        break;
                    }
                }
                r.flushBefore(internal);
            }
            default -> throw new IllegalStateException("unknown entry " + e);
        }
    }
}
