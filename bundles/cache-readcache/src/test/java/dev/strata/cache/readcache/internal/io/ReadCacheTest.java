package dev.strata.cache.readcache.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.cache.readcache.internal.format.Layout;
import dev.strata.testsupport.crash.CrashableDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ReadCacheTest {
    static final int BS = 4096;

    static Opener.Options lru() {
        return Opener.withTunables(Opener.withPolicy(Opener.options(TestPolicies.all()), "lru"), 0, Map.of());
    }

    static byte[] pattern(long block, int version) {
        byte[] b = new byte[BS];
        Arrays.fill(b, (byte) (block * 31 + version * 7 + 1));
        return b;
    }

    static void write(BlockDevice d, long block, int version) throws IOException {
        d.write(block * BS, ByteBuffer.wrap(pattern(block, version)), 0);
    }

    static byte[] read(BlockDevice d, long block) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(BS);
        d.read(block * BS, b);
        return b.array();
    }

    static long stat(ReadCache rc, String key) {
        return Long.parseLong(rc.status().get(key));
    }

    /** No latency is shown before the first request of its kind (cache:stats printed "no reads yet, … p99 read 0 µs"). */
    @Test
    void latenciesAppearWithTheFirstRequestOfTheirKind() throws IOException {
        CrashableDevice origin = new CrashableDevice("origin", 1 << 20, BS);
        CrashableDevice cacheDev = new CrashableDevice("cache", 8192 + 64 * BS, BS);
        try (ReadCache rc = Opener.open("rc", origin, cacheDev, lru())) {
            Map<String, String> st = rc.status();
            for (String k : new String[] {"read_latency_us_p50", "read_latency_us_p99", "write_latency_us_p99"}) {
                assertFalse(st.containsKey(k), k + " in " + st);
            }
            read(rc, 1);
            st = rc.status();
            assertTrue(st.containsKey("read_latency_us_p99"), st.toString());
            assertFalse(st.containsKey("write_latency_us_p99"), st.toString());
            write(rc, 2, 1);
            assertTrue(rc.status().containsKey("write_latency_us_p99"));
        }
    }

    @Test
    void hitsAfterPromotionAndWarmAfterCleanRestartFromMetadataOnly() throws IOException {
        CrashableDevice origin = new CrashableDevice("origin", 1 << 20, BS);
        CrashableDevice cacheDev = new CrashableDevice("cache", 8192 + 64 * BS, BS);
        ReadCache rc = Opener.open("rc", origin, cacheDev, lru());
        for (int b = 0; b < 10; b++) {
            write(rc, b, 1);
        }
        rc.flush();
        for (int pass = 0; pass < 2; pass++) {
            for (int b = 0; b < 10; b++) {
                assertArrayEquals(pattern(b, 1), read(rc, b));
            }
        }
        assertEquals(10, stat(rc, "read_hits"));
        assertEquals(10, stat(rc, "promotions"));
        Map<String, String> st = rc.status();
        assertEquals("50.00", st.get("hit_ratio"));
        assertEquals("50.00", st.get("hit_ratio_1m"));
        for (String k : new String[] {"read_misses", "rejections", "evictions", "invalidations", "bypassed",
                "read_latency_us_p50", "read_latency_us_p99", "write_latency_us_p999", "policy.policy"}) {
            assertTrue(st.containsKey(k), k + " in " + st);
        }
        rc.close();
        Faulty o = new Faulty(origin);
        Faulty c = new Faulty(cacheDev);
        ReadCache again = Opener.open("rc", o, c, lru());
        assertEquals(10, stat(again, "recovered_blocks"));
        assertEquals(2, c.reads.get(), "start-up reads the superblock and the metadata, not data");
        for (int b = 0; b < 10; b++) {
            assertArrayEquals(pattern(b, 1), read(again, b));
        }
        assertEquals(10, stat(again, "read_hits"));
        assertEquals(0, o.reads.get());
        again.close();
    }

    @Test
    void writesInvalidateAndDiscardAndZeroesToo() throws IOException {
        ReadCache rc = Opener.open("rc", new CrashableDevice("o", 1 << 20, BS), new CrashableDevice("c", 8192 + 64 * BS, BS), lru());
        for (int b = 0; b < 3; b++) {
            write(rc, b, 1);
        }
        rc.flush();
        for (int b = 0; b < 3; b++) {
            read(rc, b);
        }
        write(rc, 0, 2);
        rc.writeZeroes(BS, BS, 0);
        rc.discard(2 * BS, BS);
        assertArrayEquals(pattern(0, 2), read(rc, 0));
        assertArrayEquals(new byte[BS], read(rc, 1));
        assertArrayEquals(new byte[BS], read(rc, 2)); // CrashableDevice discards to zeroes
        assertEquals(3, stat(rc, "invalidations"));
        assertEquals(0, stat(rc, "read_hits"));
        rc.close();
    }

    @Test
    void everyMetadataByteFlippedDropsItsEntryAndIsNeverServed() throws IOException {
        CrashableDevice origin = new CrashableDevice("origin", 1 << 20, BS);
        CrashableDevice cacheDev = new CrashableDevice("cache", 8192 + 20 * BS, BS);
        ReadCache rc = Opener.open("rc", origin, cacheDev, lru());
        for (int b = 0; b < 20; b++) {
            write(rc, b, 1);
        }
        rc.flush();
        for (int b = 0; b < 20; b++) {
            read(rc, b);
        }
        rc.close();
        byte[] image = cacheDev.durableImage();
        // the cached copies differ from the origin, so serving a wrongly kept entry would show
        for (int b = 0; b < 20; b++) {
            write(origin, b, 9);
        }
        origin.flush();
        for (int i = Layout.META_BLOCK; i < Layout.META_BLOCK + 20 * Layout.ENTRY; i++) {
            byte[] img = image.clone();
            img[i] ^= (byte) (1 << (i % 8));
            ReadCache r = Opener.open("rc", origin, CrashableDevice.ofImage("c", img, BS), lru());
            assertEquals(1, stat(r, "recovered_dropped"), "byte " + i);
            assertEquals(19, stat(r, "recovered_blocks"), "byte " + i);
            int slot = (i - Layout.META_BLOCK) / Layout.ENTRY;
            long lostBlock = slotBlock(image, slot);
            assertEquals(-1, r.state.slotOf(lostBlock), "byte " + i);
            r.close();
        }
    }

    private static long slotBlock(byte[] image, int slot) {
        return ByteBuffer.wrap(image).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong(Layout.META_BLOCK + slot * Layout.ENTRY) - 1;
    }

    @Test
    void cacheReadErrorsFallBackToTheOrigin() throws IOException {
        Faulty c = new Faulty(new CrashableDevice("c", 8192 + 64 * BS, BS));
        ReadCache rc = Opener.open("rc", new CrashableDevice("o", 1 << 20, BS), c, lru());
        for (int b = 0; b < 5; b++) {
            write(rc, b, 1);
        }
        rc.flush();
        for (int b = 0; b < 5; b++) {
            read(rc, b);
        }
        c.failReads = true;
        for (int b = 0; b < 5; b++) {
            assertArrayEquals(pattern(b, 1), read(rc, b));
        }
        assertEquals(5, stat(rc, "cache_read_errors"));
        rc.close();
    }

    @Test
    void cacheWriteErrorsDisablePromotion() throws IOException {
        Faulty c = new Faulty(new CrashableDevice("c", 8192 + 64 * BS, BS));
        ReadCache rc = Opener.open("rc", new CrashableDevice("o", 1 << 20, BS), c, lru());
        for (int b = 0; b < 5; b++) {
            write(rc, b, 1);
        }
        rc.flush();
        c.failWrites = true;
        assertArrayEquals(pattern(0, 1), read(rc, 0));
        assertEquals(1, stat(rc, "cache_write_errors"));
        assertTrue(rc.status().get("promotion").startsWith("disabled"), rc.status().get("promotion"));
        for (int b = 1; b < 5; b++) {
            assertArrayEquals(pattern(b, 1), read(rc, b));
        }
        assertEquals(1, stat(rc, "cache_write_errors"), "no promotion is tried once disabled");
        assertEquals(0, stat(rc, "promotions"));
        write(rc, 3, 2); // nothing cached to invalidate: the write goes on
        assertArrayEquals(pattern(3, 2), read(rc, 3));
        rc.close();
    }

    @Test
    void aPartlyReadBlockIsFilledWholeFromTheOriginAndServesItsNeighbours() throws IOException {
        int cbs = 4 * BS; // 16 KiB cache blocks under 4 KiB requests
        CrashableDevice origin = new CrashableDevice("o", 10 * BS, BS); // the last cache block is partial
        CrashableDevice cacheDev = new CrashableDevice("c", 1 << 20, BS);
        Opener.Options o = Opener.withBlockSize(lru(), cbs);
        ReadCache rc = Opener.open("rc", origin, cacheDev, o);
        for (int b = 0; b < 10; b++) {
            write(rc, b, 1);
        }
        rc.flush();
        assertArrayEquals(pattern(1, 1), read(rc, 1));
        assertEquals(1, stat(rc, "promotions"), "one 4 KiB miss promotes its whole 16 KiB block");
        for (int b : new int[] {0, 2, 3}) {
            assertArrayEquals(pattern(b, 1), read(rc, b), "block " + b);
        }
        assertEquals(3, stat(rc, "read_hits"));
        // a read across two cache blocks: the cached one's part from the cache, the other filled
        ByteBuffer two = ByteBuffer.allocate(2 * BS);
        rc.read(3L * BS, two);
        assertArrayEquals(pattern(3, 1), Arrays.copyOfRange(two.array(), 0, BS));
        assertArrayEquals(pattern(4, 1), Arrays.copyOfRange(two.array(), BS, 2 * BS));
        assertEquals(2, stat(rc, "promotions"));
        assertArrayEquals(pattern(7, 1), read(rc, 7));
        assertEquals(5, stat(rc, "read_hits"));
        // a write to one 4 KiB of a cached block invalidates the whole block: no stale neighbour
        write(rc, 2, 2);
        assertArrayEquals(pattern(2, 2), read(rc, 2));
        assertArrayEquals(pattern(0, 1), read(rc, 0));
        assertArrayEquals(pattern(3, 1), read(rc, 3));
        // the block past the origin's end (40 KiB of a 48 KiB cache block) is read, not promoted
        long before = stat(rc, "promotions");
        assertArrayEquals(pattern(9, 1), read(rc, 9));
        assertArrayEquals(pattern(8, 1), read(rc, 8));
        assertEquals(before, stat(rc, "promotions"));
        rc.close();
        // warm after a clean restart, from metadata: the filled neighbours too
        ReadCache again = Opener.open("rc", origin, CrashableDevice.ofImage("c", cacheDev.durableImage(), BS), o);
        assertArrayEquals(pattern(6, 1), read(again, 6));
        assertArrayEquals(pattern(1, 1), read(again, 1));
        assertEquals(2, stat(again, "read_hits"));
        assertEquals(0, stat(again, "read_misses"));
        again.close();
    }

    @Test
    void sequentialStreamsBypass() throws IOException {
        Opener.Options o = Opener.withTunables(Opener.withPolicy(Opener.options(TestPolicies.all()), "lru"), 64 << 10, Map.of());
        ReadCache rc = Opener.open("rc", new CrashableDevice("o", 4 << 20, BS), new CrashableDevice("c", 8192 + 512 * BS, BS), o);
        for (int b = 0; b < 256; b++) {
            read(rc, b);
        }
        assertEquals(16, stat(rc, "promotions"), "the first 64 KiB of the stream, then bypass");
        assertEquals(240, stat(rc, "bypassed"));
        rc.close();
    }

    @Test
    void aReadsPromotionsShareOneFlushAndOneMetadataWrite() throws IOException {
        Opener.Options o = Opener.withPolicy(Opener.options(TestPolicies.all()), "lru");
        CrashableDevice origin = new CrashableDevice("o", 4 << 20, BS);
        ReadCache rc = Opener.open("rc", origin, new CrashableDevice("c", 8192 + 512 * BS, BS), o);
        long flushes0 = stat(rc, "promotion_flushes");
        long meta0 = stat(rc, "metadata_writes");
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(16 * BS);
        rc.read(0, b);
        assertEquals(16, stat(rc, "promotions"));
        assertEquals(1, stat(rc, "promotion_flushes") - flushes0, "one cache flush for the read's 16 promotions");
        assertEquals(1, stat(rc, "metadata_writes") - meta0, "16 slots of one metadata block: one write");
        for (int i = 0; i < 16; i++) {
            assertTrue(rc.state.slotOf(i) >= 0, "block " + i + " is cached");
        }
        rc.close();
    }

    /**
     * Issue 12, performance 3, through the cache itself with the default policy: a one-pass scan
     * of 4 × the cache size between two runs of a hot working set leaves the hot set's hit ratio
     * within 5 points. The scan is random single-block reads (sequential_cutoff=0), so that the
     * policy, not the sequential bypass, has to resist it.
     */
    @Test
    void theDefaultPolicyKeepsTheHotSetThroughAScanOfFourTimesTheCache() throws IOException {
        Opener.Options o = Opener.withTunables(Opener.options(TestPolicies.all()), 0, Map.of());
        ReadCache rc = Opener.open("rc", new CrashableDevice("o", 64L << 20, BS), new CrashableDevice("c", 8192 + 2048L * BS, BS), o);
        int slots = (int) stat(rc, "capacity_blocks");
        int hot = slots * 3 / 4;
        java.util.Random r = new java.util.Random(7);
        for (int i = 0; i < 10 * hot; i++) { // warm-up, not measured
            read(rc, r.nextInt(hot));
        }
        double before = hotRun(rc, r, hot);
        java.util.List<Long> scan = new java.util.ArrayList<>();
        for (long b = hot; b < hot + 4L * slots; b++) {
            scan.add(b);
        }
        java.util.Collections.shuffle(scan, r);
        for (long b : scan) {
            read(rc, b);
        }
        double after = hotRun(rc, r, hot);
        System.out.printf("readcache (%s, %d slots): hot set of %d blocks %.2f %% before a scan of %d blocks, %.2f %% after%n",
                rc.status().get("policy"), slots, hot, before, scan.size(), after);
        assertTrue(before > 95, "the hot set fits: " + before);
        assertTrue(before - after <= 5, "hot hit ratio " + before + " % before the scan, " + after + " % after");
        rc.close();
    }

    /** Hit percent of 10 × hot random reads of the hot set. */
    private static double hotRun(ReadCache rc, java.util.Random r, int hot) throws IOException {
        long h0 = stat(rc, "read_hits");
        long m0 = stat(rc, "read_misses");
        for (int i = 0; i < 10 * hot; i++) {
            read(rc, r.nextInt(hot));
        }
        long h = stat(rc, "read_hits") - h0;
        long m = stat(rc, "read_misses") - m0;
        return 100.0 * h / (h + m);
    }

    @Test
    void memoryOfIndexAndPolicyIsAtMost32BytesPerBlock() throws IOException {
        BlockDevice big = new Sparse(1L << 30);
        for (String p : new String[] {"wtinylfu", "nhit", "lru"}) {
            ReadCache rc = Opener.open("rc", new Sparse(8L << 30), big, Opener.withFormat(Opener.withPolicy(Opener.options(TestPolicies.all()), p), true));
            double perBlock = Double.parseDouble(rc.status().get("heap_bytes_per_block"));
            System.out.println("readcache index + " + p + ": " + perBlock + " B per cached block");
            assertTrue(perBlock <= 32, p + ": " + perBlock);
            assertFalse(perBlock < 8, "measures the arrays");
            rc.close();
        }
    }

    /**
     * The cache's own share per block (slot → block, state byte, index) as the JVM counts it: the
     * bytes allocated by a state of 2^21 slots minus those of 2^20 slots, per added slot, against
     * what {@code heapBytesExceptPolicy} claims (the status's figure is that plus the policy's,
     * whose claims MemoryTest checks the same way).
     */
    @Test
    void theIndexShareIsWhatTheJvmAllocates() {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().getId();
        long a0 = mx.getThreadAllocatedBytes(tid);
        CacheState small = new CacheState(1 << 20);
        long a1 = mx.getThreadAllocatedBytes(tid);
        CacheState big = new CacheState(1 << 21);
        long a2 = mx.getThreadAllocatedBytes(tid);
        double measured = (double) ((a2 - a1) - (a1 - a0)) / (1 << 20);
        double claimed = (double) (big.heapBytesExceptPolicy() - small.heapBytesExceptPolicy()) / (1 << 20);
        System.out.printf("readcache index share: %.2f B per block allocated, %.2f B claimed%n", measured, claimed);
        assertTrue(Math.abs(measured - claimed) < 0.05, "allocated " + measured + " B per block, claimed " + claimed);
        assertTrue(measured <= 32 - 17.01, "leaves the default policy its 17 B within 32 B: " + measured);
    }

    /** A large device that holds nothing: reads zeroes, drops writes (for sizing only). */
    static final class Sparse implements BlockDevice {
        private final long size;

        Sparse(long size) {
            this.size = size;
        }

        @Override
        public long size() {
            return size;
        }

        @Override
        public int blockSize() {
            return BS;
        }

        @Override
        public void read(long offset, ByteBuffer dst) {
            while (dst.hasRemaining()) {
                dst.put((byte) 0);
            }
        }

        @Override
        public void write(long offset, ByteBuffer src, int flags) {
            src.position(src.limit());
        }

        @Override
        public void flush() {
        }

        @Override
        public void discard(long offset, long length) {
        }

        @Override
        public void writeZeroes(long offset, long length, int flags) {
        }

        @Override
        public void close() {
        }
    }
}
