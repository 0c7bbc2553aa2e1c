package dev.strata.cache.writecache.internal.io;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;

/**
 * The data writes to cache slots that are registered but not finished. A write registers its
 * data write under the state lock, in the same step that points the index at the slots; a commit
 * snapshots the registry there and waits for every write in it before flushing the cache device
 * (the 2020 dm-writecache fix: metadata may name slots whose data is still on its way).
 *
 * <p>Each data write is a {@link FutureTask}: whoever waits for it first runs it if nobody has
 * started it yet ({@link FutureTask#run} does nothing for a task already started), so a writer,
 * a commit or a reader that needs the slot never waits for a thread that is not coming.
 *
 * <p>The registry is a small array under this object's own monitor (held only for a register or
 * a look at the registry, never for I/O, and nested inside the state lock at most): a finished
 * write is not taken out — deregistration needs no lock, so waiting for a write never deadlocks
 * with either lock — but skipped, and dropped when the array fills up or the registry is
 * looked at. A concurrent skip list with an entry put and removed per request cost a tenth of
 * a 512-byte write's CPU time in the seed table's profile.
 */
final class InFlight {
    /** A registered data write touching slots {@code [firstSlot, lastSlot]} (one or more runs in that span). */
    record Write(long ticket, FutureTask<Void> task, int firstSlot, int lastSlot) {
        boolean overlaps(int from, int to) {
            return firstSlot <= to && from <= lastSlot;
        }
    }

    /** Registered writes, finished ones among them until {@link #compact}: {@code [0, count)}. */
    private Write[] writes = new Write[64];
    private int count;
    private long tickets;

    /** Registers {@code body}, touching slots {@code [firstSlot, lastSlot]}; it counts as deregistered once done. */
    Write register(IoBody body, int firstSlot, int lastSlot) {
        FutureTask<Void> task = new FutureTask<>(() -> {
            body.run();
            return null;
        });
        synchronized (this) {
            if (count == writes.length) {
                compact();
                if (count > writes.length / 2) {
                    writes = Arrays.copyOf(writes, writes.length * 2);
                }
            }
            Write w = new Write(++tickets, task, firstSlot, lastSlot);
            writes[count++] = w;
            return w;
        }
    }

    /** Drops the finished writes. */
    private void compact() {
        int k = 0;
        for (int i = 0; i < count; i++) {
            if (!writes[i].task().isDone()) {
                writes[k++] = writes[i];
            }
        }
        Arrays.fill(writes, k, count, null);
        count = k;
    }

    /** Everything registered and not finished now (the commit's snapshot). */
    synchronized List<Write> snapshot() {
        compact();
        return new ArrayList<>(Arrays.asList(writes).subList(0, count));
    }

    /** The registered, unfinished writes touching slots {@code [from, to]}. */
    synchronized List<Write> overlapping(int from, int to) {
        List<Write> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Write w = writes[i];
            if (w.overlaps(from, to) && !w.task().isDone()) {
                out.add(w);
            }
        }
        return out;
    }

    synchronized boolean isEmpty() {
        compact();
        return count == 0;
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
