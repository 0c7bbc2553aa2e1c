package dev.strata.cache.readcache.internal.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.testsupport.crash.CrashableDevice;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

/**
 * Promotions racing writes of the same blocks: readers promote while a writer overwrites. A read
 * returns a version at least the last one completed before it began and at most the last one
 * begun; after the run every block reads its last version (an installed older copy would show).
 * Also with cache blocks of 16 KiB under 4 KiB requests: a miss then fills the whole cache block
 * from the origin, and a write to another 4 KiB of it must keep the older fill from installing.
 */
class PromotionRaceTest {
    static final int BS = 4096;
    static final int BLOCKS = 8;

    @Test
    void promotionsNeverInstallOlderData() throws Exception {
        race(Opener.open("rc", new CrashableDevice("o", 1 << 20, BS), new CrashableDevice("c", 8192 + 64 * BS, BS),
                ReadCacheTest.lru()));
    }

    @Test
    void fillsOfLargerCacheBlocksNeverInstallOlderData() throws Exception {
        race(Opener.open("rc", new CrashableDevice("o", 1 << 20, BS), new CrashableDevice("c", 1 << 20, BS),
                Opener.withBlockSize(ReadCacheTest.lru(), 4 * BS)));
    }

    /**
     * readahead=16K: two readers read only the first block of each 16 KiB extent, so its other
     * blocks are mostly cached by readahead (claimed before the extent is read from the origin,
     * while the writer overwrites them); the third reads every block and would see an older copy
     * installed by a readahead as a hit, as would the final reads.
     */
    @Test
    void readaheadNeverInstallsOlderData() throws Exception {
        ReadCache rc = Opener.open("rc", new CrashableDevice("o", 1 << 20, BS), new CrashableDevice("c", 8192 + 64 * BS, BS),
                Opener.withReadahead(ReadCacheTest.lru(), "16K"));
        race(rc, 4);
    }

    private static void race(ReadCache rc) throws Exception {
        race(rc, 1);
    }

    private static void race(ReadCache rc, int stride) throws Exception {
        AtomicIntegerArray begun = new AtomicIntegerArray(BLOCKS);
        AtomicIntegerArray done = new AtomicIntegerArray(BLOCKS);
        ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
        Thread writer = new Thread(() -> {
            try {
                for (int v = 1; v <= 4000 && errors.isEmpty(); v++) {
                    int b = v % BLOCKS;
                    int version = v;
                    begun.set(b, version);
                    ByteBuffer buf = ByteBuffer.allocate(BS);
                    buf.putInt(0, version);
                    rc.write((long) b * BS, buf, 0);
                    done.set(b, version);
                    if (v % 97 == 0) {
                        rc.flush();
                    }
                }
            } catch (Exception e) {
                errors.add("writer: " + e);
            }
        });
        List<Thread> readers = new ArrayList<>();
        for (int t = 0; t < 3; t++) {
            // with a stride, the last reader still reads every block: it sees a readahead's copy as a hit
            int step = t == 2 ? 1 : stride;
            readers.add(new Thread(() -> {
                ByteBuffer buf = ByteBuffer.allocate(BS);
                while (writer.isAlive() && errors.isEmpty()) {
                    for (int b = 0; b < BLOCKS; b += step) {
                        int low = done.get(b);
                        buf.clear();
                        try {
                            rc.read((long) b * BS, buf);
                        } catch (Exception e) {
                            errors.add("reader: " + e);
                            return;
                        }
                        int got = buf.getInt(0);
                        int high = begun.get(b);
                        if (got < low || got > high) {
                            errors.add("block " + b + " read version " + got + " outside [" + low + ", " + high + "]");
                        }
                    }
                }
            }));
        }
        writer.start();
        readers.forEach(Thread::start);
        writer.join();
        for (Thread r : readers) {
            r.join();
        }
        assertTrue(errors.isEmpty(), errors.toString());
        for (int b = 0; b < BLOCKS; b++) {
            ByteBuffer buf = ByteBuffer.allocate(BS);
            rc.read((long) b * BS, buf);
            assertEquals(done.get(b), buf.getInt(0), "block " + b);
        }
        assertTrue(ReadCacheTest.stat(rc, "promotions") > 0);
        if (stride > 1) {
            assertTrue(ReadCacheTest.stat(rc, "readahead_blocks") > 0, rc.status().toString());
        }
        rc.close();
    }
}
