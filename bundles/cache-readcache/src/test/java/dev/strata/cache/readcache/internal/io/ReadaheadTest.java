package dev.strata.cache.readcache.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.api.InvalidArgumentException;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.target.ForwardingBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** {@code readahead}: one origin request per miss's extent, neighbours cached in free slots only. */
class ReadaheadTest {
    static final int BS = ReadCacheTest.BS;

    /** Records the offset and length of every read that reaches the origin. */
    static class Recording extends ForwardingBlockDevice {
        final List<long[]> reads = new CopyOnWriteArrayList<>();

        Recording(BlockDevice lower) {
            super(lower);
        }

        @Override
        public void read(long offset, ByteBuffer dst) throws IOException {
            reads.add(new long[] {offset, dst.remaining()});
            super.read(offset, dst);
        }
    }

    private static Recording origin() throws IOException {
        Recording o = new Recording(new CrashableDevice("o", 1 << 20, BS));
        for (int b = 0; b < 64; b++) {
            ReadCacheTest.write(o, b, 1);
        }
        o.flush();
        o.reads.clear();
        return o;
    }

    @Test
    void aMissReadsItsAlignedExtentOnceAndTheNeighboursHit() throws IOException {
        Recording o = origin();
        ReadCache rc = Opener.open("rc", o, new CrashableDevice("c", 8192 + 64 * BS, BS),
                Opener.withReadahead(ReadCacheTest.lru(), "64K"));
        assertArrayEquals(ReadCacheTest.pattern(21, 1), ReadCacheTest.read(rc, 21));
        assertEquals(1, o.reads.size());
        assertArrayEquals(new long[] {16L * BS, 16L * BS}, o.reads.get(0), "the aligned 64 KiB extent around block 21");
        assertEquals(1, ReadCacheTest.stat(rc, "readaheads"));
        assertEquals(15, ReadCacheTest.stat(rc, "readahead_blocks"));
        for (int b = 16; b < 32; b++) {
            assertArrayEquals(ReadCacheTest.pattern(b, 1), ReadCacheTest.read(rc, b), "block " + b);
        }
        assertEquals(1, o.reads.size(), "the neighbours were served from the cache");
        assertEquals(16, ReadCacheTest.stat(rc, "read_hits"));
        // a write over a neighbour drops it like any cached copy
        ReadCacheTest.write(rc, 17, 2);
        assertArrayEquals(ReadCacheTest.pattern(17, 2), ReadCacheTest.read(rc, 17));
        // off by default: a miss reads its own block only
        rc.message("readahead", "0");
        ReadCacheTest.read(rc, 40);
        assertArrayEquals(new long[] {40L * BS, BS}, o.reads.get(o.reads.size() - 1));
        rc.close();
    }

    /**
     * The staleness guard covers the neighbours: a write of block 17 that runs while the miss of
     * block 21 is reading the extent (so the extent holds block 17's older data) must not be
     * undone by the readahead's promotion of block 17.
     */
    @Test
    void aNeighbourWrittenWhileTheExtentIsReadIsNeverCachedWithItsOlderData() throws Exception {
        ReadCache[] rc = new ReadCache[1];
        Throwable[] failed = new Throwable[1];
        Recording o = new Recording(new CrashableDevice("o", 1 << 20, BS)) {
            boolean once;

            @Override
            public void read(long offset, ByteBuffer dst) throws IOException {
                boolean extent = dst.remaining() > BS && !once;
                super.read(offset, dst);
                if (extent) {
                    once = true;
                    Thread w = new Thread(() -> {
                        try {
                            ReadCacheTest.write(rc[0], 17, 2);
                        } catch (Throwable e) {
                            failed[0] = e;
                        }
                    });
                    w.start();
                    try {
                        w.join(30_000);
                    } catch (InterruptedException e) {
                        throw new IOException(e);
                    }
                    assertTrue(!w.isAlive(), "the write finished while the read waited");
                }
            }
        };
        for (int b = 16; b < 32; b++) {
            ReadCacheTest.write(o, b, 1);
        }
        o.flush();
        rc[0] = Opener.open("rc", o, new CrashableDevice("c", 8192 + 64 * BS, BS),
                Opener.withReadahead(ReadCacheTest.lru(), "64K"));
        assertArrayEquals(ReadCacheTest.pattern(21, 1), ReadCacheTest.read(rc[0], 21));
        assertEquals(null, failed[0]);
        assertArrayEquals(ReadCacheTest.pattern(17, 2), ReadCacheTest.read(rc[0], 17), "block 17 reads the write's data");
        assertTrue(ReadCacheTest.stat(rc[0], "promotions_abandoned") >= 1, rc[0].status().toString());
        rc[0].close();
    }

    @Test
    void aFullCacheDoesNoReadaheadAndNeverEvictsForIt() throws IOException {
        Recording o = origin();
        // 16 slots: the first miss fills them all (itself and 15 neighbours of its 64 KiB extent)
        ReadCache rc = Opener.open("rc", o, new CrashableDevice("c", 8192 + 16 * BS, BS),
                Opener.withReadahead(ReadCacheTest.lru(), "64K"));
        ReadCacheTest.read(rc, 0);
        assertEquals(15, ReadCacheTest.stat(rc, "readahead_blocks"));
        assertEquals(16, ReadCacheTest.stat(rc, "cached_blocks"));
        o.reads.clear();
        assertArrayEquals(ReadCacheTest.pattern(33, 1), ReadCacheTest.read(rc, 33));
        assertEquals(1, o.reads.size());
        assertArrayEquals(new long[] {33L * BS, BS}, o.reads.get(0), "a full cache reads the miss's block only");
        assertEquals(15, ReadCacheTest.stat(rc, "readahead_blocks"));
        assertEquals(1, ReadCacheTest.stat(rc, "evictions"), "only the miss's own promotion evicted");
        rc.close();
    }

    @Test
    void readaheadOfAReadAsLargeAsTheExtentOrNearTheEndIsNotDone() throws IOException {
        Recording o = origin();
        ReadCache rc = Opener.open("rc", o, new CrashableDevice("c", 8192 + 300 * BS, BS),
                Opener.withReadahead(ReadCacheTest.lru(), "16K"));
        ByteBuffer big = ByteBuffer.allocate(4 * BS);
        rc.read(8L * BS, big);
        assertArrayEquals(new long[] {8L * BS, 4L * BS}, o.reads.get(0));
        assertEquals(0, ReadCacheTest.stat(rc, "readaheads"));
        // the origin's last extent is whole here (1 MiB): readahead reads up to its end, not past it
        ReadCacheTest.read(rc, 255);
        assertArrayEquals(new long[] {252L * BS, 4L * BS}, o.reads.get(1));
        rc.close();
    }

    @Test
    void badValuesAreOneClearLineAndChangeNothing() throws IOException {
        ReadCache rc = Opener.open("rc", origin(), new CrashableDevice("c", 8192 + 16 * BS, BS), ReadCacheTest.lru());
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> rc.message("readahead", "12K"));
        assertTrue(e.getMessage().contains("readahead=12K") && e.getMessage().contains("power of two"), e.getMessage());
        e = assertThrows(InvalidArgumentException.class, () -> rc.message("readahead", "2M"));
        assertTrue(e.getMessage().contains("out of range"), e.getMessage());
        assertEquals("0", rc.status().get("readahead"));
        rc.message("readahead", "128K");
        assertEquals("131072", rc.status().get("readahead"));
        rc.close();
    }
}
