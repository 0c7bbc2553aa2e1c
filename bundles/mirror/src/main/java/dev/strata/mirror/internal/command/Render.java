package dev.strata.mirror.internal.command;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Every text the {@code mirror:} commands print. */
final class Render {
    static final String RESYNC_USAGE = "usage: mirror:resync [--all] DEV — copy the marked regions (--all: every region) again "
            + "from the first in-sync leg, with a progress line; Ctrl-C stops waiting, not the resync";
    static final String RECOVER_USAGE = "usage: mirror:recover DEV LEG — bring an out-of-sync leg back: it gets only the regions it missed";
    static final String FAIL_USAGE = "usage: mirror:fail DEV LEG — take a leg out of sync by hand (e.g. before replacing its disk)";

    private Render() {
    }

    /** The block of one mirror: legs, regions, resync, log round trips, writes, settings. */
    static String status(MirrorStatus s) {
        StringBuilder b = new StringBuilder();
        b.append(s.device()).append("  ").append(s.get("state")).append("  log ").append(s.get("log"))
                .append("  region ").append(size(s.number("region_size"))).append('\n');
        if (s.legs().isEmpty()) {
            // no target right now: the device's own state says why
            String why = s.get("waiting_for").isEmpty() ? s.get("last_error") : s.get("waiting_for");
            return b.append("  no target").append(why.isEmpty() ? "" : ": " + why).toString();
        }
        StringBuilder legs = new StringBuilder();
        for (Map.Entry<String, String> l : s.legs().entrySet()) {
            legs.append(legs.length() == 0 ? "" : "   ").append(l.getKey()).append(' ').append(l.getValue())
                    .append(" (reads ").append(count(s.number("reads." + l.getKey()))).append(')');
        }
        line(b, "legs", legs.toString());
        line(b, "regions", count(s.number("dirty_regions")) + " dirty of " + count(s.number("regions")) + ", "
                + count(s.number("pending_clears")) + " pending clears");
        line(b, "resync", resync(s));
        line(b, "log", ratio(s.get("log_round_trips_per_flush")) + " round trips per flush, "
                + ratio(s.get("log_round_trips_per_write")) + " per write (" + count(s.number("log_round_trips"))
                + (s.number("log_round_trips") == 1 ? " round trip: " : " round trips: ") + count(s.number("log_commits_with_marks")) + " with marks, "
                + count(s.number("log_commits_clear_only")) + " clear-only)");
        long writes = s.number("writes");
        line(b, "writes", count(writes) + " (" + count(s.number("writes_marking")) + " waited for a mark, "
                + count(s.number("writes_hot")) + " into marked regions), " + count(s.number("flushes")) + " flushes");
        String settings = "integrated_flush=" + s.get("integrated_flush") + " clear_delay=" + s.get("clear_delay_ms")
                + "ms read_policy=" + s.get("read_policy");
        if (!s.get("write_fanout").isEmpty()) {
            settings += " write_fanout=" + s.get("write_fanout");
        }
        if (!s.get("auto_recover").isEmpty()) {
            settings += " auto_recover=" + s.get("auto_recover") + " (" + count(s.number("auto_recoveries")) + " so far)";
        }
        line(b, "settings", settings);
        List<String> out = s.legsIn("out_of_sync");
        if (!out.isEmpty()) {
            b.append("  ! degraded: ").append(String.join(", ", out)).append(out.size() == 1 ? " misses" : " miss")
                    .append(" every region written since; mirror:recover ").append(s.device()).append(' ')
                    .append(out.get(0)).append(" brings it back\n");
        }
        String session = s.get("zk_session");
        if (!session.isEmpty() && !session.equals("member")) {
            // without this line an outage of the ensemble showed nothing: writes hung, the status
            // and the log looked as usual
            b.append("  ! ZooKeeper session ").append(session).append(": writes wait for it (at most 120 s each, ")
                    .append(count(s.number("zk_paused"))).append(" have waited), reads go on; is ")
                    .append(s.get("log").replaceFirst("^zookeeper:", "").replaceFirst("/.*$", "")).append(" up?\n");
        }
        return b.toString().stripTrailing();
    }

