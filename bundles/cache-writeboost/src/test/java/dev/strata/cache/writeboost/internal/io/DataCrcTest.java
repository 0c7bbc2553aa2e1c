package dev.strata.cache.writeboost.internal.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.cache.writeboost.internal.format.Crc;
import dev.strata.cache.writeboost.internal.format.Layout;
import dev.strata.cache.writeboost.internal.format.RecordHeader;
import dev.strata.cache.writeboost.internal.testing.MemDevice;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every record's data CRC on the cache device matches its data blocks as written, whichever way
 * a block got into its slot: a run of full blocks (whose CRC the writer takes after its copy),
 * a partial block merged with its cached copy, an overwrite of a block still in the open record
 * (full or partial: the slot changes after its writer took its CRC), an injected clean block.
 * The device is read back record by record and each data CRC recomputed from the bytes.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DataCrcTest {
    static final int MIB = 1 << 20;
    static final int BS = Layout.BLOCK;

    @Test
    void everyRecordsDataCrcMatchesItsDataWhateverWroteTheSlots() throws Exception {
        MemDevice backing = new MemDevice("backing", 64L * MIB);
        MemDevice cacheDev = new MemDevice("cache", 161L * MIB); // 160 segments: never full here
        Tunables t = Tunables.DEFAULTS.with(Tunables.SEQUENTIAL_CUTOFF, "0").with(Tunables.WRITEBACK_THRESHOLD, "0")
                .with(Tunables.READ_CACHE_THRESHOLD, "4");
        WriteboostCache wb = WriteboostCache.open("wb", backing, cacheDev, false, t,
                WriteboostCache.Options.defaults().manual(), null);
        SplittableRandom rnd = new SplittableRandom(5);
        ByteBuffer big = ByteBuffer.allocateDirect(64 * BS);
        ByteBuffer one = ByteBuffer.allocateDirect(BS);
        ByteBuffer sector = ByteBuffer.allocateDirect(512);
        ByteBuffer rd = ByteBuffer.allocateDirect(BS);
        long blocks = 4096; // 16 MiB of backing blocks: fewer than the cache holds
        int overwrites = 0;
        try {
            for (int i = 0; i < 1000; i++) {
                int kind = rnd.nextInt(5);
                if (kind == 0) {
                    // a run of full blocks, then the same blocks overwritten in the open record
                    int n = 1 + rnd.nextInt(64);
                    long b = rnd.nextLong(blocks - n);
                    random(big.clear().limit(n * BS), rnd);
                    wb.write(b * BS, big, 0);
                    if (rnd.nextBoolean()) {
                        random(one.clear(), rnd);
                        wb.write((b + rnd.nextInt(n)) * BS, one, 0);
                    } else {
                        random(sector.clear(), rnd);
                        wb.write((b + rnd.nextInt(n)) * BS + 512L * rnd.nextInt(8), sector, 0);
                    }
                    overwrites++;
                } else if (kind == 1) {
                    // a partial block, new or merged with a cached copy
                    random(sector.clear(), rnd);
                    wb.write(rnd.nextLong(blocks) * BS + 512L * rnd.nextInt(8), sector, 0);
                } else if (kind == 2) {
                    // a read miss staged for the injector (a clean block in the log)
                    wb.read((blocks + rnd.nextLong(blocks)) * BS, rd.clear());
                    wb.injectorRunOnce();
                } else {
                    int n = 1 + rnd.nextInt(64);
                    random(big.clear().limit(n * BS), rnd);
                    wb.write(rnd.nextLong(blocks - n) * BS, big, 0);
                }
                if (rnd.nextInt(50) == 0) {
                    wb.flush();
                }
            }
            wb.flush();
        } finally {
            wb.close();
        }
        assertTrue(overwrites > 50);
        int records = checkEveryRecord(cacheDev);
        assertTrue(records > 50, records + " records");
    }

    /**
     * A run whose copy failed (the seam throws before the copy) leaves its slots with whatever
     * they held; their CRCs must not be the ones an earlier writer of those slots took (the ring
     * of 4 buffers wraps every 4 segments, so every slot is reused many times).
     */
    @Test
    void aRunWhoseCopyFailedDoesNotKeepTheSlotsOldCrcs() throws Exception {
        MemDevice backing = new MemDevice("backing", 64L * MIB);
        MemDevice cacheDev = new MemDevice("cache", 161L * MIB);
        Tunables t = Tunables.DEFAULTS.with(Tunables.SEQUENTIAL_CUTOFF, "0").with(Tunables.WRITEBACK_THRESHOLD, "0");
        WriteboostCache wb = WriteboostCache.open("wb", backing, cacheDev, false, t,
                WriteboostCache.Options.defaults().manual(), null);
        SplittableRandom rnd = new SplittableRandom(9);
        ByteBuffer big = ByteBuffer.allocateDirect(32 * BS);
        int failed = 0;
        try {
            for (int i = 0; i < 600; i++) {
                boolean fail = i % 7 == 3;
                if (fail) {
                    wb.beforeCopy(() -> {
                        throw new IllegalStateException("copy refused by the test");
                    });
                }
                random(big.clear(), rnd);
                try {
                    wb.write(rnd.nextLong(8192 - 32) * BS, big, 0);
                } catch (IllegalStateException e) {
                    failed++;
                } finally {
                    wb.beforeCopy(null);
                }
            }
            wb.flush();
        } finally {
            wb.close();
        }
        assertTrue(failed > 50, failed + " failed copies");
        assertTrue(checkEveryRecord(cacheDev) > 50);
    }

    static void random(ByteBuffer b, SplittableRandom rnd) {
        for (int i = b.position(); i < b.limit(); i += 8) {
            b.putLong(i, rnd.nextLong());
        }
    }

    /** Reads every segment's records in order and checks each data CRC; returns how many had data. */
    static int checkEveryRecord(MemDevice cache) throws Exception {
        int checked = 0;
        ByteBuffer seg = ByteBuffer.allocate(Layout.SEGMENT_SIZE);
        for (long off = Layout.FIRST_SEGMENT_OFFSET; off + Layout.SEGMENT_SIZE <= cache.size(); off += Layout.SEGMENT_SIZE) {
            cache.read(off, seg.clear());
            for (int blk = 0; blk < Layout.SEGMENT_BLOCKS; ) {
                RecordHeader h = RecordHeader.decode(seg, blk * BS);
                if (h == null) {
                    break;
                }
                if (h.dataCount() > 0) {
                    assertEquals(h.dataCrc(), Crc.of(seg, (blk + 1) * BS, h.dataCount() * BS),
                            "data CRC of record " + h.recordId() + " at " + off + " block " + blk);
                    checked++;
                }
                blk = h.nextStart();
            }
        }
        return checked;
    }
}
