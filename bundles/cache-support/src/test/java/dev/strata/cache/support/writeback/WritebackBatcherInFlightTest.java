package dev.strata.cache.support.writeback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
        final List<Long> started = new ArrayList<>();
        final Set<Long> done = new HashSet<>();

        @Override
        public void write(long offset, ByteBuffer src) throws IOException {
            int c = now.incrementAndGet();
            max.accumulateAndGet(c, Math::max);
            synchronized (this) {
                started.add(offset);
            }
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

    @Test
    void runsGoInBackingOrderSeveralAtATimeAndAllEndBeforeReturn() throws Exception {
        try (WritebackBatcher wb = new WritebackBatcher(BS, 256, true, N)) {
            Gate g = new Gate();
            assertEquals(10, wb.write(10, BLOCKS, full(10), ByteBuffer.allocate(10 * BS), g));
            assertEquals(N, g.max.get());
            assertEquals(10, g.done.size(), "write returned before every run ended");
            // the fifth run waits for a free slot: the first N started are the N lowest offsets
            Set<Long> first = new HashSet<>(g.started.subList(0, N));
            assertEquals(Set.of(0L, 10L * BS, 20L * BS, 30L * BS), first);
            // run j is handed over only once run j - N has freed its slot, so it starts later
            assertEquals(10, new HashSet<>(g.started).size());
            for (int j = N; j < 10; j++) {
                assertTrue(g.started.indexOf(10L * BS * j) > g.started.indexOf(10L * BS * (j - N)),
                        "run " + j + " started before run " + (j - N) + ": " + g.started);
            }
        }
    }

    @Test
    void firstErrorIsThrownAndStopsFurtherRuns() throws Exception {
        try (WritebackBatcher wb = new WritebackBatcher(BS, 256, true, N)) {
            IOException boom = new IOException("backing failed");
            AtomicInteger calls = new AtomicInteger();
            CountDownLatch failed = new CountDownLatch(1);
            WritebackBatcher.Backing b = (offset, src) -> {
                calls.incrementAndGet();
                if (offset == 0) {
                    failed.countDown();
                    throw boom;
                }
                // the others wait for the failure, so no slot frees before it is recorded
                try {
                    failed.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    throw new IOException(e);
                }
            };
            IOException e = assertThrows(IOException.class,
                    () -> wb.write(10, BLOCKS, full(10), ByteBuffer.allocate(10 * BS), b));
            assertSame(boom, e);
            assertTrue(calls.get() <= N, "runs were submitted after the failure: " + calls.get());
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
