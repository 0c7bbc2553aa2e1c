package dev.strata.cache.readcache.internal.io;

import dev.strata.cache.support.guard.TouchStamps;

/**
 * The staleness guard: touch stamps and in-flight counts per block (hashed), and the origin's
 * durable point. Guarded by the {@link CacheState} lock; no I/O.
 *
 * <h2>Why a promotion never installs older data</h2>
 * A write W of block B counts itself in flight ({@link #begin}) in the same lock hold in which it
 * invalidates B's cached copy, and when its origin I/O has ended (succeeded or not) it leaves and
 * stamps B with a new value of the sequence ({@link #end}). A promotion P of B takes a snapshot of
 * the sequence when it is planned (before it reads the origin) and installs only if, in the lock
 * hold of the install, nothing touched B after the snapshot and no write of B is in flight
 * ({@link #stale}). Take any W and P of B:
 * <ul>
 * <li>W ended before P's snapshot: P read the origin after W's data was there.
 * <li>W ended after the snapshot and before the install: the stamp is newer, P is dropped.
 * <li>W began before the install and had not ended: in flight, P is dropped.
 * <li>W began after the install: it finds B cached and invalidates it.
 * </ul>
 * Hash collisions only drop more promotions than needed. A range too long to stamp block by block
 * uses the global stamp and count instead.
 *
 * <h2>Why a written block's copy is never older data either ({@code write_promote})</h2>
 * A write W of B that keeps its data cached takes its snapshot in the lock hold of its {@link
 * #begin} (where it also dropped B's cached copy), installs its copy after its origin write has
 * completed and before its own {@link #end}, and only if, in the lock hold of the install, no other
 * write of B is in flight (B's count is W's own 1) and none touched B after the snapshot
 * ({@link #writeCurrent}). The origin then holds W's data: take any other write W' of B —
 * <ul>
 * <li>W' ended before W's snapshot: W was sent to the origin after W' completed, so W's is last.
 * <li>W' ended after the snapshot and before the install: the stamp is newer, W's copy is dropped
 * (the two overlapped; which one the origin kept is not known).
 * <li>W' in flight at the install (began before it, not ended): the count is above 1, dropped.
 * <li>W' began after the install: its {@link #begin} finds W's copy cached and drops it.
 * </ul>
 * A read's promotion of B racing W is dropped by {@link #stale} (W is in flight until after the
 * install, and stamps B when it ends); W does not install while such a promotion is pending
 * (B is in the index), so a block never has two slots.
 *
 * <h2>The origin's durable point</h2>
 * {@code durable} is a sequence value such that every write whose end stamp is at most it is
 * durable on the origin: a flush records the sequence when it starts ({@link #seq()}) and, when
 * the origin's flush has completed, raises {@code durable} to it ({@link #durableUpTo}) — every
 * write stamped before the flush started had completed before it. A cached copy may be recorded
 * as valid on the cache device only if B's stamp is at most {@code durable} ({@link #sourceDurable}):
 * otherwise a crash could lose the origin's newer data while the cache keeps it, and the block
 * would change value when the entry is later evicted.
 */
final class Stamps {
    private static final int BITS = 14;
    /** A write of more blocks than this counts itself in flight with the global count. */
    static final int RANGE_MAX = 1 << 12;

    /** The touch stamps, shared with the other caches (cache-support); in-flight counts and the durable point are the read cache's. */
    private final TouchStamps touched = new TouchStamps(BITS);
    private final int[] inflight = new int[1 << BITS];
    private int inflightAll;
    private long durable;

    private static int h(long block) {
        return (int) ((block * 0x9E3779B97F4A7C15L) >>> (64 - BITS));
    }

    long seq() {
        return touched.snapshot();
    }

    /** A write of blocks {@code [from, from + n)} begins. */
    void begin(long from, long n) {
        if (n > RANGE_MAX) {
            inflightAll++;
            return;
        }
        for (long b = from; b < from + n; b++) {
            inflight[h(b)]++;
        }
    }

    /** The write begun with the same arguments has ended (its origin I/O is over). */
    void end(long from, long n) {
        if (n > RANGE_MAX) {
            inflightAll--;
        } else {
            for (long b = from; b < from + n; b++) {
                inflight[h(b)]--;
            }
        }
        touched.touchRange(from, from + n);
    }

    /** Whether a promotion of {@code block} planned at {@code snap} must be dropped. */
    boolean stale(long block, long snap) {
        return inflightAll > 0 || inflight[h(block)] > 0 || touched.stale(block, snap);
    }

    /**
     * Whether a write of {@code block} that began at {@code snap} (and is still in flight, counted
     * once) is the only write of it since: its data is what the origin holds.
     */
    boolean writeCurrent(long block, long snap) {
        return inflightAll == 0 && inflight[h(block)] == 1 && !touched.stale(block, snap);
    }

    /** Whether the origin's copy of {@code block} as read now is durable. */
    boolean sourceDurable(long block) {
        return inflightAll == 0 && inflight[h(block)] == 0 && !touched.stale(block, durable);
    }

    /** An origin flush that started at sequence {@code s} has completed. */
    void durableUpTo(long s) {
        durable = Math.max(durable, s);
    }

    long heapBytes() {
        return touched.heapBytes() + 4L * inflight.length;
    }
}
