package dev.strata.cache.writecache.internal.io;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.cache.writecache.internal.recovery.Recovery;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A 4 KiB write and a 4 KiB read hit allocate nothing once warm: the in-flight registry reuses
 * its entries (no FutureTask, lambda or record per write), a write's pieces and a read's pieces
 * are kept in reused primitive arrays, and the caller's buffer is passed down instead of a
 * slice of it. Counted on the calling thread (com.sun.management.ThreadMXBean), not timed: one
 * small object per request is 16 bytes or more, over the bound.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RequestAllocationTest {
    static final int BS = 4096;
    static final int SLOTS = 2048;
    static final int BLOCKS = 64;
    static final int ROUNDS = 200;
    /** A few bytes per request amortised: any per-request object is 16 bytes or more. */
    static final double MAX_BYTES_PER_REQUEST = 4;

    @Test
    void writesAndReadHitsAllocateNothingPerRequest() throws Exception {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        WritebackAllocationTest.Ram backing = new WritebackAllocationTest.Ram(64L << 20);
        WritebackAllocationTest.Ram cache = new WritebackAllocationTest.Ram(WritecacheSubject.cacheBytes(SLOTS, BS));
        try (WritecacheTarget t = Recovery.open("wc", backing, cache, null, 0, false, Tunables.DEFAULTS,
                Options.defaults().manual())) {
            ByteBuffer data = ByteBuffer.allocate(BS);
            ByteBuffer got = ByteBuffer.allocate(BS);
            long tid = Thread.currentThread().getId();
            long writeBytes = 0;
            long readBytes = 0;
            long requests = 0;
            for (int round = 0; round < ROUNDS; round++) {
                boolean warm = round >= ROUNDS / 2; // the JIT has compiled the path, the scratch arrays have grown
                for (int b = 0; b < BLOCKS; b++) {
                    data.clear();
                    data.putInt(0, round).putInt(4, b);
                    long before = mx.getThreadAllocatedBytes(tid);
                    t.write((long) b * BS, data, 0);
                    long between = mx.getThreadAllocatedBytes(tid);
                    t.read((long) b * BS, got.clear());
                    long after = mx.getThreadAllocatedBytes(tid);
                    assertArrayEquals(data.array(), got.array(), "block " + b + " round " + round);
                    if (warm) {
                        writeBytes += between - before;
                        readBytes += after - between;
                        requests++;
                    }
                }
            }
            double perWrite = (double) writeBytes / requests;
            double perRead = (double) readBytes / requests;
            String writes = "4 KiB writes allocated " + writeBytes + " bytes for " + requests + " (" + perWrite + " per write)";
            String reads = "4 KiB read hits allocated " + readBytes + " bytes for " + requests + " (" + perRead + " per read)";
            assertAll(() -> assertTrue(perWrite < MAX_BYTES_PER_REQUEST, writes),
                    () -> assertTrue(perRead < MAX_BYTES_PER_REQUEST, reads));
            assertTrue(t.status().get("read_hits").equals(Long.toString(requests * 2)), t.status().get("read_hits"));
        }
    }

    /**
     * Writes that take a new slot (a committed block's newer copy, an uncached block) allocate
     * nothing either: the commits between them are not counted, only the writes.
     */
    @Test
    void writesToNewSlotsAllocateNothingPerRequest() throws Exception {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        WritebackAllocationTest.Ram backing = new WritebackAllocationTest.Ram(64L << 20);
        WritebackAllocationTest.Ram cache = new WritebackAllocationTest.Ram(WritecacheSubject.cacheBytes(SLOTS, BS));
        try (WritecacheTarget t = Recovery.open("wc", backing, cache, null, 0, false, Tunables.DEFAULTS,
                Options.defaults().manual())) {
            ByteBuffer data = ByteBuffer.allocate(BS);
            long tid = Thread.currentThread().getId();
            long bytes = 0;
            long requests = 0;
            int distinct = 512;
            for (int round = 0; round < ROUNDS; round++) {
                for (int i = 0; i < BLOCKS; i++) {
                    long b = (long) round * BLOCKS + i; // each block once per distinct/BLOCKS rounds
                    long before = mx.getThreadAllocatedBytes(tid);
                    t.write((b % distinct) * BS, data.clear(), 0);
                    long after = mx.getThreadAllocatedBytes(tid);
                    if (round >= ROUNDS / 2) {
                        bytes += after - before;
                        requests++;
                    }
                }
                t.flush();
            }
            double perWrite = (double) bytes / requests;
            assertTrue(perWrite < MAX_BYTES_PER_REQUEST,
                    "4 KiB writes to new slots allocated " + bytes + " bytes for " + requests + " (" + perWrite + " per write)");
            assertTrue(Long.parseLong(t.status().get("write_hits_committed")) >= requests,
                    "the writes took new slots for committed blocks: " + t.status().get("write_hits_committed"));
        }
    }
}
