package dev.strata.testkit.fault;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceIOException;
import dev.strata.api.Target;
import dev.strata.api.TargetFactory;
import dev.strata.core.internal.linear.LinearTargetFactory;
import dev.strata.testkit.crash.DriverSubjects;
import dev.strata.testkit.internal.delay.DelayFactory;
import dev.strata.testkit.internal.error.ErrorFactory;
import dev.strata.testkit.internal.flakey.FlakeyFactory;
import dev.strata.testkit.internal.logwrites.LogWritesFactory;
import dev.strata.testkit.internal.spindle.SpindleFactory;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.crash.LogFormat;
import dev.strata.testsupport.target.SimpleTargetContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Faults injected below every target that exists: the errors reach the caller as
 * {@link DeviceIOException}s naming the failing device and the offset, and nothing hangs.
 */
class FaultInjectionTest {
    private static final Duration HANG = Duration.ofSeconds(60); // a hang detector, not a timing assertion

    private final CrashableDevice disk = new CrashableDevice("disk", 1 << 20, 4096);

    private static Target build(TargetFactory f, String name, String args, Object... lower) throws Exception {
        SimpleTargetContext ctx = SimpleTargetContext.of(name, args);
        for (int i = 0; i < lower.length; i += 2) {
            ctx.with((String) lower[i], (BlockDevice) lower[i + 1]);
        }
        return f.create(ctx);
    }

    /** Every kind of request through {@code top} fails naming {@code device} and the offset it reached there. */
    private static void everyRequestFails(BlockDevice top, String device, long shift) {
        assertTimeoutPreemptively(HANG, () -> {
            DeviceIOException e = assertThrows(DeviceIOException.class, () -> top.read(8192, ByteBuffer.allocate(4096)));
            assertEquals(device, e.device(), e.getMessage());
            assertEquals(8192 + shift, e.offset(), e.getMessage());
            assertTrue(e.getMessage().startsWith(device + " at offset " + (8192 + shift)), e.getMessage());
            assertEquals(4096 + shift, assertThrows(DeviceIOException.class, () -> top.write(4096, ByteBuffer.allocate(4096), 0)).offset());
            assertEquals(4096 + shift,
                    assertThrows(DeviceIOException.class, () -> top.write(4096, ByteBuffer.allocate(4096), BlockDevice.FUA)).offset());
            assertEquals(shift, assertThrows(DeviceIOException.class, () -> top.writeZeroes(0, 4096, 0)).offset());
            assertEquals(512 + shift, assertThrows(DeviceIOException.class, () -> top.discard(512, 512)).offset());
            assertEquals(device, assertThrows(DeviceIOException.class, top::flush).device());
        });
    }

    @Test
    void linearOverAFlakeyDeviceThatIsDown() throws Exception {
        Target flakey = build(new FlakeyFactory(), "fl0", "device=disk mode=error", "disk", disk);
        Target linear = build(new LinearTargetFactory(), "lin0", "device=fl0 offset=64k", "fl0", flakey);
        everyRequestFails(linear, "fl0", 65536);
    }

    @Test
    void linearOverFlakeyOverEachDriver(@TempDir Path dir) throws Exception {
        for (String type : List.of("file", "direct", "memory")) {
            String args = type.equals("memory") ? "size=1M" : "path=" + dir.resolve(type + ".img") + " size=1M create=true";
            Target driver = DriverSubjects.factory(type).create(SimpleTargetContext.of(type + "0", args));
            try {
                Target flakey = build(new FlakeyFactory(), "fl-" + type, "device=drv mode=error", "drv", driver);
                Target linear = build(new LinearTargetFactory(), "lin0", "device=fl offset=128k", "fl", flakey);
                everyRequestFails(linear, "fl-" + type, 131072);
                flakey.message("state", "up");
                byte[] data = new byte[4096];
                java.util.Arrays.fill(data, (byte) 3);
                linear.write(0, ByteBuffer.wrap(data), BlockDevice.FUA);
                ByteBuffer back = ByteBuffer.allocate(4096);
                driver.read(131072, back);
                assertArrayEquals(data, back.array(), type + ": data passes once flakey is up");
            } finally {
                driver.close();
            }
        }
    }

    @Test
    void linearOverTheErrorTarget() throws Exception {
        Target error = build(new ErrorFactory(), "err0", "size=1M");
        Target linear = build(new LinearTargetFactory(), "lin0", "device=err0 offset=4k", "err0", error);
        everyRequestFails(linear, "err0", 4096);
    }

