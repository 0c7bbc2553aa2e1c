package dev.strata.cache.writecache.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.cache.writecache.internal.recovery.Recovery;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.target.GatedDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Writeback never holds a lock that foreground I/O needs while it waits on the backing device
 * (issue 13): with a batch's backing writes held at a gate, foreground writes, FLUSH and FUA
 * complete; a write to a block under writeback is kept (cached, dirty, and what reads and a
 * restart see); a write-zeroes over a block under writeback waits for the batch, so the older
 * copy cannot land on the backing device after the zeroes.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class WritebackLockTest {
    static final int BS = 4096;
    static final int SLOTS = 64;
    final CrashableDevice backingDisk = new CrashableDevice("backing", 4 << 20, 4096);
    final CrashableDevice cacheDisk = new CrashableDevice("cache", WritecacheSubject.cacheBytes(SLOTS, BS), 4096);
    final GatedDevice backing = new GatedDevice(backingDisk);
    final ExecutorService pool = Executors.newCachedThreadPool();

    final List<WritecacheTarget> opened = new ArrayList<>();

    /** The gate opens before the targets close: a failed test must not leave a batch (and close) hanging. */
    @AfterEach
    void end() throws IOException {
        backing.release();
        try {
            for (WritecacheTarget t : opened) {
                t.close();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    WritecacheTarget open() throws IOException {
        WritecacheTarget t = Recovery.open("wc", backing, cacheDisk, "id-1", 0, false, Tunables.DEFAULTS,
                Options.defaults().manual());
        opened.add(t);
        return t;
    }

    static ByteBuffer data(int seed) {
        byte[] b = new byte[BS];
        new Random(seed).nextBytes(b);
        return ByteBuffer.wrap(b);
    }

    static byte[] read(BlockDevice d, long block) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(BS);
        d.read(block * BS, b);
        return b.array();
    }

    static long stat(WritecacheTarget t, String key) {
        return Long.parseLong(t.status().get(key));
    }

    static void await(BooleanSupplier c, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!c.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting for " + what);
            Thread.yield();
        }
    }

    /** Blocks 0, 2, 4, … 14: eight runs, committed, then a batch of them held at the gate. */
    Future<Integer> heldBatch(WritecacheTarget t) throws Exception {
        for (int i = 0; i < 8; i++) {
            t.write(2L * i * BS, data(i), 0);
        }
        t.flush();
        backing.hold();
        Future<Integer> wb = pool.submit(() -> t.writebackOldest(8));
        await(() -> backing.waiting() > 0, "the batch's first backing write at the gate");
        return wb;
    }

    @Test
    void foregroundFlushAndFuaCompleteWhileABatchWaitsOnTheBackingDevice() throws Exception {
        {
            WritecacheTarget t = open();
            Future<Integer> wb = heldBatch(t);
            // with the committer's lock held across the batch's backing I/O, these hung here
            Future<?> fg = pool.submit(() -> {
                t.write(40L * BS, data(40), 0);
                t.flush();
                t.write(41L * BS, data(41), BlockDevice.FUA);
                return null;
            });
            fg.get(30, TimeUnit.SECONDS); // a deadline, not a timing: it hung for good before
            assertFalse(wb.isDone(), "the batch ended while its backing writes were held");
            backing.release();
            assertEquals(8, wb.get(60, TimeUnit.SECONDS));
            assertArrayEquals(data(40).array(), read(t, 40));
            assertArrayEquals(data(41).array(), read(t, 41));
            for (int i = 0; i < 8; i++) {
                assertArrayEquals(data(i).array(), read(backingDisk, 2L * i), "written back block " + 2 * i);
            }
            assertEquals(2, t.cachedBlocks(), "the batch's blocks left the cache, the new ones stayed");
        }
    }

    @Test
    void aWriteToABlockUnderWritebackIsKeptAndItsOldSlotIsFreedOnlyAfterTheBatch() throws Exception {
        {
            WritecacheTarget t = open();
            Future<Integer> wb = heldBatch(t);
            Future<?> fg = pool.submit(() -> {
                t.write(4L * BS, data(104), 0); // block 4 is in the held batch: a new slot
                t.flush(); // the commit forgets block 4's old slot, but must not free it yet
                for (int i = 0; i < 20; i++) {
                    t.write((100L + i) * BS, data(1000 + i), 0);
                }
                t.flush();
                return null;
            });
            fg.get(30, TimeUnit.SECONDS); // a deadline, not a timing: it hung for good before
            assertEquals(SLOTS - 8 - 1 - 20, stat(t, "free_blocks"),
                    "a slot of the batch was released for reuse while the batch still writes it back");
            backing.release();
            assertEquals(8, wb.get(60, TimeUnit.SECONDS));
            // the seven written back and block 4's old slot are free; the new copy and the 20 stay
            assertEquals(SLOTS - 1 - 20, stat(t, "free_blocks"));
            // the batch wrote block 4's old copy; the new one stays cached and dirty
            assertArrayEquals(data(2).array(), read(backingDisk, 4), "what the batch wrote back for block 4");
            assertArrayEquals(data(104).array(), read(t, 4));
            for (int i = 0; i < 8; i++) {
                if (i != 2) {
                    assertArrayEquals(data(i).array(), read(backingDisk, 2L * i), "written back block " + 2 * i);
                }
            }
        }
        opened.remove(0).close();
        {
            WritecacheTarget again = open();
            assertArrayEquals(data(104).array(), read(again, 4), "the newer copy after a restart");
            for (int i = 0; i < 20; i++) {
                assertArrayEquals(data(1000 + i).array(), read(again, 100L + i), "block " + (100 + i));
            }
            again.writebackAll((d, w) -> { });
            assertArrayEquals(data(104).array(), read(backingDisk, 4));
        }
    }

    @Test
    void writeZeroesOverABlockUnderWritebackLandsAfterTheBatch() throws Exception {
        {
            WritecacheTarget t = open();
            Future<Integer> wb = heldBatch(t);
            AtomicReference<Thread> zeroer = new AtomicReference<>();
            Future<?> zero = pool.submit(() -> {
                zeroer.set(Thread.currentThread());
                t.writeZeroes(6L * BS, BS, 0); // block 6 is in the held batch
                return null;
            });
            // it waits for the batch (or, were it not to, it has already zeroed the backing device)
            await(() -> zero.isDone() || (zeroer.get() != null && zeroer.get().getState() == Thread.State.WAITING),
                    "the write-zeroes to wait for the batch");
            backing.release();
            assertEquals(8, wb.get(60, TimeUnit.SECONDS));
            zero.get(60, TimeUnit.SECONDS);
            assertArrayEquals(new byte[BS], read(t, 6));
            assertArrayEquals(new byte[BS], read(backingDisk, 6), "the batch's older copy landed after the zeroes");
        }
    }
}
