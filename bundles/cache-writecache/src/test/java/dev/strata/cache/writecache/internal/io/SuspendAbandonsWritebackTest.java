package dev.strata.cache.writecache.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.cache.writecache.internal.recovery.Recovery;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.target.GatedDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
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
 * A suspend (cache:replace's pause, cache:switch, detach) stops the background daemon while it
 * writes back to a slow backing device: the batch in flight is abandoned at once — no further
 * backing write, no backing flush, nothing marked clean — instead of the stop waiting (up to 30 s)
 * for the writeback down to the low watermark. Only the writes already issued are waited for (an
 * older copy landing on the backing device after the next owner's write would be a stale block).
 * The abandoned blocks stay dirty and are written back after the resume.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SuspendAbandonsWritebackTest {
    static final int BS = 4096;
    static final int SLOTS = 64;
    static final int BLOCKS = 16;
    final CrashableDevice backingDisk = new CrashableDevice("backing", 4 << 20, 4096);
    final CrashableDevice cacheDisk = new CrashableDevice("cache", WritecacheSubject.cacheBytes(SLOTS, BS), 4096);
    final GatedDevice backing = new GatedDevice(backingDisk);
    final ExecutorService pool = Executors.newCachedThreadPool();
    WritecacheTarget target;

    @AfterEach
    void end() throws IOException {
        backing.release();
        try {
            if (target != null) {
                target.close();
            }
        } finally {
            pool.shutdownNow();
        }
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

    /** Blocks of the batch whose data reached the backing device. */
    int onBacking() throws IOException {
        int n = 0;
        for (int i = 0; i < BLOCKS; i++) {
            if (Arrays.equals(data(i).array(), read(backingDisk, 2L * i))) {
                n++;
            }
        }
        return n;
    }

    @Test
    void aSuspendAbandonsTheBatchInFlightAndItsBlocksStayDirty() throws Exception {
        // the daemon runs; writeback starts at 10 % in use and goes down to 0; only the test's
        // FLUSH commits (no autocommit), so the daemon's batch is all 16 blocks
        Tunables tun = Tunables.DEFAULTS.with(Tunables.LOW_WATERMARK, "0").with(Tunables.HIGH_WATERMARK, "10")
                .with(Tunables.AUTOCOMMIT_TIME, "0").with(Tunables.AUTOCOMMIT_BLOCKS, "100000")
                .with(Tunables.PAUSE_WRITEBACK, "0");
        target = Recovery.open("wc", backing, cacheDisk, "id-1", 0, false, tun, Options.defaults());
        WritecacheTarget t = target;
        backing.hold();
        for (int i = 0; i < BLOCKS; i++) {
            t.write(2L * i * BS, data(i), 0); // not adjacent: one backing write per block
        }
        t.flush();
        // the batcher's four writes in flight wait at the gate: the slow backing device
        await(() -> backing.waiting() == 4, "the daemon's batch at the backing device");
        AtomicReference<Thread> suspender = new AtomicReference<>();
        Future<?> suspend = pool.submit(() -> {
            suspender.set(Thread.currentThread());
            t.suspend();
            return null;
        });
        // the suspend has asked the daemon to stop and waits for its thread (Daemon.stop's join)
        await(() -> suspend.isDone()
                || (suspender.get() != null && suspender.get().getState() == Thread.State.TIMED_WAITING),
                "the suspend to wait for the daemon");
        backing.release(); // the writes already issued end; nothing more may be issued
        suspend.get(60, TimeUnit.SECONDS);

        // the writes in flight are interrupted (they may have passed the gate first): none issued after
        assertTrue(onBacking() <= 4, "the suspend let the batch go on writing back after the writes in flight");
        assertEquals(BLOCKS, t.cachedBlocks(), "an abandoned batch marked blocks clean");
        assertEquals(0, stat(t, "written_back_blocks"));
        assertEquals(0, stat(t, "under_writeback"), "the abandoned batch's slots are still marked");
        assertEquals(SLOTS - BLOCKS, stat(t, "free_blocks"), "a slot of the abandoned batch was freed or lost");
        assertEquals(0, stat(t, "writeback_error"), "an abandoned batch is not a writeback error");

        // after the resume the daemon writes them all back (the abandoned ones included)
        t.resume();
        await(() -> t.cachedBlocks() == 0, "the writeback after the resume");
        for (int i = 0; i < BLOCKS; i++) {
            assertArrayEquals(data(i).array(), read(backingDisk, 2L * i), "block " + 2 * i);
            assertArrayEquals(data(i).array(), read(t, 2L * i), "block " + 2 * i + " through the cache");
        }
    }
}
