package dev.strata.cache.writecache.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.api.CacheMode;
import dev.strata.api.CacheTarget;
import dev.strata.api.InvalidArgumentException;
import dev.strata.cache.writecache.internal.format.Layout;
import dev.strata.cache.writecache.internal.recovery.Recovery;
import dev.strata.testsupport.crash.CrashMode;
import dev.strata.testsupport.crash.CrashableDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class WritecacheTargetTest {
    static final int BS = 4096;
    CrashableDevice backingDisk = new CrashableDevice("backing", 4 << 20, 4096);
    CrashableDevice cacheDisk;
    List<String> log = new ArrayList<>();
    Recorder backing;
    Recorder cache;

    WritecacheTarget open(int slots, Options options, Tunables t) throws IOException {
        if (cacheDisk == null) {
            cacheDisk = new CrashableDevice("cache", WritecacheSubject.cacheBytes(slots, BS), 4096);
        }
        backing = new Recorder("backing", backingDisk, log);
        cache = new Recorder("cache", cacheDisk, log);
        return Recovery.open("wc", backing, cache, "id-1", 0, false, t, options);
    }

    WritecacheTarget open(int slots) throws IOException {
        return open(slots, Options.defaults().manual(), Tunables.DEFAULTS);
    }

    static ByteBuffer data(int blocks, int seed) {
        byte[] b = new byte[blocks * BS];
        new Random(seed).nextBytes(b);
        return ByteBuffer.wrap(b);
    }

    static byte[] read(BlockDevice d, long offset, int len) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(len);
        d.read(offset, b);
        return b.array();
    }

    long stat(CacheTarget t, String key) {
        return Long.parseLong(t.status().get(key));
    }

    List<String> writesTo(String device, List<String> ops) {
        return ops.stream().filter(s -> s.startsWith(device + " W")).toList();
    }

    @Test
    void aMultiBlockWriteIsOneCacheIoIntoConsecutiveSlots() throws IOException {
        try (WritecacheTarget t = open(64)) {
            log.clear();
            t.write(10 * BS, data(16, 1), 0);
            long slot0 = Layout.dataOffset(BS, 64);
            assertEquals(List.of("cache W " + slot0 + "+" + 16 * BS), writesTo("cache", log));
            assertEquals(16, stat(t, "writes_allocated"));
            assertArrayEquals(data(16, 1).array(), read(t, 10 * BS, 16 * BS));
            // an overwrite of the same uncommitted blocks is one I/O into the same slots
            log.clear();
            t.write(10 * BS, data(16, 2), 0);
            assertEquals(List.of("cache W " + slot0 + "+" + 16 * BS), writesTo("cache", log));
            assertEquals(16, stat(t, "write_hits_uncommitted"));
            assertEquals(64 - 16, stat(t, "free_blocks"));
        }
    }

    @Test
    void anOverwriteOfACommittedBlockTakesANewSlotAndFreesTheOldAfterTheCommit() throws IOException {
        try (WritecacheTarget t = open(64)) {
            t.write(0, data(4, 1), 0);
            t.flush();
            t.write(BS, data(2, 2), 0);
            assertEquals(2, stat(t, "write_hits_committed"));
            assertEquals(64 - 6, stat(t, "free_blocks"), "old copies still held until the commit");
            t.flush();
            assertEquals(64 - 4, stat(t, "free_blocks"));
            byte[] expect = data(4, 1).array();
            System.arraycopy(data(2, 2).array(), 0, expect, BS, 2 * BS);
            assertArrayEquals(expect, read(t, 0, 4 * BS));
        }
    }

    @Test
    void readsAreNotPromotedAndHitsComeFromTheCache() throws IOException {
        backingDisk.write(0, data(8, 5), 0);
        try (WritecacheTarget t = open(64)) {
            assertArrayEquals(data(8, 5).array(), read(t, 0, 8 * BS));
            assertEquals(0, t.cachedBlocks());
            t.write(2 * BS, data(1, 6), 0);
            log.clear();
            byte[] got = read(t, 0, 8 * BS);
            byte[] expect = data(8, 5).array();
            System.arraycopy(data(1, 6).array(), 0, expect, 2 * BS, BS);
            assertArrayEquals(expect, got);
            assertEquals(List.of("backing R 0+8192", "cache R " + Layout.dataOffset(BS, 64) + "+4096",
                    "backing R 12288+20480"), log);
            assertEquals(16, stat(t, "reads"));
            assertEquals(1, stat(t, CacheTarget.Keys.READ_HITS));
        }
    }

    @Test
    void aCommitWritesMetadataThenFlushesThenWritesTheSuperblockFua() throws IOException {
        try (WritecacheTarget t = open(64)) {
            t.write(0, data(2, 1), 0);
            log.clear();
            t.flush();
            assertEquals(List.of("cache W 4096+512", "cache F", "cache W 0+4096 fua"), log);
            log.clear();
            t.flush();
            assertEquals(List.of(), log, "nothing to commit: no I/O");
        }
    }

    @Test
    void aFuaWriteIsCommittedBeforeItIsAcknowledged() throws IOException {
        try (WritecacheTarget t = open(64, Options.defaults().manual(), Tunables.DEFAULTS)) {
            t.write(3 * BS, data(2, 9), BlockDevice.FUA);
            assertEquals(1, stat(t, "commits"));
        }
        cacheDisk.crash(CrashMode.DROP_ALL, new Random(1));
        backingDisk.crash(CrashMode.DROP_ALL, new Random(1));
        cacheDisk = cacheDisk.restart();
        backingDisk = backingDisk.restart();
        try (WritecacheTarget t = open(64)) {
            assertArrayEquals(data(2, 9).array(), read(t, 3 * BS, 2 * BS));
        }
    }

    @Test
    void aFullCacheWritesAroundAndForwardsTheNextFlush() throws IOException {
        try (WritecacheTarget t = open(8)) {
            t.write(0, data(8, 1), 0);
            log.clear();
            t.write(100 * BS, data(3, 2), 0);
            assertEquals(3, stat(t, "writes_around"));
            assertEquals(List.of("backing W " + 100 * BS + "+" + 3 * BS), writesTo("backing", log));
            log.clear();
            t.flush();
            assertTrue(log.contains("backing F"), log.toString());
            assertEquals(1, stat(t, "flushes_forwarded"));
            log.clear();
            t.flush();
            assertTrue(!log.contains("backing F"), "forwarded once: " + log);
            assertArrayEquals(data(3, 2).array(), read(t, 100 * BS, 3 * BS));
        }
    }

    @Test
    void aWriteToACommittedBlockOfAFullCacheWritesBackToMakeRoom() throws IOException {
        try (WritecacheTarget t = open(8)) {
            t.write(0, data(8, 1), 0);
            t.flush();
            t.write(2 * BS, data(1, 2), 0);
            assertEquals(1, stat(t, "writes_blocked_on_freelist"));
            assertTrue(stat(t, CacheTarget.Keys.WRITTEN_BACK_BLOCKS) > 0);
            byte[] expect = data(8, 1).array();
            System.arraycopy(data(1, 2).array(), 0, expect, 2 * BS, BS);
            assertArrayEquals(expect, read(t, 0, 8 * BS));
        }
    }

    @Test
    void discardAndWriteZeroesDropCachedCopies() throws IOException {
        try (WritecacheTarget t = open(64)) {
            t.write(0, data(8, 1), 0);
            t.flush();
            log.clear();
            t.discard(2 * BS, 3 * BS);
            assertEquals(5, t.cachedBlocks());
            assertEquals("backing Z 8192+12288 fua", log.get(0), "the backing device is zeroed durably before the drop");
            assertArrayEquals(new byte[3 * BS], read(t, 2 * BS, 3 * BS));
            t.writeZeroes(6 * BS + 512, BS + 1024, 0);
            assertArrayEquals(new byte[BS + 1024], read(t, 6 * BS + 512, BS + 1024));
            assertEquals(1, stat(t, "discards"));
            t.flush(); // the partial zeroing superseded two committed copies: freed by the commit
            assertEquals(64 - t.cachedBlocks(), stat(t, "free_blocks"));
        }
    }

    @Test
    void writebackAllGoesInBackingOrderMergedAndFlushesTheBackingBeforeFreeing() throws Exception {
        try (WritecacheTarget t = open(64)) {
            int[] blocks = {40, 7, 8, 9, 30, 2, 31, 10};
            for (int i = 0; i < blocks.length; i++) {
                t.write((long) blocks[i] * BS, data(1, blocks[i]), 0);
            }
            log.clear();
            AtomicLong last = new AtomicLong(-1);
            t.writebackAll((dirty, done) -> last.set(done));
            assertEquals(8, last.get());
            assertEquals(0, t.dirtyBlocks());
            List<String> bw = writesTo("backing", log);
            // the merged runs; they are submitted in backing order to the batcher's pool of
            // WritebackBatcher.IN_FLIGHT threads (proved by cache-support's WritebackBatcherInFlightTest),
            // so the order in which they reach the device is the pool's: compared as a set
            List<String> sorted = new java.util.ArrayList<>(bw);
            sorted.sort(java.util.Comparator.comparingLong(w -> Long.parseLong(w.substring("backing W ".length(), w.indexOf('+')))));
            assertEquals(List.of("backing W 8192+4096", "backing W 28672+16384", "backing W 122880+8192",
                    "backing W 163840+4096"), sorted);
            int flush = log.indexOf("backing F");
            int lastBackingWrite = log.lastIndexOf(bw.get(bw.size() - 1));
            int freeing = -1;
            for (int i = flush; i < log.size(); i++) {
                if (log.get(i).startsWith("cache W 4096")) {
                    freeing = i;
                    break;
                }
            }
            assertTrue(lastBackingWrite < flush && flush < freeing, log.toString());
            for (int b : blocks) {
                assertArrayEquals(data(1, b).array(), read(backingDisk, (long) b * BS, BS));
                assertArrayEquals(data(1, b).array(), read(t, (long) b * BS, BS));
            }
            assertEquals(64, stat(t, "free_blocks"));
        }
    }

    @Test
    void writebackAllIsCancelledByAnInterruptAndLosesNothing() throws Exception {
        try (WritecacheTarget t = open(64, Options.defaults().manual(), Tunables.DEFAULTS.with(Tunables.WRITEBACK_BATCH, "1"))) {
            t.write(0, data(20, 3), 0);
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            Thread.currentThread().interrupt();
            try {
                t.writebackAll((d, w) -> { });
            } catch (InterruptedException e) {
                thrown.set(e);
            }
            assertTrue(thrown.get() instanceof InterruptedException);
            // a cancel is not a failure: cache:stats said "writeback failing" with nothing logged
            assertEquals("0", t.status().get("writeback_error"));
            assertEquals(20, t.dirtyBlocks());
            assertArrayEquals(data(20, 3).array(), read(t, 0, 20 * BS));
        }
    }

    @Test
    void backgroundWritebackRunsBetweenTheWatermarks() throws Exception {
        Tunables tun = Tunables.DEFAULTS.with(Tunables.HIGH_WATERMARK, "50").with(Tunables.LOW_WATERMARK, "25");
        try (WritecacheTarget t = open(40, Options.defaults(), tun)) {
            t.write(0, data(24, 4), 0); // 60 % used
            t.flush();
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (t.cachedBlocks() > 10 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertEquals(10, t.cachedBlocks(), "stops at the low watermark (25 % of 40)");
            assertArrayEquals(data(24, 4).array(), read(t, 0, 24 * BS));
        }
    }

    @Test
    void theBackgroundCommitsAtAutocommitBlocksAndAfterAutocommitTime() throws IOException {
        java.util.concurrent.atomic.AtomicLong now = new java.util.concurrent.atomic.AtomicLong();
        Tunables tun = Tunables.DEFAULTS.with(Tunables.AUTOCOMMIT_BLOCKS, "4").with(Tunables.AUTOCOMMIT_TIME, "1000");
        try (WritecacheTarget t = open(64, Options.defaults().manual().withClock(now::get), tun)) {
            now.set(5_000_000_000L);
            t.write(0, data(1, 1), 0);
            t.backgroundOnce();
            assertEquals(0, stat(t, "commits"));
            now.addAndGet(999_000_000L);
            t.backgroundOnce();
            assertEquals(0, stat(t, "commits"), "not before autocommit_time");
            now.addAndGet(1_000_000L);
            t.backgroundOnce();
            assertEquals(1, stat(t, "commits"), "at autocommit_time");
            t.write(BS, data(4, 2), 0);
            t.backgroundOnce();
            assertEquals(2, stat(t, "commits"), "at autocommit_blocks");
            t.message(Tunables.AUTOCOMMIT_TIME, "0");
            t.write(10 * BS, data(1, 3), 0);
            now.addAndGet(3_600_000_000_000L);
            t.backgroundOnce();
            assertEquals(2, stat(t, "commits"), "autocommit_time=0 is off");
        }
    }

    @Test
    void blocksOlderThanMaxAgeAreWrittenBackWhateverTheWatermarks() throws IOException {
        java.util.concurrent.atomic.AtomicLong now = new java.util.concurrent.atomic.AtomicLong(1_000_000_000L);
        Tunables tun = Tunables.DEFAULTS.with(Tunables.MAX_AGE, "2000");
        try (WritecacheTarget t = open(64, Options.defaults().manual().withClock(now::get), tun)) {
            t.write(0, data(2, 1), 0);
            t.flush();
            now.addAndGet(1_500_000_000L);
            t.write(10 * BS, data(1, 2), 0);
            t.flush();
            now.addAndGet(400_000_000L);
            t.backgroundOnce();
            assertEquals(3, t.dirtyBlocks(), "1.9 s old: stays");
            now.addAndGet(100_000_000L);
            t.backgroundOnce();
            assertEquals(1, t.dirtyBlocks(), "the two blocks 2 s old went back, the younger one stays");
            assertArrayEquals(data(2, 1).array(), read(backingDisk, 0, 2 * BS));
            now.addAndGet(1_500_000_000L);
            t.backgroundOnce();
            assertEquals(0, t.dirtyBlocks());
        }
    }

    @Test
    void statusHasDmWritecachesFigures() throws IOException {
        try (WritecacheTarget t = open(64)) {
            Map<String, String> s = t.status();
            for (String k : List.of("error", CacheTarget.Keys.CAPACITY_BLOCKS, "free_blocks", "under_writeback", "reads",
                    CacheTarget.Keys.READ_HITS, "writes", "write_hits_uncommitted", "write_hits_committed", "writes_around",
                    "writes_allocated", "writes_blocked_on_freelist", "flushes", "discards", CacheTarget.Keys.MODE,
                    CacheTarget.Keys.DIRTY_BLOCKS, CacheTarget.Keys.BLOCK_SIZE)) {
                assertTrue(s.containsKey(k), k + " in " + s);
            }
            assertEquals("64", s.get(CacheTarget.Keys.CAPACITY_BLOCKS));
            assertEquals("writeback", s.get(CacheTarget.Keys.MODE));
        }
    }

    /**
     * The message {@code mode writearound} on a dirty cache is accepted with a note (not an error
     * that changed state): new writes go around, the switch waits for the dirty blocks and then
     * completes by itself, so that "mode writearound; flush 1; reload" runs as a script;
     * {@code mode writeback} meanwhile says it cancels the pending switch.
     */
    @Test
    void modeWritearoundWhileDirtyIsPendingWithANote() throws Exception {
        try (WritecacheTarget t = open(64)) {
            t.write(0, data(2, 1), 0);
            assertEquals("pending: new writes go around from now on; the mode becomes writearound once the 2 dirty blocks"
                    + " are written back (flush 1, or cache:writeback)", t.messageWithNote("mode", "writearound"));
            assertEquals(CacheMode.WRITEBACK, t.mode());
            assertEquals("writearound", t.status().get(CacheTarget.Keys.MODE_PENDING));
            t.write(10 * BS, data(1, 2), 0);
            assertEquals(2, t.cachedBlocks(), "new writes go around while it is pending");
            assertEquals("cancels the pending switch to writearound: new writes are cached again",
                    t.messageWithNote("mode", "writeback"));
            assertNull(t.status().get(CacheTarget.Keys.MODE_PENDING));
            t.write(12 * BS, data(1, 3), 0);
            assertEquals(3, t.cachedBlocks(), "cached again");
            assertNull(t.messageWithNote("mode", "writeback"), "already writeback: nothing to say");
            t.message("mode", "writearound"); // dev:message's path without the note: no exception either
            t.message("flush", "1");
            assertEquals(CacheMode.WRITEAROUND, t.mode(), "the switch completed once nothing was dirty");
            assertNull(t.status().get(CacheTarget.Keys.MODE_PENDING));
            assertEquals("writearound", t.status().get(CacheTarget.Keys.MODE));
            assertNull(t.messageWithNote("mode", "writearound"));
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> t.message("mode", "writethrough"));
            assertEquals("writecache: mode writethrough is not supported; use writeback or writearound", e.getMessage());
        }
    }

    @Test
    void modesAndTunables() throws Exception {
        try (WritecacheTarget t = open(64)) {
            t.write(0, data(2, 1), 0);
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> t.setMode(CacheMode.WRITEAROUND));
            assertTrue(e.getMessage().contains("2 dirty blocks remain"), e.getMessage());
            // the mode stays writeback, and the status says the writes already go around
            assertEquals("writeback", t.status().get(CacheTarget.Keys.MODE));
            assertEquals("writearound", t.status().get(CacheTarget.Keys.MODE_PENDING));
            t.message(Tunables.HIGH_WATERMARK, "50"); // a tunable set meanwhile keeps them going around
            t.write(10 * BS, data(1, 2), 0);
            assertEquals(2, t.cachedBlocks(), "writes go around while draining");
            t.writebackAll((d, w) -> { });
            t.setMode(CacheMode.WRITEAROUND);
            assertEquals(CacheMode.WRITEAROUND, t.mode());
            assertNull(t.status().get(CacheTarget.Keys.MODE_PENDING));
            assertThrows(InvalidArgumentException.class, () -> t.setMode(CacheMode.WRITETHROUGH));
            t.setMode(CacheMode.WRITEBACK);
            assertThrows(InvalidArgumentException.class, () -> t.message(Tunables.LOW_WATERMARK, "60"));
            assertThrows(InvalidArgumentException.class, () -> t.message(Tunables.HIGH_WATERMARK, "101"));
            assertThrows(InvalidArgumentException.class, () -> t.message("nonsense", "1"));
            assertEquals("50", t.status().get(Tunables.HIGH_WATERMARK), "nothing changed");
            t.message(Tunables.HIGH_WATERMARK, "80");
            assertEquals("80", t.status().get(Tunables.HIGH_WATERMARK));
        }
    }

    @Test
    void restartWithAFullDirtyCacheKeepsEveryBlock() throws IOException {
        try (WritecacheTarget t = open(32)) {
            for (int i = 0; i < 32; i++) {
                t.write((long) (i * 3) * BS, data(1, 100 + i), 0);
            }
            assertEquals(0, t.status().get("free_blocks").compareTo("0"));
        }
        try (WritecacheTarget t = open(32)) {
            assertEquals(32, t.dirtyBlocks());
            for (int i = 0; i < 32; i++) {
                assertArrayEquals(data(1, 100 + i).array(), read(t, (long) (i * 3) * BS, BS));
            }
        }
    }

    @Test
    void ofTwoEntriesForOneBlockTheHigherSeqCountWins() throws IOException {
        try (WritecacheTarget t = open(16)) {
            t.write(5 * BS, data(1, 1), 0);
            t.flush();
            t.write(5 * BS, data(1, 2), 0);
            t.flush();
        }
        // a crash before the older copy's entry is rewritten FREE leaves both on the device, valid:
        // build that state (older entry, seq_count one lower, with the old data in its slot)
        ByteBuffer meta = ByteBuffer.allocate(512);
        cacheDisk.read(Layout.METADATA_OFFSET, meta);
        int newer = -1;
        int spare = -1;
        for (int k = 0; k < 16; k++) {
            long blk = dev.strata.cache.writecache.internal.format.MetadataSector.entryBlock(meta, 0, k);
            if (blk == 5) {
                newer = k;
            } else if (blk == -1 && spare < 0) {
                spare = k;
            }
        }
        long seq = dev.strata.cache.writecache.internal.format.MetadataSector.entrySeq(meta, 0, newer);
        assertTrue(seq > 0);
        dev.strata.cache.writecache.internal.format.MetadataSector.putEntry(meta, 0, spare, 5, seq - 1);
        dev.strata.cache.writecache.internal.format.MetadataSector.seal(meta, 0, 0);
        cacheDisk.write(Layout.METADATA_OFFSET, meta.clear(), BlockDevice.FUA);
        cacheDisk.write(Layout.dataOffset(BS, 16) + (long) spare * BS, data(1, 1), BlockDevice.FUA);
        int valid = 2;
        try (WritecacheTarget t = open(16)) {
            assertArrayEquals(data(1, 2).array(), read(t, 5 * BS, BS));
            assertEquals(1, t.cachedBlocks());
            assertEquals(15, stat(t, "free_blocks"));
        }
        meta.clear();
        cacheDisk.read(Layout.METADATA_OFFSET, meta);
        valid = 0;
        for (int k = 0; k < 16; k++) {
            if (dev.strata.cache.writecache.internal.format.MetadataSector.entryBlock(meta, 0, k) == 5) {
                valid++;
            }
        }
        assertEquals(1, valid, "the older copy was rewritten FREE at open");
    }
}
