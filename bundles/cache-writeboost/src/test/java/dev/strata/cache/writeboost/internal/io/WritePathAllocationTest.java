package dev.strata.cache.writeboost.internal.io;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.cache.writeboost.internal.testing.MemDevice;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The 4 KiB write path allocates nothing per request: a cached write copies the caller's
 * buffer into the log buffer and updates preallocated index arrays, so the writing thread's
 * allocated bytes (com.sun.management.ThreadMXBean) over many writes stay below one small
 * object per write. A count, not a time: a per-request buffer, view or boxed key in the path
 * makes it fail.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class WritePathAllocationTest {
    static final int MIB = 1 << 20;
    /** Less than one ByteBuffer view (about 48-64 bytes) per write, averaged. */
    static final double MAX_BYTES_PER_WRITE = 16;
    /** The log's per-segment objects (see below) and less than one ByteBuffer view more. */
    static final double MAX_BYTES_PER_HALF_MIB_WRITE = 96;

    @Test
    void cachedFourKiBWritesAllocateNothingPerRequest() throws Exception {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        MemDevice backing = new MemDevice("backing", 256L * MIB);
        MemDevice cacheDev = new MemDevice("cache", 96L * MIB);
        Tunables t = Tunables.DEFAULTS.with(Tunables.SEQUENTIAL_CUTOFF, "0").with(Tunables.WRITEBACK_THRESHOLD, "0");
        WriteboostCache wb = WriteboostCache.open("wb", backing, cacheDev, false, t,
                WriteboostCache.Options.defaults(), null);
        try {
            ByteBuffer data = ByteBuffer.allocateDirect(4096);
            SplittableRandom rnd = new SplittableRandom(7);
            long blocks = 256L * MIB / 4096;
            // warm-up: the JIT compiles the path (the interpreter's own allocations do not count)
            for (int i = 0; i < 6000; i++) {
                wb.write(rnd.nextLong(blocks) * 4096, data.clear(), 0);
            }
            int n = 8000;
            long tid = Thread.currentThread().getId();
            long before = mx.getThreadAllocatedBytes(tid);
            for (int i = 0; i < n; i++) {
                wb.write(rnd.nextLong(blocks) * 4096, data.clear(), 0);
            }
            long allocated = mx.getThreadAllocatedBytes(tid) - before;
            double perWrite = (double) allocated / n;
            assertTrue(perWrite < MAX_BYTES_PER_WRITE,
                    "the write path allocated " + allocated + " bytes over " + n + " 4 KiB writes (" + perWrite + " per write)");
        } finally {
            wb.close();
        }
    }

    /**
     * The same for 512 KiB writes (a run of 128 full blocks: one copy, the blocks' CRCs taken by
     * the writer after it, 128 index updates): nothing per block or per request either. What
     * is allocated is the log's per-segment bookkeeping (a sealed record and a segment-end marker
     * per MiB: about 55 bytes per 512 KiB write, measured on main before the per-block CRCs);
     * a view per request would add about 50 bytes more, a view per block over 6 KiB.
     */
    @Test
    void cachedHalfMiBWritesAllocateNothingPerRequest() throws Exception {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        MemDevice backing = new MemDevice("backing", 256L * MIB);
        MemDevice cacheDev = new MemDevice("cache", 449L * MIB); // room for every write below: no wait for writeback
        Tunables t = Tunables.DEFAULTS.with(Tunables.SEQUENTIAL_CUTOFF, "0").with(Tunables.WRITEBACK_THRESHOLD, "0");
        WriteboostCache wb = WriteboostCache.open("wb", backing, cacheDev, false, t,
                WriteboostCache.Options.defaults(), null);
        try {
            ByteBuffer data = ByteBuffer.allocateDirect(512 * 1024);
            SplittableRandom rnd = new SplittableRandom(7);
            long slots = 256L * MIB / data.capacity();
            for (int i = 0; i < 400; i++) {
                wb.write(rnd.nextLong(slots) * data.capacity(), data.clear(), 0);
            }
            int n = 400;
            long tid = Thread.currentThread().getId();
            long before = mx.getThreadAllocatedBytes(tid);
            for (int i = 0; i < n; i++) {
                wb.write(rnd.nextLong(slots) * data.capacity(), data.clear(), 0);
            }
            long allocated = mx.getThreadAllocatedBytes(tid) - before;
            double perWrite = (double) allocated / n;
            assertTrue(perWrite < MAX_BYTES_PER_HALF_MIB_WRITE,
                    "the write path allocated " + allocated + " bytes over " + n + " 512 KiB writes (" + perWrite + " per write)");
        } finally {
            wb.close();
        }
    }
}
