package dev.strata.mirror.internal.io;

import dev.strata.api.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs one request on several legs at once: the lowest leg on the calling thread, each other leg
 * on a helper thread of the calling thread's own (one per leg, started on first use, gone after a
 * minute idle). Work is handed over through a field and {@link LockSupport#unpark}, so a request
 * takes no lock and allocates nothing here but one buffer view per further leg (a leg advances
 * its buffer's position; two legs writing at once cannot share one). The cached thread pool this
 * replaces allocated a queue node, a {@code Future} and lists per request and handed the work
 * through a shared queue every caller contended on.
 *
 * <p>With {@link #callerRuns(boolean) callerRuns} the calling thread writes every leg itself, one
 * after the other, and no helper is involved ({@code write_fanout=caller}). A handoff costs a
 * wake-up and a copy from a buffer that is warm in another core's cache; where a leg's write is
 * CPU work (a page-cache copy) and every core is already busy with other requests, that buys no
 * parallelism and about 0.1 s of CPU per GiB written (docs/benchmarks.md, "Mirror over two
 * `file` legs"). Where a leg waits on a device, running the legs in parallel halves the latency.
 */
final class FanOut {
    enum Kind { WRITE, ZEROES, FLUSH }

    private static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(60);
    private static final int IDLE = 0;
    private static final int BUSY = 1;
    private static final int EXITED = 2;

    private final String name;
    private final Legs legs;
    private final ThreadLocal<Request> requests;
    /** Shared with the helpers, which hold nothing of the mirror while idle (see {@link Helper}). */
    private final Set<Helper> live = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile boolean callerRuns;

    FanOut(String name, Legs legs) {
        this.name = name;
        this.legs = legs;
        this.requests = ThreadLocal.withInitial(() -> new Request(legs.count()));
    }

    /**
     * The calling thread's request, to fill and pass to {@link #run}; its errors are valid after
     * it. {@code counted}: each leg counts the request in its load while its part runs.
     */
    Request request(Kind kind, long offset, long length, int flags, ByteBuffer src, boolean counted) {
        Request r = requests.get();
        r.legs = legs;
        r.counted = counted;
        r.kind = kind;
        r.offset = offset;
        r.length = length;
        r.flags = flags;
        r.src = src;
        return r;
    }

    /** Whether the calling thread writes every leg itself ({@code write_fanout=caller}). */
    void callerRuns(boolean b) {
        callerRuns = b;
    }

    boolean callerRuns() {
        return callerRuns;
    }

    /**
     * Runs {@code r} on every leg in {@code mask} in parallel (or one after the other on the calling
     * thread, with {@link #callerRuns(boolean)}); {@code r.errors[leg]} holds each
     * leg's failure. Returns only when every leg's part is done, whatever happened (a leg's I/O
     * under way must have a known outcome before the request is answered).
     */
    void run(Request r, int mask) {
        if (callerRuns) {
            runHere(r, mask);
            return;
        }
        int self = Integer.numberOfTrailingZeros(mask);
        int others = mask & ~(1 << self);
        // the views are taken before this thread's leg consumes the caller's buffer
        for (int leg = 0; leg < r.errors.length; leg++) {
            r.errors[leg] = null;
            r.views[leg] = r.src != null && (others & (1 << leg)) != 0 ? r.src.duplicate() : null;
        }
        if (r.counted) {
            legs.loadAll(mask, 1);
        }
        Throwable failure = null;
        int pending = mask; // legs neither handed to a helper nor run here yet
        try {
            for (int leg = 0; leg < r.errors.length; leg++) {
                if ((others & (1 << leg)) != 0) {
                    dispatch(r, leg);
                    pending &= ~(1 << leg);
                    r.started |= 1 << leg;
                }
            }
            if (mask != 0) {
                pending = 0;
                r.errors[self] = runLeg(r, self, r.src);
            }
        } catch (RuntimeException | Error t) {
            failure = t;
            if (r.counted) {
                legs.loadAll(pending, -1); // the parts that never ran
            }
        }
        boolean interrupted = false;
        for (int leg = 0; leg < r.errors.length; leg++) {
            if ((r.started & (1 << leg)) != 0) {
                interrupted |= r.helpers[leg].await();
                Throwable t = r.helpers[leg].takeFailure();
                failure = failure == null ? t : failure;
            }
            r.views[leg] = null;
        }
        r.started = 0;
        r.src = null;
        r.legs = null;
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (failure instanceof RuntimeException re) {
            throw re;
        } else if (failure instanceof Error e) {
            throw e;
        }
    }

    /** Every leg's part of {@code r} on the calling thread, in turn; a leg that throws does not stop the others. */
    private void runHere(Request r, int mask) {
        for (int leg = 0; leg < r.errors.length; leg++) {
            r.errors[leg] = null;
        }
        if (r.counted) {
            legs.loadAll(mask, 1);
        }
        int last = 31 - Integer.numberOfLeadingZeros(mask);
        Throwable failure = null;
        for (int m = mask; m != 0; m &= m - 1) {
            int leg = Integer.numberOfTrailingZeros(m);
            // the last leg consumes the caller's buffer; each earlier one a view taken before that
            ByteBuffer buf = r.src == null || leg == last ? r.src : r.src.duplicate();
            try {
                r.errors[leg] = runLeg(r, leg, buf);
            } catch (RuntimeException | Error t) {
                failure = failure == null ? t : failure;
            }
        }
        r.src = null;
        r.legs = null;
        if (failure instanceof RuntimeException re) {
            throw re;
        } else if (failure instanceof Error e) {
            throw e;
        }
    }

    /** Leg {@code leg}'s part of {@code r}; its load drops as soon as its own part is done. */
    private static IOException runLeg(Request r, int leg, ByteBuffer buf) {
        try {
            return r.apply(r.legs.device(leg), buf);
        } finally {
            if (r.counted) {
                r.legs.load(leg, -1);
            }
        }
    }

    /** Hands leg {@code leg} of {@code r} to this thread's helper for it, starting one if it has none. */
    private void dispatch(Request r, int leg) {
        Helper h = r.helpers[leg];
        if (h != null) {
            // the helper reads these only once it sees BUSY (the CAS publishes them)
            h.request = r;
            h.leg = leg;
            if (h.state.compareAndSet(IDLE, BUSY)) {
                LockSupport.unpark(h.thread);
                return;
            }
        }
        h = new Helper(Thread.currentThread(), live, closed);
        h.request = r;
        h.leg = leg;
        h.state.set(BUSY);
        r.helpers[leg] = h;
        live.add(h);
        Thread t = new Thread(h, "mirror-" + name + "-leg-" + legs.name(leg));
        t.setDaemon(true);
        h.thread = t;
        t.start();
    }

    /** Stops the idle helpers (and each busy one once its request is done). */
    void close() {
        closed.set(true);
        for (Helper h : live) {
            LockSupport.unpark(h.thread);
        }
    }

    /** One calling thread's request: what to do, and per leg its buffer view, helper and outcome. */
    static final class Request {
        /** The mirror's legs while a request runs, null between requests (nothing idle holds the mirror). */
        Legs legs;
        Kind kind;
        boolean counted;
        /** The legs handed to helpers by the running {@link #run}. */
        int started;
        long offset;
        long length;
        int flags;
        ByteBuffer src;
        final ByteBuffer[] views;
        final IOException[] errors;
        final Helper[] helpers;

        Request(int legs) {
            views = new ByteBuffer[legs];
            errors = new IOException[legs];
            helpers = new Helper[legs];
        }

        IOException apply(BlockDevice d, ByteBuffer buf) {
            try {
                switch (kind) {
                    case WRITE -> d.write(offset, buf, flags & BlockDevice.FUA);
                    case ZEROES -> d.writeZeroes(offset, length, flags);
                    case FLUSH -> d.flush();
                }
                return null;
            } catch (IOException e) {
                return e;
            }
        }
    }

    /**
     * A calling thread's helper for one leg. Static, and given the mirror only through the request
     * it runs: an idle helper lives on for a minute, and must not keep a mirror that was dropped
     * without {@code close} (a crash test makes hundreds) from being collected.
     */
    private static final class Helper implements Runnable {
        final Thread owner;
        final Set<Helper> live;
        final AtomicBoolean closed;
        final AtomicInteger state = new AtomicInteger(IDLE);
        volatile Thread thread;
        Request request;
        int leg;
        private Throwable failure;

        Helper(Thread owner, Set<Helper> live, AtomicBoolean closed) {
            this.owner = owner;
            this.live = live;
            this.closed = closed;
        }

        /** Waits until the work is done; returns whether the owner was interrupted meanwhile. */
        boolean await() {
            boolean interrupted = false;
            while (state.get() == BUSY) {
                LockSupport.park(this);
                interrupted |= Thread.interrupted();
            }
            return interrupted;
        }

        Throwable takeFailure() {
            Throwable t = failure;
            failure = null;
            return t;
        }

        @Override
        public void run() {
            try {
                long idleSince = System.nanoTime();
                while (true) {
                    if (state.get() == BUSY) {
                        Request r = request;
                        try {
                            r.errors[leg] = runLeg(r, leg, r.views[leg]);
                        } catch (RuntimeException | Error t) {
                            failure = t;
                        }
                        request = null;
                        state.set(IDLE);
                        LockSupport.unpark(owner);
                        idleSince = System.nanoTime();
                        continue;
                    }
                    if ((closed.get() || System.nanoTime() - idleSince >= IDLE_NANOS) && state.compareAndSet(IDLE, EXITED)) {
                        return;
                    }
                    LockSupport.parkNanos(this, IDLE_NANOS);
                }
            } finally {
                live.remove(this);
            }
        }
    }
}
