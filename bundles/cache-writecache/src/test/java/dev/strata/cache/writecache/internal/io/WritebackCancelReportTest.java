package dev.strata.cache.writecache.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.cache.writecache.internal.recovery.Recovery;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.target.GatedDevice;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A Ctrl-C during a writeback batch's backing I/O ({@code cache:writeback}): the batch is
 * abandoned (its blocks stay dirty) and the last progress report counts only the batches that
 * completed — written and flushed — with the dirty count of the same moment. It had reported
 * nothing after the cancel, so the command's report took other figures (the dirty count's fall
 * since the start, which counted the background daemon's writeback too).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class WritebackCancelReportTest {
    static final int BS = 4096;
    static final int SLOTS = 64;
    static final int BLOCKS = 16;

    static ByteBuffer data(int seed) {
        byte[] b = new byte[BS];
        new Random(seed).nextBytes(b);
        return ByteBuffer.wrap(b);
    }

    static void await(BooleanSupplier c, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!c.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting for " + what);
            Thread.yield();
        }
    }

    @Test
    void aCancelDuringABatchReportsOnlyTheCompletedBatches() throws Exception {
        CrashableDevice backingDisk = new CrashableDevice("backing", 4 << 20, BS);
        CrashableDevice cache = new CrashableDevice("cache", WritecacheSubject.cacheBytes(SLOTS, BS), BS);
        GatedDevice backing = new GatedDevice(backingDisk);
        // batches of 8 non-adjacent blocks: 8 backing writes, more than the 4 the batcher keeps in
        // flight, so the writeback's own thread waits for a free one (where Ctrl-C reaches it)
        WritecacheTarget t = Recovery.open("wc", backing, cache, "id-1", 0, false,
                Tunables.DEFAULTS.with(Tunables.WRITEBACK_BATCH, "8"), Options.defaults().manual());
        try {
            for (int i = 0; i < BLOCKS; i++) {
                t.write(2L * i * BS, data(i), 0);
            }
            t.flush();
            // the first batch (blocks 0 to 14) goes through; the second one's writes are held
            backing.hold((offset, length) -> offset >= 16L * BS);
            AtomicLongArray last = new AtomicLongArray(new long[] {-1, -1});
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            Thread wb = new Thread(() -> {
                try {
                    t.writebackAll((dirty, done) -> {
                        last.set(0, dirty);
                        last.set(1, done);
                    });
                } catch (Throwable e) {
                    thrown.set(e);
                }
            }, "cache-writeback");
            wb.start();
            await(() -> backing.waiting() == 4, "the second batch's writes in flight at the gate");
            wb.interrupt(); // Ctrl-C
            backing.release(); // a slow device, not a dead one: the writes in flight end
            wb.join(TimeUnit.SECONDS.toMillis(60));
            assertTrue(!wb.isAlive(), "writebackAll returned after the interrupt");
            Throwable e = thrown.get();
            assertTrue(e instanceof InterruptedException || e instanceof InterruptedIOException,
                    "cancelled, not failed: " + e);
            assertEquals(8, t.dirtyBlocks(), "the abandoned batch marked blocks clean");
            assertEquals(8, last.get(0), "the last report's dirty count is not the one after the cancel");
            assertEquals(8, last.get(1), "the last report's written back is not the completed batch");
            assertEquals(0, Long.parseLong(t.status().get("under_writeback")));
            for (int i = 0; i < 8; i++) {
                assertArrayEquals(data(i).array(), read(backingDisk, 2L * i), "written back block " + 2 * i);
            }
        } finally {
            backing.release();
            t.close();
        }
    }

    static byte[] read(CrashableDevice d, long block) throws java.io.IOException {
        ByteBuffer b = ByteBuffer.allocate(BS);
        d.read(block * BS, b);
        return b.array();
    }
}
