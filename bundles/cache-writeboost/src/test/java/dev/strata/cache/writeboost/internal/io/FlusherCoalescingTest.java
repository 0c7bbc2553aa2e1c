package dev.strata.cache.writeboost.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceIOException;
import dev.strata.cache.writeboost.internal.format.Layout;
import dev.strata.cache.writeboost.internal.testing.MemDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The flusher coalesces sealed records that are consecutive on the cache device into one write
 * (of at most half the log buffers): while one log write is held back by the device, the records
 * sealed meanwhile (the rest of a segment after a FLUSH-sealed partial record, then whole
 * segments) go out as few large writes, and what they wrote recovers exactly (headers chained,
 * data at the right places). A failed coalesced write fails the cache. (One flusher thread here:
 * what two writes in flight do is FlusherPipelineTest's.)
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FlusherCoalescingTest {
    static final int MIB = 1 << 20;
    static final int BS = 4096;

    /** A cache device that records log-area writes and holds the first one until released. */
    static final class HeldCache implements BlockDevice {
        final MemDevice d = new MemDevice("cache", 33L * MIB); // 32 segments
        final CountDownLatch firstLogWrite = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        /** Counted down when the second log write has reached the device (FlusherPipelineTest). */
        final CountDownLatch secondWritten = new CountDownLatch(1);
        /** Counted down by each log write after the first that has reached the device (FlusherPipelineTest). */
        final CountDownLatch twoMoreWritten = new CountDownLatch(2);
        final List<long[]> logWrites = new ArrayList<>();
        volatile boolean failLog;

        public long size() { return d.size(); }
        public int blockSize() { return d.blockSize(); }
        public void read(long o, ByteBuffer b) throws IOException { d.read(o, b); }
        public void write(long o, ByteBuffer b, int f) throws IOException {
            boolean first = false;
            if (o >= Layout.FIRST_SEGMENT_OFFSET) {
                synchronized (this) {
                    logWrites.add(new long[] {o, b.remaining()});
                    first = logWrites.size() == 1;
                }
                if (first) {
                    firstLogWrite.countDown();
                    try {
                        if (!release.await(60, TimeUnit.SECONDS)) {
                            throw new IOException("test: first log write never released");
                        }
                    } catch (InterruptedException e) {
                        throw new IOException(e);
                    }
                }
                if (failLog && !first) {
                    throw new DeviceIOException("cache", o, "injected log write error");
                }
            }
            d.write(o, b, f);
            if (o >= Layout.FIRST_SEGMENT_OFFSET) {
                synchronized (this) {
                    if (logWrites.size() >= 2) {
                        secondWritten.countDown();
                    }
                    if (!first) {
                        twoMoreWritten.countDown();
                    }
                }
            }
        }
        public void flush() throws IOException { d.flush(); }
        public void discard(long o, long l) throws IOException { d.discard(o, l); }
        public void writeZeroes(long o, long l, int f) throws IOException { d.writeZeroes(o, l, f); }
        public void close() { }

        synchronized List<long[]> writes() {
            return new ArrayList<>(logWrites);
        }
    }

    static final Tunables T = Tunables.DEFAULTS.with(Tunables.SEQUENTIAL_CUTOFF, "0").with(Tunables.IO_TIMEOUT, "60000");

    /** Distinct, non-adjacent blocks: block i of the test. */
    static long blockOf(int i) {
        return (i * 7919L) % 8192;
    }

    static byte[] content(int i) {
        byte[] b = new byte[BS];
        new Random(i).nextBytes(b);
        return b;
    }

    /**
     * Fills the log while the first log write (a FLUSH-sealed record of 5 blocks) is held: the
     * rest of that segment (one record) and two whole segments are sealed meanwhile. Returns the
     * number of blocks written.
     */
    static int fillWhileHeld(WriteboostCache wb, HeldCache cache, ExecutorService ex, List<Future<?>> flushes)
            throws Exception {
        int i = 0;
        for (; i < 5; i++) {
            wb.write(blockOf(i) * BS, ByteBuffer.wrap(content(i)), 0);
        }
        flushes.add(ex.submit(() -> {
            wb.flush(); // seals the 5-block record; waits for it to be written and flushed
            return null;
        }));
        assertTrue(cache.firstLogWrite.await(60, TimeUnit.SECONDS), "the flusher writes the first record");
        // the rest of segment 0 (header at block 6, 249 data blocks), then segments 1 and 2: all
        // fit in the other log buffers (at least 3), so none of these writes waits for the held one
        for (; i < 5 + 249 + 2 * 255; i++) {
            wb.write(blockOf(i) * BS, ByteBuffer.wrap(content(i)), 0);
        }
        return i;
    }

    @Test
    void recordsSealedDuringALogWriteGoOutAsOneWriteAndRecover() throws Exception {
        // 8 buffers: one write may cover 4 segments, so everything sealed meanwhile goes out at once
        List<long[]> w = fillHoldRecover(8);
        assertEquals(2, w.size(), "log writes: the held record, then everything sealed meanwhile as one");
        assertEquals((250L + 2 * 256) * BS, w.get(1)[1], "the rest of segment 0 and two whole segments in one write");
    }

    @Test
    void oneWriteCoversAtMostHalfTheBuffers() throws Exception {
        // 4 buffers: one write covers at most 2 MiB, so the writers can fill the other two meanwhile
        List<long[]> w = fillHoldRecover(4);
        assertEquals(3, w.size(), "log writes: the held record, then two coalesced writes");
        assertEquals((250L + 256) * BS, w.get(1)[1], "the rest of segment 0 and segment 1 (2 MiB from segment 0's start)");
        assertEquals(w.get(1)[0] + w.get(1)[1], w.get(2)[0], "the third write continues the second");
        assertEquals(256L * BS, w.get(2)[1], "segment 2");
    }

    /**
     * Holds the first log write while more is sealed, releases it, flushes, checks that the log
     * writes are back to back, and that everything recovers from the image a power cut leaves.
     */
    static List<long[]> fillHoldRecover(int buffers) throws Exception {
        HeldCache cache = new HeldCache();
        MemDevice backing = new MemDevice("backing", 64L * MIB);
        WriteboostCache wb = WriteboostCache.open("wb", backing, cache, false, T,
                WriteboostCache.Options.defaults().manual().withBuffers(buffers).withFlushers(1), null);
        ExecutorService ex = Executors.newSingleThreadExecutor();
        MemDevice image;
        List<long[]> w;
        int n;
        try {
            List<Future<?>> flushes = new ArrayList<>();
            n = fillWhileHeld(wb, cache, ex, flushes);
            cache.release.countDown();
            flushes.get(0).get(60, TimeUnit.SECONDS);
            wb.flush();
            w = cache.writes();
            assertEquals(6L * BS, w.get(0)[1], "the FLUSH-sealed record: header and 5 blocks");
            long total = 0;
            for (int i = 0; i < w.size(); i++) {
                if (i > 0) {
                    assertEquals(w.get(i - 1)[0] + w.get(i - 1)[1], w.get(i)[0], "log write " + i + " continues the previous one");
                }
                total += w.get(i)[1];
            }
            assertEquals(3L * 256 * BS, total, "segments 0, 1 and 2 written exactly once");
            image = cache.d.crash(new Random(1)); // everything was flushed: it must all survive
            wb.close();
        } finally {
            cache.release.countDown();
            ex.shutdownNow();
        }
        WriteboostCache re = WriteboostCache.open("wb", backing, image, false, T,
                WriteboostCache.Options.defaults().manual(), null);
        try {
            for (int i = 0; i < n; i++) {
                ByteBuffer b = ByteBuffer.allocate(BS);
                re.read(blockOf(i) * BS, b);
                assertArrayEquals(content(i), b.array(), "block " + i + " after recovery");
            }
        } finally {
            re.close();
        }
        return w;
    }

    @Test
    void aFailedCoalescedWriteFailsTheCacheAndNothingOfItIsAcknowledgedAsDurable() throws Exception {
        HeldCache cache = new HeldCache();
        MemDevice backing = new MemDevice("backing", 64L * MIB);
        WriteboostCache wb = WriteboostCache.open("wb", backing, cache, false, T,
                WriteboostCache.Options.defaults().manual().withFlushers(1), null);
        ExecutorService ex = Executors.newSingleThreadExecutor();
        try {
            List<Future<?>> flushes = new ArrayList<>();
            fillWhileHeld(wb, cache, ex, flushes);
            cache.failLog = true; // the coalesced write after the held one fails
            cache.release.countDown();
            try {
                // the held record itself was written; its flush may still fail if the cache failed
                // (on the next write) before the flush got to flush the device: both are fine
                flushes.get(0).get(60, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException acceptable) {
                assertTrue(acceptable.getCause() instanceof IOException, acceptable.toString());
            }
            assertThrows(IOException.class, wb::flush, "a flush covering the failed write fails");
            assertThrows(IOException.class, () -> wb.write(0, ByteBuffer.allocate(BS), 0), "the cache has failed");
            assertEquals(2, cache.writes().size(), "no log write after the failed one");
        } finally {
            cache.release.countDown();
            ex.shutdownNow();
            try {
                wb.close();
            } catch (IOException expected) {
                // closing a failed cache may report the failure again
            }
        }
    }
}
