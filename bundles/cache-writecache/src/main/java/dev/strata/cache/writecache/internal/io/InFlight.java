package dev.strata.cache.writecache.internal.io;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The data writes to cache slots that are registered but not finished. A write registers its
 * data write under the state lock, in the same step that points the index at the slots; a commit
 * snapshots the registry there and waits for every write in it before flushing the cache device
 * (the 2020 dm-writecache fix: metadata may name slots whose data is still on its way).
 *
 * <p>Each data write is a {@link FutureTask}: whoever waits for it first runs it if nobody has
 * started it yet ({@link FutureTask#run} does nothing for a task already started), so a writer,
 * a commit or a reader that needs the slot never waits for a thread that is not coming.
 * Deregistration needs no lock, so waiting for a write never deadlocks with the state lock.
 */
final class InFlight {
    /** A registered data write touching slots {@code [firstSlot, lastSlot]} (one or more runs in that span). */
    record Write(long ticket, FutureTask<Void> task, int firstSlot, int lastSlot) {
        boolean overlaps(int from, int to) {
            return firstSlot <= to && from <= lastSlot;
        }
    }

    private final ConcurrentSkipListMap<Long, Write> writes = new ConcurrentSkipListMap<>();
    private final AtomicLong tickets = new AtomicLong();

    /** Registers {@code body}, touching slots {@code [firstSlot, lastSlot]}; it deregisters itself when done. */
    Write register(IoBody body, int firstSlot, int lastSlot) {
        long ticket = tickets.incrementAndGet();
        FutureTask<Void> task = new FutureTask<>(() -> {
            try {
                body.run();
            } finally {
                writes.remove(ticket);
            }
            return null;
        });
        Write w = new Write(ticket, task, firstSlot, lastSlot);
        writes.put(ticket, w);
        return w;
    }

    /** Everything registered now (the commit's snapshot). */
    List<Write> snapshot() {
        return new ArrayList<>(writes.values());
    }

    /** The registered writes touching slots {@code [from, to]}. */
    List<Write> overlapping(int from, int to) {
        List<Write> out = new ArrayList<>();
        for (Write w : writes.values()) {
            if (w.overlaps(from, to)) {
                out.add(w);
            }
        }
        return out;
    }

    boolean isEmpty() {
        return writes.isEmpty();
    }

    /** Runs (if nobody has) and waits for {@code w}; its failure is rethrown as it was. */
    static void await(Write w) throws IOException {
        w.task().run();
        try {
            w.task().get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for a cache write");
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof IOException io) {
                throw io;
            }
            if (c instanceof RuntimeException re) {
                throw re;
            }
            throw new IOException(c);
        }
    }

    static void awaitAll(List<Write> ws) throws IOException {
        for (Write w : ws) {
            await(w);
        }
    }

    /** A data write's body. */
    @FunctionalInterface
    interface IoBody {
        void run() throws IOException;
    }
}
