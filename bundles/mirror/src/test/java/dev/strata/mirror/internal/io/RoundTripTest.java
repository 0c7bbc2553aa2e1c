package dev.strata.mirror.internal.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.mirror.internal.Devices;
import dev.strata.mirror.internal.format.LogLayout;
import dev.strata.mirror.internal.log.DiskLog;
import dev.strata.testsupport.crash.CrashableDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The integrated flush: the log round trips per write and per flush, the figure issue 15 is about. */
class RoundTripTest {
    static final long REGION = 64 * 1024;
    final AtomicLong clock = new AtomicLong();
    final CrashableDevice logDisk = new CrashableDevice("log", 64 * 1024, 4096);
    final Devices.Counting log = new Devices.Counting(logDisk);
    final Devices.Counting a = new Devices.Counting(new CrashableDevice("a", 4 << 20, 4096));
    final Devices.Counting b = new Devices.Counting(new CrashableDevice("b", 4 << 20, 4096));
    final ExecutorService pool = Executors.newCachedThreadPool();
    MirrorTarget m;

    @AfterEach
    void close() throws IOException {
        pool.shutdownNow();
        if (m != null) {
            m.close();
        }
    }

    MirrorTarget open() throws IOException {
        m = MirrorTarget.open("m0", List.of("a", "b"), List.of(a, b), new DiskLog("log", log), REGION,
                MirrorTarget.Options.defaults().withManual(true).withNosync(true).withClock(clock::get));
        return m;
    }

    long rt() {
        return Long.parseLong(m.status().get("log_round_trips"));
    }

    long stat(String k) {
        return Long.parseLong(m.status().get(k));
    }

    void write(long offset) throws IOException {
        m.write(offset, ByteBuffer.wrap(new byte[4096]).put(0, (byte) (offset / 4096 + 1)), 0);
    }

    /** Whether the log device durably holds region {@code r} marked. */
    boolean markedOnDisk(int r) {
        byte[] img = logDisk.durableImage();
        return (img[(int) LogLayout.BITMAP_OFFSET + r / 8] & (1 << (r % 8))) != 0;
    }

    @Test
    void markIsDurableBeforeAnyLegIsWritten() throws IOException {
        open();
        List<String> violations = new ArrayList<>();
        Devices.IoHook check = offset -> {
            if (!markedOnDisk((int) (offset / REGION))) {
                violations.add("leg written at " + offset + " before its region's mark was durable");
            }
        };
        a.beforeWrite = check;
        b.beforeWrite = check;
        for (int i = 0; i < 20; i++) {
            write(i * 3 * REGION + 4096 * (i % 5));
        }
        assertEquals(List.of(), violations);
        assertEquals(40, a.writes.get() + b.writes.get());
    }

    @Test
    void oneRoundTripForNewMarksNoneForHotRegions() throws IOException {
        open();
        long base = rt();
        int logWrites = log.writes.get();
        write(0);
        assertEquals(base + 1, rt(), "a write into a new region: one round trip");
        assertEquals(logWrites + 1, log.writes.get(), "one log device write");
        for (int i = 1; i < 16; i++) {
            write(i * 4096); // all in region 0
        }
        assertEquals(base + 1, rt(), "writes into a hot region: no log I/O");
        assertEquals(logWrites + 1, log.writes.get());
        assertEquals(15, stat("writes_hot"));
        m.flush();
        assertEquals(base + 1, rt(), "a flush with only clears pending is delayed");
        assertEquals(1, stat("pending_clears"));
        write(8192);
        assertEquals(base + 1, rt(), "a write into a pending clear cancels it and stays free");
        assertEquals(0, stat("pending_clears"));
    }

