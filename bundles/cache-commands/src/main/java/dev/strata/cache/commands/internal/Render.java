package dev.strata.cache.commands.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

import dev.strata.api.CacheMode;
import dev.strata.api.CacheTarget.Keys;

/** Every text the {@code cache:} commands print, in one place. */
final class Render {

    private Render() {
    }

    /** {@code 1536} → {@code 1.5 KiB} (one decimal, rounded down); below 1 KiB in bytes. */
    static String size(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        // one decimal rounded down, as the caches' own messages (cache-support's Iec) print it: a
        // size never reads larger than it is (1 GiB - 8 KiB is 1023.9 MiB, not 1024.0 MiB)
        String[] units = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
        int u = 0;
        while (u < units.length - 1 && bytes >>> (10 * (u + 1)) >= 1024) {
            u++;
        }
        long q = bytes >>> (10 * u); // in 1/1024 of the unit: exact, no overflow
        long tenths = q * 10 / 1024;
        return String.format(Locale.ROOT, "%d.%d %s", tenths / 10, tenths % 10, units[u]);
    }

    /** {@code 8192} → {@code 8,192}. */
    static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }

    /** Microseconds as a short duration: {@code 120 µs}, {@code 1.2 ms}, {@code 3.4 s}. */
    static String micros(long us) {
        if (us < 1000) {
            return us + " µs";
        }
        if (us < 1_000_000) {
            return String.format(Locale.ROOT, "%.1f ms", us / 1000.0);
        }
        return String.format(Locale.ROOT, "%.1f s", us / 1_000_000.0);
    }

    /** {@code 1 block}, {@code 8,192 blocks}. */
    static String blocks(long n) {
        return count(n) + (n == 1 ? " block" : " blocks");
    }

    static String percent(long part, long whole) {
        return whole <= 0 ? "0%" : (part * 100 / whole) + "%";
    }

    private static String bytes(long n, boolean raw) {
        return raw ? n + " B" : size(n);
    }

    // ---- cache:stats

    /** The one-line summary: mode, used/capacity, dirty, hit ratio, writeback state, p99 latency. */
    static String summary(CacheStatus s, boolean raw) {
        long bs = s.blockSize();
        StringBuilder sb = new StringBuilder(s.device()).append(": ").append(s.mode().label());
        String pending = s.text(Keys.MODE_PENDING).trim();
        if (!pending.isEmpty()) {
            // the mode still reads writeback, but new writes already go around: say both at a glance
            sb.append(" (switching to ").append(pending)
                    .append(" once the dirty blocks are written back; new writes go around)");
        }
        sb.append(", ").append(bytes(s.cachedBlocks() * bs, raw)).append(" of ").append(bytes(s.capacityBlocks() * bs, raw))
                .append(" cached (").append(percent(s.cachedBlocks(), s.capacityBlocks())).append(')');
        // a cache that never holds dirty data (a readcache) reports no writeback at all: "0 B dirty"
        // and "clean" would only be noise there
        boolean writes = s.dirtyBlocks() != 0 || s.values().containsKey(Keys.WRITEBACK_RATE)
                || s.values().containsKey(Keys.WRITEBACK_ERROR);
        if (writes) {
            sb.append(", ").append(bytes(s.dirtyBlocks() * bs, raw)).append(" dirty");
        }
        long hits = s.number(Keys.READ_HITS);
        long misses = s.number(Keys.READ_MISSES);
        if (hits >= 0 && misses >= 0) {
            sb.append(", ").append(hits + misses == 0 ? "no reads yet" : "read hits " + percent(hits, hits + misses));
        }
        if (writes) {
            sb.append(", ").append(writebackState(s, raw));
        }
        // no read yet: a p99 of 0 µs would read as a figure
        long r99 = hits == 0 && misses == 0 ? -1 : s.number(Keys.READ_LATENCY_P99);
        long w99 = s.number(Keys.WRITE_LATENCY_P99);
        if (r99 >= 0 || w99 >= 0) {
            sb.append(", p99");
            if (r99 >= 0) {
                sb.append(" read ").append(micros(r99));
            }
            if (w99 >= 0) {
                sb.append(r99 >= 0 ? " /" : "").append(" write ").append(micros(w99));
            }
        }
        return sb.toString();
    }

    private static String writebackState(CacheStatus s, boolean raw) {
        String error = s.text(Keys.WRITEBACK_ERROR).trim();
        // writeboost reports the last error's message, writecache a count of failed writebacks:
        // a fresh writecache read "writeback failing (0)"
        if (error.matches("\\d+")) {
            long n = Long.parseLong(error);
            if (n > 0) {
                return "writeback failing (" + n + (n == 1 ? " error" : " errors") + "; log:tail shows them)";
            }
        } else if (!error.isEmpty()) {
            return "writeback failing (" + error + ")";
        }
        if (s.dirtyBlocks() == 0) {
            return "clean";
        }
        long rate = s.number(Keys.WRITEBACK_RATE);
        if (rate > 0) {
            return "writing back at " + bytes(rate * s.blockSize(), raw) + "/s";
        }
        return "writeback idle";
    }

    /** The summary, then every non-empty status value, grouped. */
    static String all(CacheStatus s, boolean raw) {
        Map<StatusGroups.Group, List<Map.Entry<String, String>>> groups = StatusGroups.group(s.values());
        int w = 0;
        for (List<Map.Entry<String, String>> g : groups.values()) {
            for (Map.Entry<String, String> e : g) {
                w = Math.max(w, e.getKey().length());
            }
        }
        StringBuilder sb = new StringBuilder(summary(s, raw)).append('\n');
        for (Map.Entry<StatusGroups.Group, List<Map.Entry<String, String>>> g : groups.entrySet()) {
            sb.append(g.getKey().title).append('\n');
            for (Map.Entry<String, String> e : g.getValue()) {
                sb.append("  ").append(e.getKey()).append(" ".repeat(w - e.getKey().length() + 2))
                        .append(value(e.getKey(), e.getValue(), s.blockSize(), raw)).append('\n');
            }
        }
        return sb.toString();
    }

    /** Tunables whose value is a number of bytes although their name does not say so. */
    private static final java.util.Set<String> BYTE_TUNABLES = java.util.Set.of("bypass_threshold", "sequential_cutoff");

    /** Sizes in IEC units: {@code *_bytes} and {@code size} keys, and block counts with their size. */
    static String value(String key, String value, int blockSize, boolean raw) {
        if (raw) {
            return value;
        }
        long n;
        try {
            n = Long.parseLong(value);
        } catch (NumberFormatException e) {
            return value;
        }
        if (key.endsWith("_bytes") || key.equals("size") || key.endsWith("block_size") || BYTE_TUNABLES.contains(key)) {
            return size(n);
        }
        if (key.endsWith("_blocks") && blockSize > 0) {
            return count(n) + " (" + size(n * blockSize) + ")";
        }
        return value;
    }

    static String statsUsage() {
        return "usage: cache:stats DEV [--all] [--bytes] (a one-line summary; --all shows every counter)";
    }

    // ---- cache:set

    /** {@code action}: the key is no setting the cache reports, so the manager did not keep it. */
    static String set(String device, String key, String value, boolean persisted, boolean action) {
        return device + ": " + key + "=" + value + (action ? " (an action, not a setting: done once, not kept)"
                : persisted ? "" : " (transient: lost on restart or reload)");
    }

    // the short usages, for the one line of a mistake (Words)
    static final String SET = "cache:set [--transient] DEV KEY VALUE (or DEV KEY=VALUE)";
    static final String ATTACH = "cache:attach [--lower NAME] DEV TYPE cache=CDEV [key=value…]";
    static final String SWITCH = "cache:switch DEV TYPE [cache=CDEV] [key=value…], or cache:switch --cancel DEV";
    static final String RESIZE = "cache:resize DEV [size=SIZE], or cache:resize --cancel DEV";
    static final String REPLACE = "cache:replace DEV cache=NEWDEV, or cache:replace --cancel DEV";

    static String setUsage() {
        return "usage: cache:set [--transient] DEV KEY VALUE (or DEV KEY=VALUE); cache:stats DEV --all lists the tunables";
    }

    // ---- writeback and its progress

    /** {@code writeback wb0: 6,958 of 8,192 blocks left (15%), 12.3 MiB/s}. */
    static String progress(String device, long dirty, long writtenBack, double bytesPerSecond) {
        long total = dirty + writtenBack;
        return "writeback " + device + ": " + count(dirty) + " of " + blocks(total) + " left ("
                + percent(writtenBack, total) + "), " + size((long) bytesPerSecond) + "/s";
    }

    /** The progress line with the time left at the rate so far, once there is a rate. */
    static String progress(String device, long dirty, long writtenBack, double bytesPerSecond, int blockSize) {
        String line = progress(device, dirty, writtenBack, bytesPerSecond);
        if (dirty <= 0 || bytesPerSecond <= 0) {
            return line;
        }
        return line + ", ETA " + duration(Math.round(dirty * (double) blockSize / bytesPerSecond));
    }

    /** {@code 7 s}, {@code 3 min 05 s}, {@code 2 h 10 min}. */
    static String duration(long seconds) {
        if (seconds < 60) {
            return seconds + " s";
        }
        if (seconds < 3600) {
            return String.format(Locale.ROOT, "%d min %02d s", seconds / 60, seconds % 60);
        }
        return String.format(Locale.ROOT, "%d h %02d min", seconds / 3600, seconds / 60 % 60);
    }

    static String clean(String device, long writtenBack, long nanos) {
        if (writtenBack == 0) {
            return device + ": clean (nothing to write back)";
        }
        return device + ": clean; " + blocks(writtenBack) + " written back in "
                + String.format(Locale.ROOT, "%.1f s", nanos / 1e9);
    }

    /** {@code wb0: writeback cancelled: 1,234 of 8,192 blocks written back, 6,958 still dirty}. */
    static String cancelled(String device, String what, long writtenBack, long dirty) {
        return device + ": " + what + " cancelled: " + count(writtenBack) + " of " + blocks(writtenBack + dirty)
                + " written back, " + count(dirty) + " still dirty";
    }

    /**
     * After Ctrl-C, when the writeback did not stop within {@link BoundedCancel#WAIT_MILLIS}: a
     * batch's backing I/O is held below the cache (a closed gate, a stalled device).
     */
    static String cancelPending(String device, String what, String after) {
        return device + ": " + what + " cancelled; a batch still waits for I/O below " + device
                + " and stops when that I/O ends or times out (its blocks stay dirty, nothing is lost)" + after;
    }

    static String writebackUsage() {
        return "usage: cache:writeback DEV (writes back every dirty block; Ctrl-C stops it, nothing is lost)";
    }

    // ---- cache:mode and cache:detach

    static String modes(String device, CacheMode mode, java.util.Set<CacheMode> supported) {
        return modes(device, mode, null, 0, supported);
    }

    /** {@code pending}: the mode it switches to once its {@code dirty} blocks are written back, or null. */
    static String modes(String device, CacheMode mode, String pending, long dirty, java.util.Set<CacheMode> supported) {
        String switching = pending == null ? "" : ", switching to " + pending + " once its " + count(dirty) + " dirty "
                + (dirty == 1 ? "block is" : "blocks are") + " written back (new writes go around)";
        return device + ": " + mode.label() + switching + " (supported: " + labels(supported) + ")";
    }

    /** {@code cache:mode DEV MODE} for the mode it has while a switch away from it is pending. */
    static String pendingCancelled(String device, CacheMode mode, String pending) {
        return device + ": " + mode.label() + " (cancels the pending switch to " + pending + ": new writes are cached again)";
    }

    static String labels(java.util.Set<CacheMode> modes) {
        return modes.stream().sorted().map(CacheMode::label).collect(Collectors.joining(", "));
    }

    /** A word that is no mode at all: the modes this cache has (not every mode there is). */
    static String unknownMode(String device, String word, java.util.Set<CacheMode> supported) {
        return device + ": unknown cache mode '" + word + "'; use " + labels(supported);
    }

    static String unsupported(String device, CacheMode mode, java.util.Set<CacheMode> supported) {
        if (mode.holdsDirtyData() && supported.stream().noneMatch(CacheMode::holdsDirtyData)) {
            return device + ": mode " + mode.label() + " makes no sense for this cache: it only keeps clean copies (writes "
                    + "always reach its backing device); use " + labels(supported);
        }
        return device + ": mode " + mode.label() + " is not supported by this cache; use " + labels(supported);
    }

    static String modeChanged(String device, CacheMode now, CacheMode was) {
        return now == was ? device + ": already " + now.label() : device + ": mode " + now.label() + " (was " + was.label() + ")";
    }

    static String modeUsage() {
        return "usage: cache:mode DEV [writeback|writethrough|writearound|passthrough] (without a mode: show it)";
    }

    static String restoredSuffix(CacheMode old) {
        return "; the cache stays attached, mode " + old.label();
    }

    static String detached(String device, String lower, long writtenBack) {
        return device + ": detached; now linear over " + lower
                + (writtenBack > 0 ? " (" + blocks(writtenBack) + " written back)" : "");
    }

    static String attached(String device, String type, String cache, String oldType, String lower, String pauseMicros) {
        String pause = "";
        if (pauseMicros != null) {
            long us = Long.parseLong(pauseMicros);
            pause = "; I/O paused " + (us < 1000 ? us + " µs" : String.format(java.util.Locale.ROOT, "%.1f ms", us / 1000.0));
        }
        return device + ": " + type + " attached" + (cache == null ? "" : " (cache " + cache + ")") + "; its " + oldType
                + " target is now device " + lower + pause;
    }

    static String attachUsage() {
        return "usage: cache:attach [--lower NAME] DEV TYPE cache=CDEV [key=value…] (puts a cache in front of DEV, "
                + "which keeps its name)";
    }

    static String detachUsage() {
        return "usage: cache:detach [--keep-cache] DEV, or cache:detach --cancel DEV (writes everything back, then "
                + "maps DEV straight onto its backing device)";
    }

    /** After a detach of a cache that cache:attach put there: DEV is its old self again. */
    static String collapsed(String device, String type, String lower, long writtenBack, String pauseMicros,
            boolean keptCache) {
        return device + ": detached; its " + type + " target is back (" + lower + " is gone)"
                + (writtenBack > 0 ? ", " + count(writtenBack) + " blocks written back" : ", nothing to write back")
                + (keptCache ? ", the cache device's contents kept" : "") + pause(pauseMicros);
    }

    private static String pause(String pauseMicros) {
        if (pauseMicros == null) {
            return "";
        }
        long us = Long.parseLong(pauseMicros);
        return "; I/O paused " + (us < 1000 ? us + " µs" : String.format(Locale.ROOT, "%.1f ms", us / 1000.0));
    }

    static String cancelRequested(String device, String verb) {
        return device + ": cancelling the " + verb + " (its console prints how far it got)";
    }

    static String tooLateToCancel(String device, String verb) {
        return device + ": too late to cancel: the " + verb + " is swapping the target (it takes one short pause)";
    }

    static String noneRunning(String device, String verb) {
        return device + ": no cache:" + verb + " is running; nothing to cancel";
    }

    static String running(String device, String verb) {
        return device + ": a cache:" + verb + " is already running; wait for it, or cache:" + verb + " --cancel " + device;
    }

    /** The report of a {@code cache:switch}. */
    static String switched(String device, String type, String cache, String oldType, String oldCache, boolean kept,
            long writtenBack, String pauseMicros) {
        String what = kept ? ", cached data kept"
                : writtenBack > 0 ? ", " + count(writtenBack) + " blocks written back first" : ", nothing to write back";
        return device + ": switched to " + type + " (cache " + cache + "; was " + oldType + " on " + oldCache + ")"
                + what + pause(pauseMicros);
    }

    static String switchUsage() {
        return "usage: cache:switch DEV TYPE [cache=CDEV] [key=value…] (the backing device stays; cache= defaults to the "
                + "current cache device), or cache:switch --cancel DEV";
    }

    static String sameSwitch(String device, String type, String cache) {
        return device + ": already " + type + " on " + cache + " with these arguments; nothing to switch";
    }

    // ---- cache:resize

    static String resizeUsage() {
        return "usage: cache:resize DEV [size=SIZE] (the cache laid out again over SIZE bytes of its cache device; "
                + "default: all of it), or cache:resize --cancel DEV";
    }

    static String resizeTooLarge(String device, String size, String cache, long cacheBytes) {
        return device + ": size=" + size + " is larger than its cache device " + cache + " (" + size(cacheBytes)
                + "); grow " + cache + " first (e.g. dev:reload " + cache + " file path=… size=… create=true), or give "
                + "a smaller size";
    }

    static String resizeTooSmall(String device, String size, long min) {
        return device + ": size=" + size + " is too small for a cache; give at least " + size(min);
    }

    static String sameSize(String device, long bytes, String cache) {
        return device + ": already laid out over " + size(bytes) + " of " + cache + "; nothing to resize";
    }

    static String capacityUnchanged(String device, long bytes) {
        return device + ": capacity unchanged (" + count(bytes) + " bytes): nothing to do";
    }

    static String notResizable(String device, String type) {
        return device + ": a " + type + " cache cannot be resized in place (its format keeps the size it was made "
                + "with); for a bigger cache use cache:switch " + device + " " + type + " cache=BIGGERDEV (it writes the "
                + "dirty data back first)";
    }

    static String resized(String device, String type, String cache, long before, long after, int blockSize,
            int oldBlockSize, long writtenBack, String pauseMicros) {
        String from = count(before) + " blocks (" + size(before * oldBlockSize) + ")";
        String to = count(after) + " blocks (" + size(after * blockSize) + ")";
        String what = writtenBack > 0 ? ", " + count(writtenBack) + " blocks written back first" : ", nothing to write back";
        return device + ": " + type + " on " + cache + " resized from " + from + " to " + to
                + (before == after ? " (capacity unchanged)" : "") + what + "; its cached copies were dropped"
                + pause(pauseMicros);
    }

    static String keepCacheNeedsAttach(String device, String lower) {
        return device + ": --keep-cache only for a cache that cache:attach put there (the kept copies could later "
                + "be served over a changed " + lower + "); detach without it";
    }

    /**
     * What {@code cache:set DEV writeback.controller=NAME} adds when no controller of that name is
     * installed: the cache accepts it (the bundle may come later) and paces with its built-in one
     * meanwhile, so a typo ("modulater") went unnoticed.
     */
    static String controllerNote(String key, String value, java.util.Set<String> installed) {
        if (!Keys.CONTROLLER.equals(key) || "builtin".equals(value) || installed.contains(value)) {
            return "";
        }
        return " (no controller '" + value + "' is installed: the built-in one paces writeback until it is; "
                + (installed.isEmpty() ? "none is installed" : "installed: " + String.join(", ", installed)) + ")";
    }

    // ---- cache:controllers

    /** A writeback controller service. */
    record Controller(String name, String bundle, String version) {
    }

    static String controllers(List<Controller> controllers) {
        if (controllers.isEmpty()) {
            return "no writeback controllers installed; every cache paces writeback with its built-in controller (builtin)\n";
        }
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"NAME", "BUNDLE", "VERSION"});
        for (Controller c : controllers) {
            rows.add(new String[] {c.name(), c.bundle(), c.version()});
        }
        // the fallback has its own name, so a cache falling back never shows a service's name
        rows.add(new String[] {"builtin", "(in every cache: the fallback)", "-"});
        return table(rows);
    }

    /** Rows as left-aligned columns separated by two spaces; the first row is the header. */
    static String table(List<String[]> rows) {
        int cols = rows.get(0).length;
        int[] w = new int[cols];
        for (String[] r : rows) {
            for (int i = 0; i < cols; i++) {
                w[i] = Math.max(w[i], r[i].length());
            }
        }
        StringBuilder sb = new StringBuilder();
        for (String[] r : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < cols; i++) {
                line.append(r[i]);
                if (i < cols - 1) {
                    line.append(" ".repeat(w[i] - r[i].length() + 2));
                }
            }
            sb.append(line.toString().stripTrailing()).append('\n');
        }
        return sb.toString();
    }
}
