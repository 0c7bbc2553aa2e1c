package dev.strata.cache.writeboost.internal.recovery;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.cache.writeboost.internal.format.Layout;
import dev.strata.cache.writeboost.internal.io.Tunables;
import dev.strata.cache.writeboost.internal.io.WriteboostCache;
import dev.strata.cache.writeboost.internal.testing.MemDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Scan, validate, truncate: the exact surviving prefix, and every header byte flipped is caught. */
class RecoveryTest {
    static final int RECORDS = 20;
    MemDevice backing = new MemDevice("backing", 8L << 20);
    MemDevice cache = new MemDevice("cache", 17L << 20);

    static final Tunables T = Tunables.DEFAULTS.with(Tunables.BYPASS_THRESHOLD, "0").with(Tunables.SEQUENTIAL_CUTOFF, "0");

    WriteboostCache open() throws IOException {
        return WriteboostCache.open("wb", backing, cache, false, T, WriteboostCache.Options.defaults().manual().withBuffers(2), null);
    }

    static byte[] pattern(int i) {
        byte[] b = new byte[4096];
        Arrays.fill(b, (byte) (i + 1));
        return b;
    }

    /** Record r (1-based) holds block r-1 and sits at blocks [2(r-1), 2(r-1)+2) of segment 0. */
    @BeforeEach
    void writeTwentyRecords() throws IOException {
        WriteboostCache wb = open();
        for (int i = 0; i < RECORDS; i++) {
            wb.write(i * 4096L, ByteBuffer.wrap(pattern(i)), 0);
            wb.flush();
        }
        wb.close();
    }

    static long header(int record) {
        return Layout.FIRST_SEGMENT_OFFSET + 2L * (record - 1) * 4096;
    }

    void assertPrefix(WriteboostCache wb, int last) throws IOException {
        assertEquals(last, wb.recovered().lastRecordId(), wb.recovered().truncatedBy());
        assertEquals(last, wb.recovered().dirtyRecords());
        for (int i = 0; i < RECORDS; i++) {
            ByteBuffer b = ByteBuffer.allocate(4096);
            wb.read(i * 4096L, b);
            assertArrayEquals(i < last ? pattern(i) : new byte[4096], b.array(), "block " + i);
        }
    }

    @Test
    void anIntactLogIsRecoveredWholeReadingHeadersOnly() throws IOException {
        long before = cache.bytesRead.get();
        WriteboostCache wb = open();
        try {
            assertEquals(3 * 4096 + RECORDS * 4096 + 4096, cache.bytesRead.get() - before,
                    "superblock, two slots, 20 headers and the empty place after them");
            assertPrefix(wb, RECORDS);
        } finally {
            wb.close();
        }
    }

    @Test
    void aCorruptHeaderEndsTheLogThere() throws IOException {
        cache.corrupt(header(12) + 100);
        WriteboostCache wb = open();
        try {
            assertPrefix(wb, 11);
        } finally {
            wb.close();
        }
    }

    @Test
    void aTornTailRecordIsFoundByItsDataCrc() throws IOException {
        // record 20 was written after the last flush any later header attests: its data is checked
        // (as after a crash: no superblock record marks it durable)
        cache.corrupt(Layout.RECORD_SLOT_1 + 100);
        cache.corrupt(header(20) + 4096 + 7);
        WriteboostCache wb = open();
        try {
            assertPrefix(wb, 19);
            assertTrue(wb.recovered().truncatedBy().contains("data CRC"), wb.recovered().truncatedBy());
        } finally {
            wb.close();
        }
    }

    @Test
    void everyByteOfAHeaderFlippedIsDetected() throws IOException {
        long base = header(RECORDS);
        for (int i = 0; i < 4096; i++) {
            cache.corrupt(base + i);
            long written = cache.bytesWritten.get();
            WriteboostCache wb = open();
            try {
                assertEquals(RECORDS - 1, wb.recovered().lastRecordId(), "byte " + i + ": " + wb.recovered().truncatedBy());
            } finally {
                wb.close();
            }
            assertEquals(written, cache.bytesWritten.get(), "recovery and close wrote nothing");
            cache.corrupt(base + i);
        }
        WriteboostCache wb = open();
        try {
            assertPrefix(wb, RECORDS);
        } finally {
            wb.close();
        }
    }

    @Test
    void aStaleHeaderFromAnotherPassNeverLinks() throws IOException {
        // copy record 5's header over the free place after record 20: right CRC, wrong place and id
        byte[] img = cache.image();
        System.arraycopy(img, (int) header(5), img, (int) header(RECORDS + 1), 4096);
        WriteboostCache wb = open();
        try {
            assertPrefix(wb, RECORDS);
        } finally {
            wb.close();
        }
    }
}
