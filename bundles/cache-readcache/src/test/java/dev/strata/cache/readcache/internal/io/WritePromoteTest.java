package dev.strata.cache.readcache.internal.io;

import static dev.strata.cache.readcache.internal.io.ReadCacheTest.BS;
import static dev.strata.cache.readcache.internal.io.ReadCacheTest.pattern;
import static dev.strata.cache.readcache.internal.io.ReadCacheTest.read;
import static dev.strata.cache.readcache.internal.io.ReadCacheTest.stat;
import static dev.strata.cache.readcache.internal.io.ReadCacheTest.write;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceIOException;
import dev.strata.api.InvalidArgumentException;
import dev.strata.testsupport.crash.CrashMode;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.target.ForwardingBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** {@code write_promote=on}: written blocks stay cached as clean copies, recorded only once durable on the origin. */
class WritePromoteTest {
    static Opener.Options promoting(String policy, Map<String, String> policyTunables) {
        return Opener.withWritePromote(Opener.withTunables(Opener.withPolicy(Opener.options(TestPolicies.all()), policy), 0,
                policyTunables), true);
    }

    static Opener.Options promoting() {
        return promoting("lru", Map.of());
    }

    @Test
    void writtenBlocksAreHitsWithoutReadingTheOrigin() throws IOException {
        Faulty origin = new Faulty(new CrashableDevice("o", 1 << 20, BS));
        ReadCache rc = Opener.open("rc", origin, new CrashableDevice("c", 8192 + 64 * BS, BS), promoting());
        for (int b = 0; b < 10; b++) {
            write(rc, b, 1);
        }
        long before = origin.reads.get();
        for (int b = 0; b < 10; b++) {
            assertArrayEquals(pattern(b, 1), read(rc, b));
        }
        assertEquals(before, origin.reads.get(), "every read served from the cache");
        assertEquals(10, stat(rc, "read_hits"));
        assertEquals(10, stat(rc, "write_promotions"));
        assertEquals("true", rc.status().get("write_promote"));
        // an overwrite replaces the copy: invalidated, then the new data installed
        write(rc, 3, 2);
        assertArrayEquals(pattern(3, 2), read(rc, 3));
        assertEquals(11, stat(rc, "read_hits"));
        assertEquals(1, stat(rc, "invalidations"));
        rc.close();
    }

    @Test
    void offByDefault() throws IOException {
        ReadCache rc = Opener.open("rc", new CrashableDevice("o", 1 << 20, BS), new CrashableDevice("c", 8192 + 64 * BS, BS),
                ReadCacheTest.lru());
        write(rc, 1, 1);
        assertArrayEquals(pattern(1, 1), read(rc, 1));
        assertEquals(0, stat(rc, "read_hits"));
        assertEquals(0, stat(rc, "write_promotions"));
        assertEquals("false", rc.status().get("write_promote"));
        rc.close();
    }

    /** The mapping of a written copy becomes durable only with a flush after the write: a crash before it leaves the block cold. */
    @Test
    void writtenCopiesAreRecordedOnlyByAFlushAfterTheWrite() throws IOException {
        CrashableDevice origin = new CrashableDevice("o", 1 << 20, BS);
        CrashableDevice cache = new CrashableDevice("c", 8192 + 64 * BS, BS);
        ReadCache rc = Opener.open("rc", origin, cache, promoting());
        for (int b = 0; b < 4; b++) {
            write(rc, b, 1);
        }
        origin.crash(CrashMode.KEEP_ALL, new Random(1)); // the origin kept the data; the cache must not have recorded it
        cache.crash(CrashMode.KEEP_ALL, new Random(1));
        origin = origin.restart();
        cache = cache.restart();
        rc = Opener.open("rc", origin, cache, promoting());
        assertEquals(0, stat(rc, "recovered_blocks"));
        for (int b = 0; b < 4; b++) {
            write(rc, b, 2);
        }
        rc.flush();
        origin.crash(CrashMode.DROP_ALL, new Random(1));
        cache.crash(CrashMode.DROP_ALL, new Random(1));
        origin = origin.restart();
        cache = cache.restart();
        rc = Opener.open("rc", origin, cache, promoting());
        assertEquals(4, stat(rc, "recovered_blocks"));
        for (int b = 0; b < 4; b++) {
            assertArrayEquals(pattern(b, 2), read(rc, b));
        }
        assertEquals(4, stat(rc, "read_hits"));
        rc.close();
    }

