package dev.strata.cache.writeboost.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.cache.writeboost.internal.testing.MemDevice;
import dev.strata.testsupport.target.ForwardingBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Read caching ({@code read_cache_threshold}): what is cached, and that nothing stale ever is. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReadCacheTest {
    static final int MIB = 1 << 20;
    static final int BS = 4096;
    final MemDevice backingMem = new MemDevice("backing", 16L * MIB);
    final PausingDevice backing = new PausingDevice(backingMem);
    final MemDevice cacheDev = new MemDevice("cache", 17L * MIB);
    /** The backing device's contents as every acknowledged write left them. */
    final byte[] model = new byte[(int) backingMem.size()];
    WriteboostCache wb;

    ReadCacheTest() throws IOException {
        new Random(42).nextBytes(model);
        backingMem.write(0, ByteBuffer.wrap(model), 0);
        backingMem.flush();
    }

    @AfterEach
    void close() throws IOException {
        backing.release();
        if (wb != null) {
            wb.close();
            assertTrue(wb.runningDaemons().isEmpty(), "no daemon survives close: " + wb.runningDaemons());
        }
    }

    static Tunables readCaching(int threshold) {
        return Tunables.DEFAULTS.with(Tunables.READ_CACHE_THRESHOLD, Integer.toString(threshold))
                .with(Tunables.BYPASS_THRESHOLD, "8k").with(Tunables.SEQUENTIAL_CUTOFF, "0")
                .with(Tunables.IO_TIMEOUT, "20000");
    }

    WriteboostCache open(Tunables t) throws IOException {
        return WriteboostCache.open("wb", backing, cacheDev, false, t, WriteboostCache.Options.defaults().manual(), null);
    }

    long stat(String key) {
        return Long.parseLong(wb.status().get(key));
    }

    byte[] read(long block, int blocks) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(blocks * BS);
        wb.read(block * BS, b);
        return b.array();
    }

    byte[] expected(long block, int blocks) {
        return Arrays.copyOfRange(model, (int) block * BS, (int) (block + blocks) * BS);
    }

    void write(long offset, byte[] data) throws IOException {
        wb.write(offset, ByteBuffer.wrap(data), 0);
        System.arraycopy(data, 0, model, (int) offset, data.length);
    }

    void injectAll() throws IOException {
        for (int i = 0; i < 1000 && wb.injectorRunOnce(); i++) {
            // until nothing is staged
        }
    }

    /** Fills the log with writes to {@code [8, 12) MiB} (tests use blocks below 8 MiB) until every segment was reused. */
    void cycleTheLog(Random r) throws IOException {
        for (int i = 0; i < 20 * 255; i++) {
            byte[] d = new byte[BS];
            r.nextBytes(d);
            write(8L * MIB + (long) (i % 1024) * BS, d);
            if (i % 200 == 199) {
                wb.writebackAll();
            }
        }
        wb.writebackAll();
    }

    @Test
    void smallMissesBecomeHitsOnTheSecondRead() throws IOException {
        wb = open(readCaching(4));
        long[] blocks = {7, 100, 333, 1000, 1597, 2000};
        for (long b : blocks) {
            assertArrayEquals(expected(b, 1), read(b, 1));
        }
        assertEquals(blocks.length, stat("read_misses"));
        assertEquals(blocks.length, stat("read_cache_staged"));
        assertEquals(0, stat("read_hits"), "staged, not yet injected");
        injectAll();
        assertEquals(blocks.length, stat("read_cache_injected"));
        assertEquals(blocks.length, stat("cached_blocks"));
        assertEquals(0, stat("dirty_blocks"), "injected blocks are clean");
        for (long b : blocks) {
            assertArrayEquals(expected(b, 1), read(b, 1));
        }
        assertEquals(blocks.length, stat("read_hits"));
        // and once the record is on the cache device, from there
        wb.flush();
        for (long b : blocks) {
            assertArrayEquals(expected(b, 1), read(b, 1));
        }
        assertEquals(2L * blocks.length, stat("read_hits"));
        assertEquals(blocks.length, stat("read_misses"));
    }

    @Test
    void thresholdZeroCachesNothing() throws IOException {
        wb = open(readCaching(0));
        for (long b = 0; b < 64; b += 3) {
            assertArrayEquals(expected(b, 1), read(b, 1));
        }
        assertFalse(wb.injectorRunOnce());
        for (long b = 0; b < 64; b += 3) {
            assertArrayEquals(expected(b, 1), read(b, 1));
        }
        assertEquals(0, stat("read_hits"));
        assertEquals(0, stat("read_cache_staged"));
        assertEquals(0, stat("cached_blocks"));
    }

    @Test
    void sequentialRunsLongerThanTheThresholdAreNotCached() throws IOException {
        wb = open(readCaching(4));
        // a scan of 32 blocks, 4 KiB at a time: its first 4 blocks are a run of at most 4
        for (long b = 1000; b < 1032; b++) {
            assertArrayEquals(expected(b, 1), read(b, 1));
        }
        assertEquals(4, stat("read_cache_staged"));
        assertEquals(28, stat("read_cache_sequential"));
        // one request longer than the threshold is a run of its own length
        assertArrayEquals(expected(1200, 16), read(1200, 16));
        assertEquals(4, stat("read_cache_staged"));
        // a request of exactly the threshold elsewhere is cached
        assertArrayEquals(expected(1400, 4), read(1400, 4));
        assertEquals(8, stat("read_cache_staged"));
        // partial blocks are never staged
        ByteBuffer part = ByteBuffer.allocate(1024);
        wb.read(1600L * BS + 512, part);
        assertEquals(8, stat("read_cache_staged"));
        injectAll();
        long hits = stat("read_hits");
        assertArrayEquals(expected(1000, 4), read(1000, 4));
        assertArrayEquals(expected(1400, 4), read(1400, 4));
        assertEquals(hits + 8, stat("read_hits"));
        assertArrayEquals(expected(1004, 4), read(1004, 4));
        assertArrayEquals(expected(1200, 16), read(1200, 16));
        assertEquals(hits + 8, stat("read_hits"), "blocks of long runs were not cached");
    }

    @Test
    void writeAroundStopsReadCaching() throws IOException {
        wb = open(readCaching(8));
        read(10, 1);
        wb.message(Tunables.WRITE_AROUND, "true");
        read(20, 1);
        injectAll();
        assertEquals(1, stat("read_cache_staged"));
        assertEquals(0, stat("read_cache_injected"), "a draining cache takes nothing new");
        assertEquals(1, stat("read_cache_dropped"));
        assertEquals(0, stat("cached_blocks"));
    }

    @Test
    void enablingAtRunTimeWorks() throws IOException {
        wb = open(readCaching(0));
        read(10, 1);
        wb.message(Tunables.READ_CACHE_THRESHOLD, "1");
        read(20, 1);
        injectAll();
        assertEquals(1, stat("read_cache_injected"));
        long hits = stat("read_hits");
        assertArrayEquals(expected(20, 1), read(20, 1));
        assertEquals(hits + 1, stat("read_hits"));
    }

    /** The ways a block can change under a staged copy of it. */
    enum Change {
        CACHED, SUB_BLOCK, BYPASS, ZEROES, DISCARD;

        void apply(ReadCacheTest t, long block) throws IOException {
            Random r = new Random(block * 31 + ordinal());
            switch (this) {
                case CACHED -> {
                    byte[] d = new byte[BS];
                    r.nextBytes(d);
                    t.write(block * BS, d);
                }
                case SUB_BLOCK -> {
                    byte[] d = new byte[512];
                    r.nextBytes(d);
                    t.write(block * BS + 3 * 512, d);
                }
                case BYPASS -> {
                    byte[] d = new byte[2 * BS]; // bypass_threshold=8k
                    r.nextBytes(d);
                    t.write(block * BS, d);
                }
                case ZEROES -> {
                    long from = (block & ~15L) * BS; // 64 KiB and more bypass
                    t.wb.writeZeroes(from, 16 * BS, 0);
                    Arrays.fill(t.model, (int) from, (int) from + 16 * BS, (byte) 0);
                }
                case DISCARD -> t.wb.discard(block * BS, BS); // MemDevice keeps the data
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Change.class)
    void aChangeBetweenStagingAndInjectionVoidsTheStagedCopy(Change change) throws IOException {
        wb = open(readCaching(8));
        long b = 777;
        assertArrayEquals(expected(b, 1), read(b, 1));
        assertEquals(1, stat("read_cache_staged"));
        change.apply(this, b);
        injectAll();
        assertArrayEquals(expected(b, 1), read(b, 1));
        assertEquals(0, stat("read_cache_injected"));
        assertEquals(1, stat("read_cache_cancelled"));
        wb.writebackAll();
        assertArrayEquals(expected(b, 1), read(b, 1));
    }

    @ParameterizedTest
    @EnumSource(Change.class)
    void aChangeDuringTheBackingReadVoidsTheStagedCopy(Change change) throws Exception {
        wb = open(readCaching(8));
        long b = 1242;
        ExecutorService ex = Executors.newSingleThreadExecutor();
        try {
            backing.pauseAfterReading(b * BS);
            byte[] old = expected(b, 1);
            Future<byte[]> reader = ex.submit(() -> read(b, 1));
            assertTrue(backing.inRead.await(30, TimeUnit.SECONDS), "the reader reached the backing device");
            change.apply(this, b); // the reader holds the old data, not yet staged
            backing.release();
            assertArrayEquals(old, reader.get(30, TimeUnit.SECONDS), "the read ran before the change");
        } finally {
            ex.shutdownNow();
        }
        injectAll();
        assertArrayEquals(expected(b, 1), read(b, 1));
        assertEquals(0, stat("read_cache_injected"));
        assertEquals(1, stat("read_cache_cancelled"));
    }

    /**
     * The case the index alone cannot catch: the write is written back and its copy evicted
     * before the injector runs, so the block is a plain miss again, yet the staged copy is older.
     */
    @Test
    void aStagedCopyOlderThanAnEvictedWriteIsNotInjected() throws IOException {
        wb = open(readCaching(8));
        long b = 55;
        read(b, 1);
        byte[] d = new byte[BS];
        new Random(5).nextBytes(d);
        write(b * BS, d);
        long missesBefore = stat("read_misses");
        cycleTheLog(new Random(6));
        assertArrayEquals(d, read(b, 1), "written back");
        assertEquals(missesBefore + 1, stat("read_misses"), "its copy was evicted");
        // that read staged a fresh copy; the old one is still waiting
        assertEquals(2, stat("read_cache_staged"));
        injectAll();
        assertArrayEquals(d, read(b, 1));
        assertArrayEquals(d, read(b, 1));
        assertEquals(1, stat("read_cache_cancelled"));
        assertEquals(1, stat("read_cache_injected"));
    }

    @Test
    void injectedBlocksAreCleanAcrossARestartNeverWrittenBackAndEvictable() throws IOException {
        Random r = new Random(9);
        long[] blocks = new long[40];
        Set<Long> injectedOffsets = ConcurrentHashMap.newKeySet();
        for (int i = 0; i < blocks.length; i++) {
            blocks[i] = 10 + 47L * i;
            injectedOffsets.add(blocks[i] * BS);
        }
        List<Long> violations = new ArrayList<>();
        backingMem.failWrite = o -> {
            if (injectedOffsets.contains(o)) {
                synchronized (violations) {
                    violations.add(o);
                }
            }
            return false;
        };
        wb = open(readCaching(8));
        for (long b : blocks) {
            read(b, 1);
        }
        injectAll();
        assertEquals(blocks.length, stat("read_cache_injected"));
        byte[] d = new byte[BS];
        r.nextBytes(d);
        write(1900L * BS, d); // one dirty block
        wb.close();
        wb = open(readCaching(8));
        assertEquals(1, stat("dirty_blocks"), "the injected blocks came back clean");
        assertEquals(blocks.length + 1, stat("cached_blocks"));
        for (long b : blocks) {
            assertArrayEquals(expected(b, 1), read(b, 1));
        }
        assertEquals(blocks.length, stat("read_hits"));
        assertEquals(0, stat("read_misses"));
        long written = backingMem.bytesWritten.get();
        wb.writebackAll();
        assertEquals(written + BS, backingMem.bytesWritten.get(), "only the dirty block is written back");
        assertEquals(1, stat("written_back_blocks"));
        // eviction: the log goes round, the injected blocks leave without any writeback
        cycleTheLog(r);
        long misses = stat("read_misses");
        for (long b : blocks) {
            assertArrayEquals(expected(b, 1), read(b, 1));
        }
        assertEquals(misses + blocks.length, stat("read_misses"), "evicted");
        assertEquals(List.of(), violations, "no backing write ever touched an injected block");
        assertArrayEquals(model, backingMemImage(), "the backing device holds exactly what was written");
    }

    byte[] backingMemImage() throws IOException {
        wb.writebackAll();
        ByteBuffer all = ByteBuffer.allocate(model.length);
        backingMem.read(0, all);
        return all.array();
    }

    @Test
    void theInjectorIsADaemonStoppedOnSuspendAndClose() throws Exception {
        wb = WriteboostCache.open("wb", backing, cacheDev, false, readCaching(8), WriteboostCache.Options.defaults(),
                null);
        assertTrue(wb.runningDaemons().stream().anyMatch(n -> n.endsWith("-readcache")), wb.runningDaemons().toString());
        long b = 321;
        read(b, 1);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (stat("read_cache_injected") < 1) {
            assertTrue(System.nanoTime() < deadline, "the daemon injects the staged block");
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000); // polling a condition, not timing
        }
        long hits = stat("read_hits");
        assertArrayEquals(expected(b, 1), read(b, 1));
        assertEquals(hits + 1, stat("read_hits"));
        wb.suspend();
        assertTrue(wb.runningDaemons().isEmpty(), wb.runningDaemons().toString());
        wb.resume();
        assertTrue(wb.runningDaemons().stream().anyMatch(n -> n.endsWith("-readcache")));
    }

    /** Pauses a reader right after it has read a chosen offset from the backing device. */
    static final class PausingDevice extends ForwardingBlockDevice {
        volatile long pauseAt = -1;
        volatile CountDownLatch inRead = new CountDownLatch(1);
        volatile CountDownLatch proceed = new CountDownLatch(0);

        PausingDevice(BlockDevice lower) {
            super(lower);
        }

        void pauseAfterReading(long offset) {
            inRead = new CountDownLatch(1);
            proceed = new CountDownLatch(1);
            pauseAt = offset;
        }

        void release() {
            pauseAt = -1;
            proceed.countDown();
        }

        @Override
        public void read(long offset, ByteBuffer dst) throws IOException {
            int n = dst.remaining();
            super.read(offset, dst);
            long p = pauseAt;
            if (p >= offset && p < offset + n) {
                pauseAt = -1;
                inRead.countDown();
                try {
                    if (!proceed.await(30, TimeUnit.SECONDS)) {
                        throw new IOException("test: never released");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted");
                }
            }
        }
    }
}