    @Test
    void pendingMarksAndClearsShareOneRoundTrip() throws Exception {
        open();
        for (int r = 0; r < 4; r++) {
            write(r * REGION);
        }
        m.flush();
        assertEquals(4, stat("pending_clears"));
        long base = rt();
        // hold the first commit on the log device while seven more writers queue their marks
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        log.beforeWrite = offset -> {
            if (entered.getCount() > 0) {
                entered.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    throw new IOException(e);
                }
            }
        };
        List<Future<?>> writers = new ArrayList<>();
        writers.add(pool.submit(() -> {
            write(10 * REGION);
            return null;
        }));
        assertTrue(entered.await(30, TimeUnit.SECONDS));
        for (int r = 11; r < 18; r++) {
            long off = r * REGION;
            writers.add(pool.submit(() -> {
                write(off);
                return null;
            }));
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (stat("writes_marking") < 4 + 8 && System.nanoTime() < deadline) {
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000); // poll, bounded by the deadline
        }
        assertEquals(12, stat("writes_marking"));
        release.countDown();
        for (Future<?> f : writers) {
            f.get(30, TimeUnit.SECONDS);
        }
        assertEquals(base + 2, rt(), "the held commit, then one for the seven queued marks");
        assertEquals(4 + 2, stat("log_commits_with_marks"));
        assertEquals(4 + 8, stat("marks_committed"));
        assertEquals(4, stat("clears_committed"), "the clears rode on the first commit with marks");
        assertEquals(0, stat("log_commits_clear_only"));
        for (int r = 0; r < 4; r++) {
            assertTrue(!markedOnDisk(r));
        }
        for (int r = 10; r < 18; r++) {
            assertTrue(markedOnDisk(r));
        }
    }

    @Test
    void clearOnlyFlushWaitsForClearDelay() throws IOException {
        open();
        write(0);
        write(5 * REGION);
        m.flush();
        long base = rt();
        clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(2999));
        assertTrue(!m.clearerRunOnce());
        assertEquals(base, rt());
        clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(1));
        assertTrue(m.clearerRunOnce());
        assertEquals(base + 1, rt(), "one round trip for both clears");
        assertEquals(1, stat("log_commits_clear_only"));
        assertEquals(0, stat("dirty_regions"));
        assertTrue(!markedOnDisk(0) && !markedOnDisk(5));
    }

    @Test
    void aRegionWithAWriteInFlightAtTheFlushIsNotCleared() throws Exception {
        open();
        write(0);
        // the flush starts while a second write to region 0 is in flight on leg b
        CountDownLatch inFlight = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        b.beforeWrite = offset -> {
            inFlight.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                throw new IOException(e);
            }
        };
        Future<?> w = pool.submit(() -> {
            write(4096);
            return null;
        });
        assertTrue(inFlight.await(30, TimeUnit.SECONDS));
        b.beforeWrite = null;
        m.flush();
        assertEquals(0, stat("pending_clears"));
        release.countDown();
        w.get(30, TimeUnit.SECONDS);
        m.flush();
        assertEquals(1, stat("pending_clears"));
    }

    @Test
    void statusShowsTheRatios() throws IOException {
        open();
        write(0);
        write(4096);
        m.flush();
        Map<String, String> s = m.status();
        assertEquals("disk:log", s.get("log"));
        assertEquals("1", s.get("log_round_trips"), "formatting the log is not counted");
        assertEquals("0.500", s.get("log_round_trips_per_write"));
        assertEquals("1.000", s.get("log_round_trips_per_flush"));
        assertEquals("in_sync", s.get("leg.a"));
    }

    /** Small writes with a flush after every few: the integrated flush needs one round trip where the naive log needs three. */
    @Test
    void integratedFlushNeedsAThirdOfTheNaiveRoundTrips() throws IOException {
        long[] trips = new long[2];
        for (int mode = 0; mode < 2; mode++) {
            if (m != null) {
                m.close();
            }
            logDisk.write(0, ByteBuffer.allocate(8192), BlockDevice.FUA); // a new log each time
            open();
            m.message("integrated_flush", mode == 0 ? "true" : "false");
            long base = rt();
            for (int cycle = 0; cycle < 20; cycle++) {
                write(cycle * REGION);
                for (int i = 1; i < 4; i++) {
                    write(cycle * REGION + i * 4096);
                }
                m.flush();
            }
            trips[mode] = rt() - base;
        }
        assertEquals(20, trips[0], "integrated: one round trip per flush interval (the mark, carrying the last clears)");
        assertEquals(60, trips[1], "naive: a mark, a flush and a clear request per flush interval");
    }
}