    @Test
    void fuaWritesArePromotedAndRecordedAtTheNextFlush() throws IOException {
        CrashableDevice origin = new CrashableDevice("o", 1 << 20, BS);
        CrashableDevice cache = new CrashableDevice("c", 8192 + 64 * BS, BS);
        ReadCache rc = Opener.open("rc", origin, cache, promoting());
        rc.write(5L * BS, ByteBuffer.wrap(pattern(5, 1)), BlockDevice.FUA);
        assertArrayEquals(pattern(5, 1), read(rc, 5));
        assertEquals(1, stat(rc, "read_hits"));
        rc.flush();
        origin.crash(CrashMode.DROP_ALL, new Random(2));
        cache.crash(CrashMode.DROP_ALL, new Random(2));
        rc = Opener.open("rc", origin.restart(), cache.restart(), promoting());
        assertEquals(1, stat(rc, "recovered_blocks"));
        assertArrayEquals(pattern(5, 1), read(rc, 5));
        rc.close();
    }

    @Test
    void partialBlocksZeroesAndDiscardsAreNotPromoted() throws IOException {
        ReadCache rc = Opener.open("rc", new CrashableDevice("o", 1 << 20, 512), new CrashableDevice("c", 8192 + 64 * BS, BS),
                promoting());
        rc.write(512, ByteBuffer.allocate(BS), 0); // covers no block wholly
        rc.writeZeroes(4L * BS, 2L * BS, 0);
        rc.discard(8L * BS, BS);
        assertEquals(0, stat(rc, "write_promotions"));
        rc.write(BS + 512, ByteBuffer.allocate(3 * BS), 0); // blocks 2 and 3 whole, 1 and 4 partly
        assertEquals(2, stat(rc, "write_promotions"));
        rc.close();
    }

    /** The policy decides admission of written blocks as of read misses (nhit: a block's second write is admitted). */
    @Test
    void thePolicyAdmitsWrittenBlocks() throws IOException {
        ReadCache rc = Opener.open("rc", new CrashableDevice("o", 1 << 20, BS), new CrashableDevice("c", 8192 + 64 * BS, BS),
                promoting("nhit", Map.of("threshold", "2", "trigger", "0")));
        write(rc, 7, 1);
        assertEquals(1, stat(rc, "write_rejections"));
        assertEquals(0, stat(rc, "write_promotions"));
        write(rc, 7, 2);
        assertEquals(1, stat(rc, "write_promotions"));
        assertArrayEquals(pattern(7, 2), read(rc, 7));
        assertEquals(1, stat(rc, "read_hits"));
        rc.close();
    }

    @Test
    void sequentialWritesPastTheCutoffAreNotPromoted() throws IOException {
        Opener.Options o = Opener.withWritePromote(Opener.withTunables(Opener.withPolicy(Opener.options(TestPolicies.all()), "lru"),
                64 << 10, Map.of()), true);
        ReadCache rc = Opener.open("rc", new CrashableDevice("o", 1 << 20, BS), new CrashableDevice("c", 8192 + 64 * BS, BS), o);
        for (int b = 0; b < 32; b++) {
            write(rc, b, 1);
        }
        assertEquals(16, stat(rc, "write_promotions"), "the first 64 KiB of the stream");
        rc.close();
    }

