package dev.strata.cache.writecache.internal.io;

import dev.strata.api.CacheMode;
import dev.strata.api.InvalidArgumentException;
import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * A writecache's mode and its pending switch. Writearound asked for while blocks are dirty cannot
 * be the mode yet (the cache still holds the only copy of those blocks), so it is <em>pending</em>:
 * new writes go around at once, the mode still reads writeback, and the switch completes by
 * itself the first time the mode is looked at with nothing dirty (after {@code flush 1} or
 * {@code cache:writeback}). Asking for writeback cancels it.
 *
 * <p>Two ways to ask: {@link #set} is the cache API's {@code setMode}, which its contract lets
 * refuse while dirty (after stopping new dirty data; {@code cache:mode} and {@code cache:detach}
 * drain and ask again); {@link #request} is the message {@code mode writearound}
 * ({@code dev:message}, {@code cache:set}), which always succeeds with a note saying that the
 * switch waits, so that the documented removal runs as a script.
 */
final class ModeSwitch {
    private final LongSupplier dirty;
    private CacheMode mode = CacheMode.WRITEBACK;
    private CacheMode pending;

    /** @param dirty the cache's dirty block count now */
    ModeSwitch(LongSupplier dirty) {
        this.dirty = dirty;
    }

    /** The mode, after completing a pending switch whose dirty blocks are all written back. */
    synchronized CacheMode mode() {
        settle();
        return mode;
    }

    /** The mode a switch waits for, or null. */
    synchronized CacheMode pending() {
        settle();
        return pending;
    }

    /** Whether new writes go around the cache (writearound, or on the way to it). */
    synchronized boolean around() {
        return mode == CacheMode.WRITEAROUND || pending != null;
    }

    /** {@code setMode}: refused while dirty blocks remain, after making new writes go around. */
    synchronized void set(CacheMode m) {
        supported(m);
        long d = request(m);
        if (d > 0) {
            throw new InvalidArgumentException("writecache: " + count(d) + " dirty blocks remain; new writes now go around;"
                    + " write everything back (cache:writeback), then switch to " + m.label());
        }
    }

    /** The message {@code mode VALUE}: always accepted; returns a note when the switch waits or was cancelled. */
    synchronized String message(CacheMode m) {
        supported(m);
        CacheMode was = pending;
        long d = request(m);
        if (d > 0) {
            return "pending: new writes go around from now on; the mode becomes " + m.label() + " once the "
                    + count(d) + " dirty blocks are written back (flush 1, or cache:writeback)";
        }
        if (m == CacheMode.WRITEBACK && was != null) {
            return "cancels the pending switch to " + was.label() + ": new writes are cached again";
        }
        return null;
    }

    /** Sets {@code m} or makes it pending; returns the dirty blocks it waits for (0: set). */
    private long request(CacheMode m) {
        if (m == CacheMode.WRITEBACK) {
            pending = null;
            mode = m;
            return 0;
        }
        long d = dirty.getAsLong();
        if (d > 0) {
            pending = m;
            return d;
        }
        pending = null;
        mode = m;
        return 0;
    }

    private void settle() {
        if (pending != null && dirty.getAsLong() == 0) {
            mode = pending;
            pending = null;
        }
    }

    private static void supported(CacheMode m) {
        if (m != CacheMode.WRITEBACK && m != CacheMode.WRITEAROUND) {
            throw new InvalidArgumentException("writecache: mode " + m.label() + " is not supported; use writeback or writearound");
        }
    }

    static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }
}
