package dev.strata.cache.writecache.internal.io;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.Arrays;

/**
 * The data writes to cache slots that are registered but not finished. A write registers its
 * data write under the state lock, in the same step that points the index at the slots; a commit
 * notes the last ticket there ({@link #lastTicket}) and waits for every write up to it before
 * flushing the cache device (the 2020 dm-writecache fix: metadata may name slots whose data is
 * still on its way).
 *
 * <p>Whoever waits for a data write first runs it if nobody has started it yet (an entry is
 * claimed once, under its own monitor), so a writer, a commit or a reader that needs the slot
 * never waits for a thread that is not coming.
 *
 * <p>Entries are reused, not allocated per write (the developers' guide: nothing per request on
 * the hot path): the writer that registered an entry {@link #release}s it once it has seen the
 * write finish, and a reused entry gets a new ticket, so a waiter that remembered (entry,
 * ticket) knows its write is done when the ticket has moved on. The registry is a small array
 * under this object's monitor, held only to register, release or look, never for I/O or a wait,
 * and nested inside the state lock at most — waiting for a write never deadlocks with either
 * lock. A data write that failed leaves its failure here too: a commit whose write was released
 * before the commit looked still sees it (the cache device's failure latch is set as well).
 */
final class InFlight {
    private static final int NEW = 0;
    private static final int RUNNING = 1;
    private static final int DONE = 2;

    /** A data write's body: what {@link #run} does once. */
    interface Body {
        void run(Entry e) throws IOException;
    }

    /**
     * One registered data write touching slots {@code [firstSlot, lastSlot]}; the fields after
     * {@code lastSlot} are the writer's own (its pieces), kept for the next write that takes it.
     */
    static final class Entry {
        private Body body;
        private long ticket;
        private int state = DONE;
        private Throwable failure;
        /** Released by its writer before it finished (an interrupted wait): its runner gives it back. */
        private boolean orphan;
        int firstSlot;
        int lastSlot;
        /** Its part of the registry (fixed), and where it is in that part's array while registered. */
        private int stripe;
        private int at;
        private boolean registered;
        // the writer's pieces: count blocks of the data at srcOffset, to slots from slot (-1: around)
        int pieces;
        int[] slot = new int[4];
        long[] block = new long[4];
        int[] count = new int[4];
        int[] srcOffset = new int[4];
        java.nio.ByteBuffer data;
        int base;

        void addPiece(int s, long b, int n, int src) {
            if (pieces == slot.length) {
                int m = pieces * 2;
                slot = Arrays.copyOf(slot, m);
                block = Arrays.copyOf(block, m);
                count = Arrays.copyOf(count, m);
                srcOffset = Arrays.copyOf(srcOffset, m);
            }
            slot[pieces] = s;
            block[pieces] = b;
            count[pieces] = n;
            srcOffset[pieces++] = src;
        }

        long ticket() {
            synchronized (this) {
                return ticket;
            }
        }
    }

    /**
     * The registry in {@link #STRIPES} parts, each under its own monitor: a writer registers in
     * the part of its thread, so that 32 writers do not queue on one monitor to register and give
     * back (JFR: waits of 20 ms and more on the single one once the state monitor was off the path
     * of in-place writes). A waiter for "everything up to ticket t" looks at every part.
     */
    static final int STRIPES = 16;

    /** One part: registered, unreleased entries (finished ones among them) and released ones ready for reuse. */
    private static final class Stripe {
        Entry[] writes = new Entry[4];
        int count;
        Entry[] free = new Entry[4];
        int spare;
    }

    private final Stripe[] stripes = new Stripe[STRIPES];

