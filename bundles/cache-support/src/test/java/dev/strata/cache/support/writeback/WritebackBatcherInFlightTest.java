package dev.strata.cache.support.writeback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

/** Several merged runs in flight: submitted in backing order, all awaited, first error wins. */
class WritebackBatcherInFlightTest {
    static final int BS = 4096;
    static final int N = 4;

    /** Ten isolated blocks (ten runs), given in reverse backing order. */
    static final long[] BLOCKS = {90, 80, 70, 60, 50, 40, 30, 20, 10, 0};

    static int[] full(int n) {
        int[] v = new int[n];
        java.util.Arrays.fill(v, 0xFF);
        return v;
    }

    /** Blocks every call until {@code N} are in flight at once, then lets all through. */
    static final class Gate implements WritebackBatcher.Backing {
        final CountDownLatch allIn = new CountDownLatch(N);
        final AtomicInteger now = new AtomicInteger();
        final AtomicInteger max = new AtomicInteger();
        final Set<Long> done = new HashSet<>();

        @Override
        public void write(long offset, ByteBuffer src) throws IOException {
            int c = now.incrementAndGet();
            max.accumulateAndGet(c, Math::max);
            allIn.countDown();
            try {
                if (!allIn.await(30, TimeUnit.SECONDS)) {
                    throw new IOException("fewer than " + N + " writes were ever in flight");
                }
            } catch (InterruptedException e) {
                throw new IOException(e);
            } finally {
                now.decrementAndGet();
            }
            assertEquals(BS, src.remaining());
            synchronized (this) {
                done.add(offset);
            }
        }
    }

    /**
     * Holds every write until the test releases it; records when each one starts. Only the test
     * thread releases, one write at a time, so at any moment exactly one slot can free and the
     * next write to start is the next run the batcher submitted: the order is proved without any
     * assumption about which pool thread runs first.
     */
    static final class Held implements WritebackBatcher.Backing {
        final BlockingQueue<Long> started = new LinkedBlockingQueue<>();
        final Map<Long, CountDownLatch> release = new ConcurrentHashMap<>();
        final AtomicInteger now = new AtomicInteger();
        final AtomicInteger max = new AtomicInteger();
        final Set<Long> done = ConcurrentHashMap.newKeySet();

        @Override
        public void write(long offset, ByteBuffer src) throws IOException {
            max.accumulateAndGet(now.incrementAndGet(), Math::max);
            CountDownLatch go = release.computeIfAbsent(offset, o -> new CountDownLatch(1));
            started.add(offset);
            try {
                if (!go.await(60, TimeUnit.SECONDS)) {
                    throw new IOException("write at " + offset + " was never released");
                }
            } catch (InterruptedException e) {
                throw new IOException(e);
            } finally {
                now.decrementAndGet();
            }
            assertEquals(BS, src.remaining());
            done.add(offset);
        }

        void let(long offset) {
            release.computeIfAbsent(offset, o -> new CountDownLatch(1)).countDown();
        }

        long nextStart() throws InterruptedException {
            Long o = started.poll(60, TimeUnit.SECONDS);
            assertNotNull(o, "no further write started");
            return o;
        }
    }

    static long run(int j) {
        return 10L * BS * j;
    }

    @Test
    void runsAreSubmittedInBackingOrderSeveralAtATimeAndAllEndBeforeReturn() throws Exception {
        ExecutorService caller = Executors.newSingleThreadExecutor();
        try (WritebackBatcher wb = new WritebackBatcher(BS, 256, true, N)) {
            Held h = new Held();
            Future<Integer> writes = caller.submit(() -> {
                int n = wb.write(10, BLOCKS, full(10), ByteBuffer.allocate(10 * BS), h);
                // what the caller's backing flush would cover: every run has ended
                assertEquals(10, h.done.size(), "write returned before every run ended");
                return n;
            });
            // N writes in flight at once, none released: the N lowest offsets, in any start order
            Set<Long> first = new HashSet<>();
            for (int i = 0; i < N; i++) {
                first.add(h.nextStart());
            }
            assertEquals(Set.of(run(0), run(1), run(2), run(3)), first);
            // release one held write at a time (the newest, then the oldest, alternating: which
            // slot frees does not matter); the one run that can start next is the next in order
            Deque<Long> held = new ArrayDeque<>(List.of(run(0), run(1), run(2), run(3)));
            for (int j = N; j < 10; j++) {
                h.let(j % 2 == 0 ? held.pollLast() : held.pollFirst());
                long next = h.nextStart();
                assertEquals(run(j), next, "run " + j + " was not the next one submitted");
                held.addLast(next);
                assertEquals(N, held.size());
            }
            assertTrue(h.started.isEmpty(), "a run started twice or out of turn: " + h.started);
            for (long o : held) {
                h.let(o);
            }
            assertEquals(10, writes.get(60, TimeUnit.SECONDS));
            assertEquals(N, h.max.get(), "never more (nor fewer) than " + N + " in flight at once");
            assertEquals(10, h.done.size());
        } finally {
            caller.shutdownNow();
        }
    }

