package dev.strata.cache.writecache.internal.io;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The in-place overwrite of {@link WritePath}, the steady state of random overwrites, which
 * takes no state monitor: see {@link #write}.
 */
final class InPlace {
    private final CacheState state;
    private final InFlight inFlight;
    private final Failure failure;
    private final Stats counters;
    private final InFlight.Body slotsBody;
    /** Consecutive slots of one write go to the cache device as one I/O (false: one per block, benchmarks only). */
    private final boolean contiguous;
    private final int bs;

    InPlace(CacheState state, InFlight inFlight, Failure failure, Stats counters, InFlight.Body slotsBody, boolean contiguous) {
        this.state = state;
        this.inFlight = inFlight;
        this.failure = failure;
        this.counters = counters;
        this.slotsBody = slotsBody;
        this.contiguous = contiguous;
        this.bs = state.layout.blockSize();
    }

    /**
     * The common overwrite without the state monitor: when every block of the request is cached
     * in a slot it may overwrite in place (stamped current, not under writeback), the write
     * changes no state, so it only looks and registers its data write, under the gate's read
     * lock ({@link CacheState}: every change it could see is made under the write lock). Returns
     * false, having changed nothing, when any block is not such a hit; the caller then takes the
     * monitor as before. Not for FUA (its data write runs on while the commit waits for it).
     * The look is optimistic (the gate's stamp, no lock word written): the cold index walk is
     * most of a request, and a miss then holds nothing while it walks, so a miss placing its
     * slots (gate write lock, under the monitor) waits for no other request's walk. A hit turns
     * the stamp into the read lock only if nothing changed since, else looks again under it; an
     * optimistic "miss" needs no check (false is always safe).
     */
    boolean write(long block, int count, ByteBuffer src) throws IOException {
        long stamp = state.gate.tryOptimisticRead(); // 0: write-locked now, look under the read lock
        int first = stamp == 0 ? -1 : hitUnlocked(block);
        if (stamp != 0 && first < 0) {
            return false; // the first block is no in-place hit
        }
        InFlight.Entry e = inFlight.take(slotsBody);
        try {
            long g = 0;
            if (stamp != 0) {
                boolean hit;
                try {
                    hit = look(e, block, count, first);
                } catch (RuntimeException racing) { // a racy read of a changing index (or bit set)
                    hit = false;
                }
                if (!hit) {
                    return false;
                }
                Runnable probe = optimisticProbe;
                if (probe != null) {
                    probe.run(); // tests only: a change made here must send this write to the locked look
                }
                g = state.gate.validate(stamp) ? state.gate.tryConvertToReadLock(stamp) : 0;
            }
            if (g == 0) { // something changed since the stamp: look again, holding the read lock
                e.pieces = 0;
                g = state.gate.readLock();
                boolean hit = false;
                try {
                    hit = look(e, block, count, -1);
                } finally {
                    if (!hit) {
                        state.gate.unlockRead(g);
                    }
                }
                if (!hit) {
                    return false;
                }
            }
            try {
                failure.check();
                int lo = Integer.MAX_VALUE;
                int hi = -1;
                for (int i = 0; i < e.pieces; i++) {
                    lo = Math.min(lo, e.slot[i]);
                    hi = Math.max(hi, e.slot[i] + e.count[i] - 1);
                }
                Runnable probe = inPlaceProbe;
                if (probe != null) {
                    probe.run(); // tests only: a commit tried here must wait for this registration
                }
                // the caller's buffer itself: this thread waits for the data write (position and limit restored)
                e.data = src;
                e.base = src.position();
                inFlight.register(e, lo, hi);
            } finally {
                state.gate.unlockRead(g);
            }
            counters.writeHitsUncommitted.add(count);
            inFlight.await(e);
            return true;
        } finally {
            inFlight.release(e);
        }
    }

    /** Tests only: run by an in-place write between finding its slots and registering its data write. */
    volatile Runnable inPlaceProbe;
    /** Tests only: run by an in-place write between its optimistic look and taking the gate's read lock. */
    volatile Runnable optimisticProbe;

    /** Deepest walk of an optimistic look (a treap of 2^31 slots is about 60 levels deep on average). */
    private static final int WALK_STEPS = 512;

    /** The slot of {@code b} if it looks, without any lock, like an in-place hit; else -1. */
    private int hitUnlocked(long b) {
        try {
            int s = state.index.hinted(b);
            if (s < 0) {
                s = state.index.findUnlocked(b, WALK_STEPS);
            }
            return s >= 0 && state.reusable(s) ? s : -1;
        } catch (RuntimeException racing) {
            return -1;
        }
    }

    /**
     * Fills {@code e}'s pieces with the slots of {@code [block, block + count)} (consecutive slots
     * one piece, unless one I/O per block); false at the first block that is no in-place hit.
     * {@code first} ≥ 0: an optimistic look whose first block's slot is known (validated later).
     */
    private boolean look(InFlight.Entry e, long block, int count, int first) {
        boolean unlocked = first >= 0;
        int runSlot = -1;
        int runCount = 0;
        int hint = -1;
        for (int i = 0; i < count; i++) {
            long b = block + i;
            int s = i == 0 && unlocked ? first : hint >= 0 && state.index.holds(hint + 1, b) ? hint + 1
                    : state.index.hinted(b);
            if (s < 0) {
                s = unlocked ? state.index.findUnlocked(b, WALK_STEPS) : state.index.find(b);
            }
            if (s < 0 || !state.reusable(s)) {
                return false;
            }
            hint = s;
            if (runCount > 0 && contiguous && s == runSlot + runCount) {
                runCount++;
            } else {
                if (runCount > 0) {
                    e.addPiece(runSlot, block + i - runCount, runCount, (i - runCount) * bs);
                }
                runSlot = s;
                runCount = 1;
            }
        }
        e.addPiece(runSlot, block + count - runCount, runCount, (count - runCount) * bs);
        return true;
    }
}