    private static String resync(MirrorStatus s) {
        long pending = s.number("resync_pending");
        String copied = count(s.number("resync_done")) + " of " + count(s.number("resync_total")) + " regions, "
                + size(s.number("resync_bytes")) + " copied";
        if (!s.resyncing()) {
            return "idle (" + copied + " since start)";
        }
        return s.get("resync_progress") + " (" + count(pending) + " pending; " + copied + ")";
    }

    private static void line(StringBuilder b, String label, String text) {
        b.append("  ").append(String.format(Locale.ROOT, "%-9s", label)).append(' ').append(text).append('\n');
    }

    static String noMirrors() {
        return "no mirror devices (dev:create NAME mirror legs=A,B region_size=512k log=core|disk:DEV makes one)";
    }

    static String notAMirror(String device, String type) {
        return "device '" + device + "' is " + article(type) + " " + type + ", not a mirror; mirror:status lists the mirrors";
    }

    static String noTarget(String device, String why) {
        return "mirror " + device + " has no target now" + (why.isEmpty() ? "" : " (" + why + ")") + "; dev:status " + device + " says more";
    }

    /** The progress line of a resync, rewritten in place. */
    static String progress(String device, long copied, long pending, long bytes, double seconds) {
        long total = copied + pending;
        long pct = total == 0 ? 100 : copied * 100 / total;
        return device + ": resync " + pct + "% — " + count(copied) + " of " + count(total) + " regions, " + size(bytes)
                + " copied, " + String.format(Locale.ROOT, "%.1f", seconds) + " s";
    }

    static String resynced(String device, long regions, long bytes, double seconds, List<String> outOfSync) {
        String s = device + ": resynced " + count(regions) + (regions == 1 ? " region" : " regions") + " (" + size(bytes)
                + ") in " + String.format(Locale.ROOT, "%.1f", seconds) + " s";
        return s + outOfSyncNote(device, outOfSync);
    }

    static String stoppedWaiting(String device, long pending) {
        return device + ": stopped waiting; the resync goes on in the background (" + count(pending)
                + " regions left; mirror:status " + device + ")";
    }

    static String stalled(String device, long seconds, long pending) {
        return device + ": the resync made no progress for " + seconds + " s (" + count(pending)
                + " regions left; is the source leg reachable?); it goes on in the background: mirror:status " + device;
    }

    static String recovering(String device, String leg, long pending, List<String> sources) {
        return device + ": leg " + leg + " is recovering: " + count(pending) + " marked regions to copy"
                + (sources.isEmpty() ? "" : " from " + sources.get(0)) + "; mirror:resync " + device + " waits for it";
    }

    static String failed(String device, String leg, List<String> inSync) {
        return device + ": leg " + leg + " is out of sync; writes go to " + String.join(", ", inSync)
                + " and every region written stays marked; mirror:recover " + device + " " + leg + " brings it back";
    }

    static String outOfSyncNote(String device, List<String> outOfSync) {
        if (outOfSync.isEmpty()) {
            return "";
        }
        return "; not to " + String.join(", ", outOfSync) + " (out of sync: mirror:recover " + device + " " + outOfSync.get(0) + ")";
    }

    static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }

    private static String ratio(String r) {
        return r.isEmpty() ? "0" : r;
    }

    static String size(long bytes) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        double v = bytes;
        int u = 0;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return u == 0 ? bytes + " B" : (v == Math.rint(v) ? String.format(Locale.ROOT, "%.0f %s", v, units[u])
                : String.format(Locale.ROOT, "%.1f %s", v, units[u]));
    }

    private static String article(String type) {
        return !type.isEmpty() && "aeiou".indexOf(Character.toLowerCase(type.charAt(0))) >= 0 ? "an" : "a";
    }
}