    @Test
    void delaySpindleAndLogwritesOverFailingDevices() throws Exception {
        Target error = build(new ErrorFactory(), "err0", "size=1M block_size=4096");
        everyRequestFails(build(new DelayFactory(), "d0", "device=err0 read_ms=1 write_ms=1 flush_ms=1", "err0", error), "err0", 0);
        everyRequestFails(build(new SpindleFactory(), "s0", "device=err0 seek_ms=0.1 rpm=15000", "err0", error), "err0", 0);
        // logwrites over a device that fails: nothing is recorded for a failed request
        CrashableDevice log = new CrashableDevice("log", 1 << 20, 512);
        Target lw = build(new LogWritesFactory(), "lw0", "device=err0 log=log", "err0", error, "log", log);
        everyRequestFails(lw, "err0", 0);
        assertEquals(0, LogFormat.read(log, 0).entries().size());
    }

    @Test
    void aFailingLogDeviceFailsTheRequestNamingTheLogwritesDevice() throws Exception {
        Target badLog = build(new FlakeyFactory(), "logfl", "device=log mode=error_writes", "log", new CrashableDevice("log", 1 << 20, 512));
        badLog.message("state", "up");
        Target lw = build(new LogWritesFactory(), "lw0", "device=disk log=logfl", "disk", disk, "logfl", badLog);
        badLog.message("state", "down");
        DeviceIOException e = assertThrows(DeviceIOException.class, () -> lw.write(8192, ByteBuffer.allocate(4096), 0));
        assertEquals("lw0", e.device());
        assertEquals(8192, e.offset());
        assertTrue(e.getMessage().contains("log device failed"), e.getMessage());
    }

    @Test
    void corruptReadsBelowLinearAreVisibleAtTheRightByte() throws Exception {
        byte[] data = new byte[8192];
        java.util.Arrays.fill(data, (byte) 0x5A);
        disk.write(65536, ByteBuffer.wrap(data), 0);
        Target flakey = build(new FlakeyFactory(), "fl0", "device=disk mode=corrupt_reads corrupt_byte=9", "disk", disk);
        Target linear = build(new LinearTargetFactory(), "lin0", "device=fl0 offset=64k", "fl0", flakey);
        ByteBuffer got = ByteBuffer.allocate(8192);
        linear.read(0, got);
        byte[] expected = data.clone();
        expected[9] = (byte) ~0x5A;
        expected[4096 + 9] = (byte) ~0x5A;
        assertArrayEquals(expected, got.array());
    }

    @Test
    void droppedWritesBelowLinearAreAcknowledgedButLost() throws Exception {
        Target flakey = build(new FlakeyFactory(), "fl0", "device=disk mode=drop_writes", "disk", disk);
        Target linear = build(new LinearTargetFactory(), "lin0", "device=fl0", "fl0", flakey);
        byte[] data = new byte[4096];
        java.util.Arrays.fill(data, (byte) 1);
        linear.write(0, ByteBuffer.wrap(data), BlockDevice.FUA);
        linear.flush();
        ByteBuffer got = ByteBuffer.allocate(4096);
        linear.read(0, got);
        assertArrayEquals(new byte[4096], got.array());
    }

    /** Concurrent I/O while the device flips up and down on the real clock: every request ends, well or with a named error. */
    @Test
    void concurrentIoWhileFlappingNeverHangs() throws Exception {
        Target flakey = build(new FlakeyFactory(), "fl0", "device=disk up=2 down=2 mode=error", "disk", disk);
        Target linear = build(new LinearTargetFactory(), "lin0", "device=fl0", "fl0", flakey);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        AtomicInteger ok = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(4);
        try {
            List<Future<?>> futures = new java.util.ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    try {
                        for (int i = 0; i < 500; i++) {
                            long off = ((thread * 500L + i) % 256) * 4096;
                            try {
                                switch (i % 3) {
                                    case 0 -> linear.write(off, ByteBuffer.allocate(4096), 0);
                                    case 1 -> linear.read(off, ByteBuffer.allocate(4096));
                                    default -> linear.flush();
                                }
                                ok.incrementAndGet();
                            } catch (DeviceIOException e) {
                                if (!e.device().equals("fl0")) {
                                    throw new AssertionError("error names " + e.device(), e);
                                }
                                failed.incrementAndGet();
                            }
                        }
                    } catch (Exception e) {
                        throw new AssertionError(e);
                    } finally {
                        done.countDown();
                    }
                    return null;
                }));
            }
            assertTrue(done.await(60, TimeUnit.SECONDS), "I/O hung");
            for (Future<?> f : futures) {
                // each task counts down in its finally, before its future completes: a loaded 2-core
                // machine may run that last step seconds later, so the bound is generous (a hang is
                // what the 60 s await above already catches)
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(2000, ok.get() + failed.get());
        assertEquals(Long.toString(failed.get()), flakey.status().get("faults"));
    }
}
