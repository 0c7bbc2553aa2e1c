package dev.strata.cache.writecache.internal.recovery;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.InvalidArgumentException;
import dev.strata.cache.writecache.internal.format.Layout;
import dev.strata.cache.writecache.internal.format.Superblock;
import dev.strata.cache.writecache.internal.index.SlotIndex;
import dev.strata.cache.writecache.internal.io.Options;
import dev.strata.cache.writecache.internal.io.Tunables;
import dev.strata.cache.writecache.internal.io.WritecacheTarget;
import dev.strata.testsupport.crash.CrashableDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The index keeps a seq_count in 58 bits (2^58 commits: 9,000 years at a million a second). A
 * cache whose superblock is at the limit commits up to it and then refuses to commit with one
 * clear line — it never wraps into a seq_count that would make older entries win or newer ones
 * invalid — and keeps what it committed; a superblock beyond the limit (not written by this
 * code) is refused at open, with nothing written.
 */
class SeqCountLimitTest {
    final CrashableDevice backing = new CrashableDevice("slow", 1 << 20, 512);
    final CrashableDevice cache = new CrashableDevice("fast", 64 * 4096 + 8192, 512);

    WritecacheTarget open() throws IOException {
        return Recovery.open("wc", backing, cache, "slow", 0, false, Tunables.DEFAULTS, Options.defaults().manual());
    }

    void setSeqCount(long seq) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(Layout.SUPERBLOCK_BYTES);
        cache.read(0, b);
        Superblock sb = Superblock.decode(b.clear());
        cache.write(0, sb.withSeqCount(seq).encode(), 0);
        cache.flush();
    }

    long seqCount() throws Exception {
        ByteBuffer b = ByteBuffer.allocate(Layout.SUPERBLOCK_BYTES);
        cache.read(0, b);
        return Superblock.decode(b.clear()).seqCount();
    }

    static ByteBuffer data(int seed) {
        ByteBuffer d = ByteBuffer.allocate(4096);
        new Random(seed).nextBytes(d.array());
        return d;
    }

    @Test
    void commitsUpToTheLimitThenRefusesWithoutLosingWhatWasCommitted() throws Exception {
        try (WritecacheTarget t = Recovery.open("wc", backing, cache, "slow", 0, true, Tunables.DEFAULTS,
                Options.defaults().manual())) {
            t.write(0, data(1), 0);
        }
        setSeqCount(SlotIndex.SEQ_LIMIT - 2);
        WritecacheTarget t = open();
        t.write(4096, data(2), 0);
        t.flush(); // stamped 2^58 - 2, committed with seq_count 2^58 - 1
        assertEquals(SlotIndex.SEQ_LIMIT - 1, seqCount());
        t.write(8192, data(3), 0); // stamped 2^58 - 1: still held exactly
        IOException e = assertThrows(IOException.class, t::flush);
        assertEquals("writecache: seq_count reached " + (SlotIndex.SEQ_LIMIT - 1)
                + ", the most the index keeps in memory; nothing more can be committed", e.getMessage());
        ByteBuffer r = ByteBuffer.allocate(4096);
        t.read(8192, r);
        assertArrayEquals(data(3).array(), r.array(), "the uncommitted write is still served");
        assertEquals(SlotIndex.SEQ_LIMIT - 1, seqCount(), "nothing was committed past the limit");
        assertThrows(IOException.class, t::close);
        try (WritecacheTarget again = open()) {
            for (int i = 0; i < 2; i++) {
                ByteBuffer got = ByteBuffer.allocate(4096);
                again.read(i * 4096L, got);
                assertArrayEquals(data(i + 1).array(), got.array(), "committed block " + i);
            }
            assertEquals(2, again.dirtyBlocks());
        }
    }

    @Test
    void aSuperblockBeyondTheLimitIsRefusedAtOpen() throws Exception {
        Recovery.open("wc", backing, cache, "slow", 0, true, Tunables.DEFAULTS, Options.defaults().manual()).close();
        setSeqCount(SlotIndex.SEQ_LIMIT);
        byte[] before = cache.currentImage();
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> open().close());
        assertTrue(e.getMessage().startsWith("writecache: the cache device's seq_count " + SlotIndex.SEQ_LIMIT
                + " is beyond the 2^58 - 1 the index keeps in memory"), e.getMessage());
        assertFalse(e.getMessage().contains("\n"));
        assertArrayEquals(before, cache.currentImage(), "nothing written");
    }
}
