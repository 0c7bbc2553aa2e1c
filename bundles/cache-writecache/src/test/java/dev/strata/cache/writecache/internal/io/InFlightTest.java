package dev.strata.cache.writecache.internal.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The in-flight registry's rules with reused entries: whoever waits first runs a write nobody has
 * started (once), a wait up to a ticket leaves later writes alone, a write's failure reaches a
 * commit even after its writer gave the entry back, and an entry given back unfinished stays
 * registered until it is done.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class InFlightTest {
    final InFlight inFlight = new InFlight();
    final List<String> ran = new ArrayList<>();

    InFlight.Body recording(String name) {
        return e -> {
            synchronized (ran) {
                ran.add(name + "@" + Thread.currentThread().getName());
            }
        };
    }

    @Test
    void aReaderRunsAWriteNobodyStartedAndTheWriterDoesNotRunItAgain() throws Exception {
        InFlight.Entry e = inFlight.take(recording("w"));
        inFlight.register(e, 10, 12);
        inFlight.awaitOverlapping(0, 5, Long.MAX_VALUE); // other slots: not run
        assertEquals(List.of(), ran);
        String reader = Thread.currentThread().getName();
        inFlight.awaitOverlapping(12, 12, Long.MAX_VALUE);
        assertEquals(List.of("w@" + reader), ran);
        CompletableFuture.runAsync(() -> {
            try {
                inFlight.await(e);
            } catch (IOException x) {
                throw new IllegalStateException(x);
            }
        }).get(30, TimeUnit.SECONDS);
        inFlight.release(e);
        assertEquals(1, ran.size());
    }

    @Test
    void aCommitWaitsForWritesUpToItsTicketOnly() throws Exception {
        InFlight.Entry before = inFlight.take(recording("before"));
        inFlight.register(before, 1, 1);
        long upTo = inFlight.lastTicket();
        InFlight.Entry after = inFlight.take(recording("after"));
        inFlight.register(after, 1, 1);
        inFlight.awaitUpTo(upTo);
        assertEquals(1, ran.size());
        assertEquals("before", ran.get(0).split("@")[0]);
        inFlight.release(before);
        // the entry given back is reused with a new ticket: the old ticket's wait is over
        InFlight.Entry again = inFlight.take(recording("again"));
        assertSame(before, again);
        inFlight.register(again, 2, 2);
        inFlight.awaitUpTo(upTo);
        assertEquals(1, ran.size());
        inFlight.awaitUpTo(inFlight.lastTicket());
        assertEquals(3, ran.size());
    }

    @Test
    void aWaiterWaitsForAWriteAnotherThreadIsRunning() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        AtomicInteger runs = new AtomicInteger();
        InFlight.Entry e = inFlight.take(x -> {
            runs.incrementAndGet();
            started.countDown();
            try {
                go.await();
            } catch (InterruptedException ie) {
                throw new IOException(ie);
            }
        });
        inFlight.register(e, 0, 0);
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
            try {
                inFlight.await(e);
            } catch (IOException x) {
                throw new IllegalStateException(x);
            }
        });
        started.await();
        CompletableFuture<Void> commit = CompletableFuture.runAsync(() -> {
            try {
                inFlight.awaitUpTo(Long.MAX_VALUE);
            } catch (IOException x) {
                throw new IllegalStateException(x);
            }
        });
        go.countDown();
        commit.get(30, TimeUnit.SECONDS);
        writer.get(30, TimeUnit.SECONDS);
        assertEquals(1, runs.get());
    }

    @Test
    void aFailureReachesACommitAfterTheWriterGaveTheEntryBack() throws Exception {
        IOException boom = new IOException("cache device gone");
        InFlight.Entry fine = inFlight.take(recording("fine"));
        inFlight.register(fine, 2, 2);
        long beforeFailure = inFlight.lastTicket();
        InFlight.Entry e = inFlight.take(x -> {
            throw boom;
        });
        inFlight.register(e, 3, 3);
        assertSame(boom, assertThrows(IOException.class, () -> inFlight.await(e)));
        inFlight.release(e);
        assertSame(boom, assertThrows(IOException.class, () -> inFlight.awaitUpTo(Long.MAX_VALUE)));
        inFlight.awaitUpTo(beforeFailure); // a commit from before the failed write is not failed by it
        assertEquals(1, ran.size());
        // a later reader of other slots is not failed by it either (the failure latch does that)
        inFlight.awaitOverlapping(0, 2, Long.MAX_VALUE);
    }

    @Test
    void anEntryGivenBackUnfinishedStaysRegisteredUntilACommitRunsIt() throws Exception {
        InFlight.Entry e = inFlight.take(recording("orphan"));
        inFlight.register(e, 4, 4);
        inFlight.release(e); // its writer failed before waiting
        InFlight.Entry other = inFlight.take(recording("other"));
        assertEquals(false, other == e, "an unfinished entry must not be reused");
        inFlight.release(other);
        inFlight.awaitUpTo(inFlight.lastTicket());
        assertEquals(1, ran.size());
        // once done it is given back for reuse
        InFlight.Entry next = inFlight.take(recording("next"));
        InFlight.Entry next2 = inFlight.take(recording("next2"));
        assertEquals(true, next == e || next2 == e);
    }

    /**
     * The registry is in parts by thread: a commit's wait up to a ticket must find the writes
     * every thread registered up to it (each in its own part), run those nobody started, and
     * leave alone one registered after the ticket, whatever part it is in.
     */
    @Test
    void aWaitUpToATicketFindsWritesRegisteredByEveryThread() throws Exception {
        int threads = 3 * InFlight.STRIPES;
        List<InFlight.Entry> entries = new ArrayList<>();
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            int me = i;
            Thread t = new Thread(() -> {
                InFlight.Entry e = inFlight.take(recording("t" + me));
                inFlight.register(e, me, me);
                synchronized (entries) {
                    entries.add(e);
                }
            }, "registrar-" + i);
            ts.add(t);
            t.start();
        }
        for (Thread t : ts) {
            t.join(30_000);
        }
        assertEquals(threads, entries.size());
        long upTo = inFlight.lastTicket();
        InFlight.Entry later = CompletableFuture.supplyAsync(() -> {
            InFlight.Entry e = inFlight.take(recording("later"));
            inFlight.register(e, 0, 0);
            return e;
        }).get(30, TimeUnit.SECONDS);
        inFlight.awaitUpTo(upTo);
        assertEquals(threads, ran.size(), "every write up to the ticket ran once: " + ran);
        assertEquals(0, ran.stream().filter(r -> r.startsWith("later@")).count());
        for (InFlight.Entry e : entries) {
            inFlight.release(e);
        }
        inFlight.awaitOverlapping(0, 0, Long.MAX_VALUE);
        assertEquals(threads + 1, ran.size());
        inFlight.release(later);
    }
}