    @Test
    void aTunableAtRunTimeAndABadValueIsOneLine() throws IOException {
        ReadCache rc = Opener.open("rc", new CrashableDevice("o", 1 << 20, BS), new CrashableDevice("c", 8192 + 64 * BS, BS),
                ReadCacheTest.lru());
        rc.message("write_promote", "on");
        write(rc, 2, 1);
        assertEquals(1, stat(rc, "write_promotions"));
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> rc.message("write_promote", "maybe"));
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
        assertTrue(e.getMessage().contains("write_promote"), e.getMessage());
        assertEquals("true", rc.status().get("write_promote"));
        rc.message("write_promote", "off");
        write(rc, 3, 1);
        assertEquals(1, stat(rc, "write_promotions"));
        rc.close();
    }

    /** A cache write error while keeping a written copy does not fail the write (the origin has it); promotion stops. */
    @Test
    void aCacheWriteErrorKeepsTheWriteAndDisablesPromotion() throws IOException {
        CrashableDevice origin = new CrashableDevice("o", 1 << 20, BS);
        Faulty cache = new Faulty(new CrashableDevice("c", 8192 + 64 * BS, BS));
        ReadCache rc = Opener.open("rc", origin, cache, promoting());
        cache.failWrites = true;
        write(rc, 4, 1);
        cache.failWrites = false;
        assertEquals(1, stat(rc, "cache_write_errors"));
        assertTrue(rc.status().get("promotion").startsWith("disabled"), rc.status().get("promotion"));
        assertArrayEquals(pattern(4, 1), read(rc, 4));
        assertArrayEquals(pattern(4, 1), read(origin, 4));
        assertEquals(0, stat(rc, "read_hits"));
        rc.close();
    }

    /** The cache device's flush before the written copies are recorded fails: they stay unrecorded, the flush succeeds. */
    @Test
    void aFailedCacheFlushLeavesWrittenCopiesUnrecorded() throws IOException {
        CrashableDevice origin = new CrashableDevice("o", 1 << 20, BS);
        CrashableDevice cacheDev = new CrashableDevice("c", 8192 + 64 * BS, BS);
        FailingFlush cache = new FailingFlush(cacheDev);
        ReadCache rc = Opener.open("rc", origin, cache, promoting());
        write(rc, 6, 1);
        cache.fail = true;
        rc.flush();
        cache.fail = false;
        assertArrayEquals(pattern(6, 1), read(rc, 6), "still served");
        rc.flush();
        origin.crash(CrashMode.DROP_ALL, new Random(3));
        cacheDev.crash(CrashMode.DROP_ALL, new Random(3));
        rc = Opener.open("rc", origin.restart(), cacheDev.restart(), promoting());
        assertEquals(0, stat(rc, "recovered_blocks"));
        assertArrayEquals(pattern(6, 1), read(rc, 6));
        rc.close();
    }

    /**
     * Scan resistance with written data kept (issue 12, performance 3, for writes): a one-pass
     * write of 4 × the cache size between two runs of a hot working set leaves the hot set's hit
     * ratio within 5 points, because the default policy admits written blocks as it admits misses.
     */
    @Test
    void theDefaultPolicyKeepsTheHotSetThroughAWriteScanOfFourTimesTheCache() throws IOException {
        Opener.Options o = Opener.withWritePromote(Opener.withTunables(Opener.options(TestPolicies.all()), 0, Map.of()), true);
        ReadCache rc = Opener.open("rc", new CrashableDevice("o", 64L << 20, BS), new CrashableDevice("c", 8192 + 2048L * BS, BS), o);
        int slots = (int) stat(rc, "capacity_blocks");
        int hot = slots * 3 / 4;
        Random r = new Random(7);
        for (int i = 0; i < 10 * hot; i++) { // warm-up, not measured
            read(rc, r.nextInt(hot));
        }
        double before = hotRun(rc, r, hot);
        List<Long> scan = new ArrayList<>();
        for (long b = hot; b < hot + 4L * slots; b++) {
            scan.add(b);
        }
        Collections.shuffle(scan, r);
        for (long b : scan) {
            write(rc, b, 1);
        }
        double after = hotRun(rc, r, hot);
        System.out.printf("readcache (%s, write_promote=on, %d slots): hot set of %d blocks %.2f %% before a write scan of %d"
                + " blocks, %.2f %% after (%s written copies installed, each through the policy's window)%n", rc.status().get("policy"), slots, hot, before, scan.size(),
                after, rc.status().get("write_promotions"));
        assertTrue(before > 95, "the hot set fits: " + before);
        assertTrue(before - after <= 5, "hot hit ratio " + before + " % before the write scan, " + after + " % after");
        rc.close();
    }

    /** Hit percent of 10 × hot random reads of the hot set. */
    private static double hotRun(ReadCache rc, Random r, int hot) throws IOException {
        long h0 = stat(rc, "read_hits");
        long m0 = stat(rc, "read_misses");
        for (int i = 0; i < 10 * hot; i++) {
            read(rc, r.nextInt(hot));
        }
        long h = stat(rc, "read_hits") - h0;
        long m = stat(rc, "read_misses") - m0;
        return 100.0 * h / (h + m);
    }

    static final class FailingFlush extends ForwardingBlockDevice {
        volatile boolean fail;

        FailingFlush(BlockDevice lower) {
            super(lower);
        }

        @Override
        public void flush() throws IOException {
            if (fail) {
                throw new DeviceIOException("c", 0, "injected flush error");
            }
            super.flush();
        }
    }
}
