package dev.strata.tools.internal;

import dev.strata.api.BlockDevice;
import dev.strata.api.CacheTarget;
import dev.strata.api.Target;
import dev.strata.cache.support.units.Iec;
import dev.strata.tools.internal.format.CacheFormat;
import dev.strata.tools.internal.format.Findings;
import dev.strata.tools.internal.format.Hints;
import dev.strata.tools.internal.format.Tree;
import java.io.IOException;
import java.io.PrintStream;
import java.util.List;
import java.util.Map;

/**
 * The four commands over open devices (the CLI in {@link Main} opens the files). Each returns its
 * exit status: 0 fine, 1 the device has problems (or the command could not do its job).
 */
public final class Tool {
    private Tool() {
    }

    public static int check(CacheFormat format, BlockDevice cache, PrintStream out) throws IOException {
        return check(format, cache, "the device", out);
    }

    /**
     * Every problem, one a line; on a clean device one line saying so and what was read ({@code what}:
     * the file named), so that a clean check cannot be taken for one that did nothing.
     */
    public static int check(CacheFormat format, BlockDevice cache, String what, PrintStream out) throws IOException {
        Findings f = format.scan(cache);
        for (String p : f.problems()) {
            out.println(p);
        }
        if (f.problems().isEmpty()) {
            out.println("ok: " + what + " holds a " + format.name() + " that checks clean (its superblock and all "
                    + "its metadata read; " + Iec.size(cache.size()) + "; nothing written)");
            return 0;
        }
        return 1;
    }

    public static int dump(CacheFormat format, BlockDevice cache, boolean json, PrintStream out) throws IOException {
        Map<String, Object> m = format.dump(cache, null);
        out.print(json ? Tree.json(m) + "\n" : Tree.text(m));
        return ((List<?>) m.get("problems")).isEmpty() ? 0 : 1;
    }

    public static int repair(CacheFormat format, BlockDevice cache, PrintStream out) throws IOException {
        return repair(format, cache, Hints.NONE, out);
    }

    /** Repairs with what the operator said about how the device was built (for a superblock that must be rebuilt). */
    public static int repair(CacheFormat format, BlockDevice cache, Hints hints, PrintStream out) throws IOException {
        Findings f = format.scan(cache, hints);
        if (f.unrepairable() != null) {
            out.println("cannot repair: " + f.unrepairable() + "; nothing was written");
            return 1;
        }
        if (f.problems().isEmpty()) {
            out.println("nothing to repair: the " + format.name() + " cache checks clean");
            return 0;
        }
        f.overlay().commit();
        for (String r : f.repairs()) {
            out.println("repaired: " + r);
        }
        for (String d : f.dropped()) {
            out.println("dropped: " + d);
        }
        if (f.dropped().isEmpty()) {
            out.println("nothing was lost");
        }
        Findings after = format.scan(cache);
        for (String p : after.problems()) {
            out.println("still wrong: " + p);
        }
        return after.problems().isEmpty() ? 0 : 1;
    }

    public static int writeback(CacheFormat format, BlockDevice cache, BlockDevice backing, PrintStream out)
            throws IOException, InterruptedException {
        if (format.name().equals("mirror-log")) {
            out.println("a mirror log holds no data, only which regions the legs may differ in; nothing to write back"
                    + " (the mirror resyncs those regions at its next start)");
            return 0;
        }
        if (!format.holdsDirtyData()) {
            out.println("a " + format.name() + " cache holds no dirty data: its origin device is complete; nothing to write back");
            return 0;
        }
        Findings f = format.scan(cache);
        if (!f.problems().isEmpty()) {
            out.println("the cache device has problems ('strata-tool check' lists them): run 'strata-tool repair' first; nothing was written");
            return 1;
        }
        Context ctx = new Context(format.name() + "-tool",
                Map.of(Targets.backingArgument(format), "backing", "cache", "cache"), Map.of("backing", backing, "cache", cache));
        Target t = Targets.factory(format).create(ctx);
        try {
            CacheTarget c = (CacheTarget) t;
            long dirty = c.dirtyBlocks();
            long[] done = {0};
            c.writebackAll((left, written) -> done[0] = written);
            t.flush();
            backing.flush();
            out.println("wrote back " + dirty + " dirty blocks of " + c.cacheBlockSize()
                    + " bytes to the backing device; the cache is clean (" + c.dirtyBlocks() + " dirty)");
            return c.dirtyBlocks() == 0 ? 0 : 1;
        } finally {
            t.close();
        }
    }
}