    {
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new Stripe();
        }
    }

    /**
     * The last ticket handed out. Taken (incremented) inside the part's monitor in the same step
     * that enters the entry there, so whoever reads a ticket here and then looks at a part finds
     * every entry with a ticket up to it that is still registered.
     */
    private final java.util.concurrent.atomic.AtomicLong tickets = new java.util.concurrent.atomic.AtomicLong();
    /** The first data write that failed, by ticket (Long.MAX_VALUE: none); under this object's monitor. */
    private Throwable failed;
    private long failedTicket = Long.MAX_VALUE;

    private static int stripeOfThread() {
        long id = Thread.currentThread().getId();
        return (int) (id ^ (id >>> 4)) & (STRIPES - 1);
    }

    /** An entry for a new write, its pieces empty; register it once they are filled in. */
    Entry take(Body body) {
        int k = stripeOfThread();
        Stripe st = stripes[k];
        Entry e = null;
        synchronized (st) {
            if (st.spare > 0) {
                e = st.free[--st.spare];
                st.free[st.spare] = null;
            }
        }
        if (e == null) {
            e = new Entry();
            e.stripe = k;
        }
        e.body = body;
        e.pieces = 0;
        return e;
    }

    /** Registers {@code e}, touching slots {@code [firstSlot, lastSlot]} (under the state lock or the gate's read lock). */
    void register(Entry e, int firstSlot, int lastSlot) {
        Stripe st = stripes[e.stripe];
        synchronized (st) {
            if (st.count == st.writes.length) {
                st.writes = Arrays.copyOf(st.writes, st.count * 2);
            }
            synchronized (e) {
                e.ticket = tickets.incrementAndGet();
                e.state = NEW;
                e.orphan = false;
                e.failure = null;
                e.firstSlot = firstSlot;
                e.lastSlot = lastSlot;
            }
            e.at = st.count;
            e.registered = true;
            st.writes[st.count++] = e;
        }
    }

    /**
     * Gives back an entry its writer took. One not finished yet (its writer's wait was
     * interrupted, or it failed before waiting) stays registered — a commit still waits for it or
     * runs it — and whoever finishes it gives it back.
     */
    void release(Entry e) {
        synchronized (e) {
            if (e.state != DONE) {
                e.orphan = true;
                return;
            }
        }
        recycle(e);
    }

    private void recycle(Entry e) {
        Stripe st = stripes[e.stripe];
        synchronized (st) {
            if (e.registered) {
                // O(1): the last entry moves into its place
                Entry last = st.writes[--st.count];
                st.writes[e.at] = last;
                last.at = e.at;
                st.writes[st.count] = null;
                e.registered = false;
            }
            e.data = null;
            e.body = null;
            if (st.spare == st.free.length) {
                st.free = Arrays.copyOf(st.free, st.spare * 2);
            }
            st.free[st.spare++] = e;
        }
    }

    /** The ticket of the last write registered: {@link #awaitUpTo} it waits for all registered so far. */
    long lastTicket() {
        return tickets.get();
    }

    /**
     * Runs (if nobody has) and waits for every write registered up to {@code ticket}, and fails
     * if any of them failed — also one whose writer has given its entry back (a commit must not
     * name slots whose data write failed).
     */
    void awaitUpTo(long ticket) throws IOException {
        awaitOverlapping(Integer.MIN_VALUE, Integer.MAX_VALUE, ticket);
        Throwable f;
        synchronized (this) {
            f = failedTicket <= ticket ? failed : null;
        }
        if (f != null) {
            rethrow(f);
        }
    }

    /** Runs (if nobody has) and waits for every write up to {@code ticket} touching slots {@code [from, to]}. */
    void awaitOverlapping(int from, int to, long ticket) throws IOException {
        for (Stripe st : stripes) {
            while (true) {
                Entry e = null;
                long t = 0;
                synchronized (st) {
                    for (int i = 0; i < st.count; i++) {
                        Entry w = st.writes[i];
                        synchronized (w) {
                            if (w.state != DONE && w.ticket <= ticket && w.firstSlot <= to && from <= w.lastSlot) {
                                e = w;
                                t = w.ticket;
                                break;
                            }
                        }
                    }
                }
                if (e == null) {
                    break;
                }
                awaitOne(e, t);
            }
        }
    }

    /** Runs (if nobody has) and waits for {@code e}'s write (its writer's own wait); its failure is rethrown as it was. */
    void await(Entry e) throws IOException {
        // the writer's own entry: only its writer registers it again, so its ticket needs no monitor here
        awaitOne(e, e.ticket);
    }

    /** As {@link #await(Entry)} for the write {@code e} had as {@code ticket} (done if it has moved on since). */
    void await(Entry e, long ticket) throws IOException {
        awaitOne(e, ticket);
    }

    private void awaitOne(Entry e, long t) throws IOException {
        boolean mine;
        synchronized (e) {
            mine = e.ticket == t && e.state == NEW;
            if (mine) {
                e.state = RUNNING;
            }
        }
        if (mine) {
            Throwable f = null;
            try {
                e.body.run(e);
            } catch (IOException | RuntimeException | Error x) {
                f = x;
                synchronized (this) {
                    if (t < failedTicket) {
                        failedTicket = t;
                        failed = x;
                    }
                }
            }
            boolean orphan;
            synchronized (e) {
                e.failure = f;
                e.state = DONE;
                orphan = e.orphan;
                e.notifyAll();
            }
            if (orphan) {
                recycle(e);
                return;
            }
            if (f != null) {
                rethrow(f);
            }
            return; // this thread ran it to the end: nothing to wait for
        }
        Throwable f;
        synchronized (e) {
            while (e.ticket == t && e.state != DONE) {
                try {
                    e.wait();
                } catch (InterruptedException x) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("interrupted while waiting for a cache write");
                }
            }
            f = e.ticket == t ? e.failure : null;
        }
        if (f != null) {
            rethrow(f);
        }
    }

    private static void rethrow(Throwable f) throws IOException {
        if (f instanceof IOException io) {
            throw io;
        }
        if (f instanceof RuntimeException re) {
            throw re;
        }
        if (f instanceof Error er) {
            throw er;
        }
        throw new IOException(f);
    }
}