    /** The same, repeated: a schedule-dependent failure would show up here. */
    @RepeatedTest(200)
    void submissionOrderHoldsEveryTime() throws Exception {
        runsAreSubmittedInBackingOrderSeveralAtATimeAndAllEndBeforeReturn();
    }

    @Test
    void firstErrorIsThrownAndStopsFurtherRuns() throws Exception {
        try (WritebackBatcher wb = new WritebackBatcher(BS, 256, true, N)) {
            IOException boom = new IOException("backing failed");
            AtomicInteger calls = new AtomicInteger();
            WritebackBatcher.Backing b = (offset, src) -> {
                calls.incrementAndGet();
                if (offset == 0) {
                    throw boom;
                }
                // the others end only once the batcher has recorded the failure, so no slot
                // frees before it (a latch counted down in the failing call would let them end
                // between the throw and the batcher recording it)
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (!wb.failed()) {
                    if (System.nanoTime() > deadline) {
                        throw new IOException("the failure was never recorded");
                    }
                    Thread.yield();
                }
            };
            IOException e = assertThrows(IOException.class,
                    () -> wb.write(10, BLOCKS, full(10), ByteBuffer.allocate(10 * BS), b));
            assertSame(boom, e);
            // at most the first N runs were handed over before run 0 failed (those still queued
            // then see the failure and skip); no slot freed before it was recorded, so none after
            assertTrue(calls.get() >= 1 && calls.get() <= N, "runs were submitted after the failure: " + calls.get());
            // the batcher is usable again afterwards
            Gate g = new Gate();
            assertEquals(10, wb.write(10, BLOCKS, full(10), ByteBuffer.allocate(10 * BS), g));
        }
    }

    /** Like writeboost's stop: the callback throws once asked to stop, and the batch ends. */
    @Test
    void abandonmentEndsTheBatchPromptly() throws Exception {
        try (WritebackBatcher wb = new WritebackBatcher(BS, 256, true, N)) {
            final class Abandoned extends IOException {
            }
            AtomicInteger writes = new AtomicInteger();
            long[] blocks = new long[1000];
            for (int i = 0; i < blocks.length; i++) {
                blocks[i] = 2L * i;
            }
            WritebackBatcher.Backing b = (offset, src) -> {
                if (writes.incrementAndGet() > 5) {
                    throw new Abandoned();
                }
            };
            assertThrows(Abandoned.class,
                    () -> wb.write(1000, blocks, full(1000), ByteBuffer.allocate(1000 * BS), b));
            assertTrue(writes.get() < 5 + 2 * N, "kept submitting after the stop: " + writes.get());
        }
    }

    @Test
    void partialBlocksGoThroughThePoolToo() throws Exception {
        try (WritebackBatcher wb = new WritebackBatcher(BS, 256, true, N)) {
            Gate g = new Gate();
            // two blocks with two sector runs each: four writes, all in flight together
            assertEquals(4, wb.write(2, new long[] {5, 1}, new int[] {0b1001, 0b0110_0001}, ByteBuffer.allocate(2 * BS),
                    (offset, src) -> {
                        ByteBuffer one = ByteBuffer.allocate(BS);
                        g.write(offset, one);
                    }));
            assertEquals(N, g.max.get());
        }
    }
}
