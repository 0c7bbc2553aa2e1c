package dev.strata.mirror.internal.io;

import dev.strata.mirror.internal.log.RegionLog;
import dev.strata.mirror.internal.region.RegionTracker;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** The mirror's {@code dev:status} keys, from its parts' counters: legs, regions, resync, log round trips. */
final class MirrorStatus {
    private MirrorStatus() {
    }

    static String label(Legs.State s) {
        return s.name().toLowerCase(Locale.ROOT);
    }

    static Map<String, String> render(RegionLog log, long regionSize, RegionTracker tracker, Legs legs,
            long legFailures, LegProber p, Resync resync, ReadPolicy readPolicy) {
        Map<String, String> m = new LinkedHashMap<>();
        RegionTracker.Counters c = tracker.counters();
        m.put("log", log.describe());
        m.put("region_size", Long.toString(regionSize));
        m.put("regions", Integer.toString(tracker.regions()));
        for (int i = 0; i < legs.count(); i++) {
            m.put("leg." + legs.name(i), label(legs.state(i)));
        }
        for (int i = 0; i < legs.count(); i++) {
            m.put("reads." + legs.name(i), Long.toString(legs.reads(i)));
        }
        m.put("leg_failures", Long.toString(legFailures));
        if (p != null && !p.describe().isEmpty()) {
            m.put("auto_recover", p.describe());
            m.put("auto_recoveries", Long.toString(p.recoveries()));
        }
        m.put("dirty_regions", Integer.toString(tracker.dirtyRegions()));
        m.put("pending_clears", Integer.toString(tracker.pendingClears()));
        // regions taken over but not queued yet count as pending (read first: a region moving into
        // the queue between the two reads is counted twice for a moment, never not at all)
        int waiting = log.resyncWorkWaiting();
        long total = resync.total() + waiting;
        m.put("resync_pending", Integer.toString(resync.pending() + waiting));
        m.put("resync_done", Long.toString(resync.done()));
        m.put("resync_total", Long.toString(total));
        m.put("resync_bytes", Long.toString(resync.bytes()));
        m.put("resync_progress", total == 0 ? "100%" : (resync.done() * 100 / total) + "%");
        m.put("writes", Long.toString(c.writes()));
        m.put("writes_marking", Long.toString(c.writesMarking()));
        m.put("writes_hot", Long.toString(c.writes() - c.writesMarking()));
        m.put("flushes", Long.toString(c.flushes()));
        if (log.sharedLegs() != null) {
            m.put("writes_held_back", Long.toString(tracker.writesHeldBack())); // waited for another node's resync
        }
        m.put("log_round_trips", Long.toString(c.roundTrips()));
        m.put("log_commits", Long.toString(c.commits()));
        m.put("log_commits_with_marks", Long.toString(c.commitsWithMarks()));
        m.put("log_commits_clear_only", Long.toString(c.commitsClearOnly()));
        m.put("marks_committed", Long.toString(c.marksCommitted()));
        m.put("clears_committed", Long.toString(c.clearsCommitted()));
        m.put("log_round_trips_per_write", ratio(c.roundTrips(), c.writes()));
        m.put("log_round_trips_per_flush", ratio(c.roundTrips(), c.flushes()));
        m.put("read_policy", readPolicy.label());
        m.put("clear_delay_ms", Long.toString(tracker.clearDelayNanos() / 1_000_000L));
        m.put("integrated_flush", Boolean.toString(tracker.integrated()));
        m.putAll(log.status());
        return m;
    }

    static String ratio(long a, long b) {
        return b == 0 ? "0" : String.format(Locale.ROOT, "%.3f", (double) a / b);
    }

}
